"""`Config`, `@autotune` and `@heuristics`, with Triton's semantics.

The first launch for a new value of the tuning key (the `key` arguments'
values plus the dtypes of the arguments that have one) prunes the configs
(`early_config_prune`, then `perf_model` + `top_k`), compiles every config
left at once (runtime/driver.Launcher.precompile: one batch on the Rust
compile pool; a config's pre_hook runs first on copies of host
TensorDescriptor arguments, whose block shape it may set), times them one
by one (runtime/tuning.py: Triton's `do_bench` per config when `do_bench`, `warmup`, `rep` or `use_cuda_graph` are given,
else a two-round race), and launches the fastest; later launches with that
key reuse the choice. Around every timed call `reset_to_zero` arguments are
zeroed and `restore_value` arguments put back, so a kernel that accumulates
is measured correctly and leaves correct results. Configs that fail to
compile or exceed the device's resources are skipped with one warning per
tuning run. `cache_results=True` (or TRITIUM_CACHE_AUTOTUNING=1) keeps the
choice in the cache stack (disk, and the remote cache when one is set), so
the next process, or another machine, does not tune again.

Under the interpreter a config is timed by the wall clock (there is no
device), which exercises the same path on the CPU."""
from __future__ import annotations

import copy
import time
import warnings
from typing import Any, Callable

from .. import _core
from ..language.errors import CompilationError
from ..language.signature import is_tensor_descriptor
from ..settings import interpret_requested
from . import bench, cache, driver, tuning
from .compiled import current_target, warmup_many
from .errors import AutotunerError, OutOfResources, PTXASError
from .jit import KernelInterface
from .launcher import launcher_for

# failures that make a config unusable rather than the kernel wrong: skipped
SKIPPED_ERRORS = (OutOfResources, PTXASError, CompilationError, _core.CodegenError, _core.IRVerifyError)


class Config:
    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable | None = None, ir_override: str | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override

    def all_kwargs(self) -> dict[str, Any]:
        opts = {"num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": self.num_ctas}
        if self.maxnreg is not None:
            opts["maxnreg"] = self.maxnreg
        return {**self.kwargs, **opts}

    def __repr__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}", f"num_ctas: {self.num_ctas}"]
        if self.maxnreg is not None:
            parts.append(f"maxnreg: {self.maxnreg}")
        return ", ".join(parts)


def _base_jit(fn: Any):
    while not hasattr(fn, "bind_call"):
        fn = fn.fn
    return fn


# the tensor operations the hooks need, for torch tensors and NumPy arrays
def _zero(x: Any) -> None:
    if hasattr(x, "zero_"):
        x.zero_()
    else:
        x[...] = 0


def _clone(x: Any) -> Any:
    return x.clone() if hasattr(x, "clone") else x.copy()


def _copy_into(dst: Any, src: Any) -> None:
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


class Autotuner(KernelInterface):
    def __init__(self, fn: Any, arg_names: list[str], configs: list[Config], key: list[str],
                 reset_to_zero: list[str] | None = None, restore_value: list[str] | None = None,
                 pre_hook: Callable | None = None, post_hook: Callable | None = None,
                 prune_configs_by: dict | None = None, warmup: float | None = None, rep: float | None = None,
                 use_cuda_graph: bool = False, do_bench: Callable | None = None, cache_results: bool = False):
        self.fn = fn
        self.base_fn = _base_jit(fn)
        self.arg_names = list(arg_names)
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.cache: dict[tuple, Config] = {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        # (key names that are not parameters are ignored, as Triton ignores them)
        for name in self.reset_to_zero + self.restore_value:
            if name not in self.arg_names:
                raise ValueError(f"autotune: '{self.base_fn.__name__}' has no parameter '{name}'")
        self.user_pre_hook, self.user_post_hook = pre_hook, post_hook
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.num_warmups, self.num_reps, self.use_cuda_graph = warmup, rep, use_cuda_graph
        self._do_bench = do_bench
        self.cache_results = cache_results
        self.restore_copies: dict[str, Any] = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, list[float]] | None = None
        self.bench_time = 0.0
        self.nargs: dict[str, Any] | None = None
        self.__name__ = getattr(fn, "__name__", "kernel")

    # -- hooks around each timed call ------------------------------------
    def pre_hook(self, nargs: dict[str, Any], reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            if nargs.get(name) is not None:
                _zero(nargs[name])
        if reset_only:
            return
        self.restore_copies = {n: _clone(nargs[n]) for n in self.restore_value if nargs.get(n) is not None}
        if self.user_pre_hook is not None:
            self.user_pre_hook(nargs)

    def post_hook(self, nargs: dict[str, Any], exception: BaseException | None) -> None:
        for name, saved in self.restore_copies.items():
            _copy_into(nargs[name], saved)
        self.restore_copies = {}
        if self.user_post_hook is not None:
            self.user_post_hook(nargs, exception)

    # -- pruning ---------------------------------------------------------
    def prune_configs(self, kwargs: dict[str, Any], nargs: dict[str, Any] | None = None) -> list[Config]:
        nargs = self.nargs if nargs is None else nargs
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise AutotunerError("no configs left after pruning: early_config_prune must return at least one")
        if self.perf_model is not None:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            elif isinstance(top_k, bool) or not isinstance(top_k, int):
                raise TypeError(f"prune_configs_by['top_k'] must be an int or a float <= 1.0, got {top_k!r}")
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=lambda c: est[c])[:top_k]
        return configs

    # -- launching -------------------------------------------------------
    def tuning_key(self, nargs: dict[str, Any], kwargs: dict[str, Any]) -> tuple:
        args = {k: v for k, v in {**nargs, **kwargs}.items() if k in self.arg_names}
        key = [args[k] for k in self.keys if k in args]
        key += [str(v.dtype) for v in args.values() if hasattr(v, "dtype")]
        return tuple(key)

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        nargs = dict(zip(self.arg_names, args))
        self.nargs = nargs
        try:
            if len(self.configs) > 1:
                key = self.tuning_key(nargs, kwargs)
                config = self.cache.get(key)
                if config is None:
                    config = self.cache[key] = self._tune(key, args, nargs, kwargs, grid)
            else:
                config = self.configs[0]
            self.best_config = config
            _check_conflicts(config, kwargs)
            if config.pre_hook is not None:
                config.pre_hook({**nargs, **kwargs, **config.all_kwargs()})
            return self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    def _tune(self, key: tuple, args: tuple, nargs: dict, kwargs: dict, grid: Any) -> Config:
        pruned = self.prune_configs(kwargs, nargs)
        if len(pruned) == 1:
            return pruned[0]
        if not (self.cache_results or tuning.cache_requested()) or interpret_requested():
            return self._benchmark(key, pruned, args, nargs, kwargs, grid)
        rkey = tuning.result_key(self.base_fn, current_target(), key, pruned)
        chosen = []

        def build() -> dict[str, bytes]:
            chosen.append(self._benchmark(key, pruned, args, nargs, kwargs, grid))
            return tuning.encode_result(pruned, self.configs_timings, chosen[0])
        best, timings = cache.load_or_build(rkey, build, lambda files: tuning.decode_result(files, pruned))
        self.configs_timings = timings
        return best

    def _benchmark(self, key: tuple, configs: list[Config], args: tuple, nargs: dict, kwargs: dict,
                   grid: Any) -> Config:
        for c in configs:
            _check_conflicts(c, kwargs)
        progress = tuning.Progress(self.base_fn.__name__, len(configs))
        try:
            return self._benchmark_with(progress, key, configs, args, nargs, kwargs, grid)
        finally:
            progress.cancel()

    def _benchmark_with(self, progress: Any, key: tuple, configs: list[Config], args: tuple, nargs: dict,
                        kwargs: dict, grid: Any) -> Config:
        start = time.perf_counter()
        skipped = self._precompile(configs, args, kwargs)
        compile_s = time.perf_counter() - start
        progress.step("benchmarking")

        def time_config(config: Config, budget: dict | None = None) -> list[float]:
            if config in skipped:
                return list(tuning.INF3)
            current = {**kwargs, **config.all_kwargs()}
            full = {**nargs, **current}

            def kernel_call() -> None:
                if config.pre_hook is not None:
                    config.pre_hook(full)
                self.pre_hook(full)
                try:
                    self.fn.run(*args, grid=grid, **current)
                except BaseException as e:
                    self.post_hook(full, exception=e)
                    raise
                self.post_hook(full, exception=None)
            try:
                return self._time(kernel_call, budget)
            except SKIPPED_ERRORS as e:
                skipped[config] = _one_line(e)
                return list(tuning.INF3)

        timings = self._run_timing(configs, time_config, progress)
        if all(t[0] == float("inf") for t in timings.values()):
            raise AutotunerError(f"every config of '{self.base_fn.__name__}' failed: "
                                 + "; ".join(f"[{c}] {why}" for c, why in skipped.items()))
        best = tuning.best_of(timings)
        self.pre_hook({**nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
        self.bench_time = time.perf_counter() - start
        self.configs_timings = timings
        progress.done(best)
        if skipped:
            warnings.warn(f"autotuning '{self.base_fn.__name__}': {len(skipped)} of {len(configs)} configs skipped: "
                          + "; ".join(f"[{c}] {why}" for c, why in skipped.items()), RuntimeWarning, stacklevel=4)
        if tuning.print_requested():
            print(tuning.report(self.base_fn.__name__, key, self.bench_time, compile_s, timings, best, skipped))
        return best

    def _run_timing(self, configs: list[Config], time_config: Callable, progress: Any) -> dict:
        def step(done: int, total: int) -> None:
            progress.step(f"benchmarked {done}/{total}")
        if self._explicit_bench() or interpret_requested() or _base_jit(self.fn).interpret:
            out = {}
            for i, c in enumerate(configs):
                out[c] = time_config(c)
                step(i + 1, len(configs))
            return out
        return tuning.race(configs, time_config, step)

    def _explicit_bench(self) -> bool:
        return self._do_bench is not None or self.num_warmups is not None or self.num_reps is not None \
            or self.use_cuda_graph

    def _time(self, kernel_call: Callable[[], None], budget: dict | None) -> list[float]:
        """[p50, p20, p80] ms of `kernel_call`, as Triton's `_bench` measures."""
        if self._do_bench is not None:
            return list(self._do_bench(kernel_call, quantiles=tuning.QUANTILES))
        if interpret_requested() or _base_jit(self.fn).interpret:
            return _wall_clock(kernel_call)
        if self.use_cuda_graph:
            return list(bench.do_bench_cudagraph(kernel_call, rep=self.num_reps or 100, quantiles=tuning.QUANTILES))
        if budget is None:
            budget = {"warmup": 25 if self.num_warmups is None else self.num_warmups,
                      "rep": 100 if self.num_reps is None else self.num_reps}
        benchmarker = driver.active.get_benchmarker()
        return list(benchmarker(kernel_call, quantiles=tuning.QUANTILES, **budget))

    def _precompile(self, configs: list[Config], args: tuple, kwargs: dict) -> dict[Config, str]:
        """Compiles every config's kernel in one batch before timing starts;
        returns the configs that failed (with why). Nothing to do under the
        interpreter or without a GPU (then each timed call compiles)."""
        jit_fn = _base_jit(self.fn)
        if jit_fn.interpret or interpret_requested() or not driver.available():
            return {}
        calls = []
        for c in configs:
            call_args, hooked_kwargs = self._hooked_args(c, args, kwargs)
            call_kwargs = {**hooked_kwargs, **c.all_kwargs()}
            inner = self.fn
            while inner is not jit_fn:          # heuristics between us and the kernel add their values
                if not isinstance(inner, Heuristics):
                    return {}
                call_kwargs = inner.with_values(call_args, call_kwargs)
                inner = inner.fn
            calls.append((call_args, call_kwargs))
        results = launcher_for(jit_fn).precompile(calls)
        failed = {}
        for c, r in zip(configs, results):
            if isinstance(r, SKIPPED_ERRORS):
                failed[c] = _one_line(r)
            elif isinstance(r, BaseException):
                raise r
        return failed

    def _hooked_args(self, config: Config, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments (positional, keyword) `config`'s timed call will
        see, for compiling it ahead: a config's pre_hook may set the block
        shape of a host TensorDescriptor argument (tutorial 06 sets each
        descriptor's block_shape from BLOCK_M/BLOCK_N), which the kernel is
        specialized on, so the hook runs here on copies of the descriptors,
        positional or keyword (every config its own); other arguments are
        passed as they are, as to the timed call."""
        if config.pre_hook is None or not any(is_tensor_descriptor(a) for a in (*args, *kwargs.values())):
            return args, kwargs

        def own(a: Any) -> Any:
            return copy.copy(a) if is_tensor_descriptor(a) else a
        full = {**{name: own(a) for name, a in zip(self.arg_names, args)},
                **{name: own(a) for name, a in kwargs.items()}, **config.all_kwargs()}
        config.pre_hook(full)
        return tuple(full[name] for name in self.arg_names[:len(args)]), {name: full[name] for name in kwargs}

    def warmup(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Compiles every config left after pruning, all at once (one batch
        on the compile pool), without launching; returns their CompiledKernels."""
        jit_fn = _base_jit(self.fn)
        self.nargs = dict(zip(self.arg_names, args))
        try:
            configs = self.prune_configs(kwargs)
        finally:
            self.nargs = None
        if self.fn is not jit_fn:
            return [self.fn.warmup(*args, **kwargs, **c.all_kwargs()) for c in configs]
        calls = []
        for c in configs:
            options, params = jit_fn._split_launch({**kwargs, **c.all_kwargs()})
            options = {k: v for k, v in options.items() if k not in ("maxnreg", "warmup")}
            calls.append((args, params, options))
        results = warmup_many(jit_fn, calls)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return results


def _check_conflicts(config: Config, kwargs: dict) -> None:
    clash = set(config.kwargs) & set(kwargs)
    if clash:
        raise ValueError(f"conflicting meta-parameters: {', '.join(sorted(clash))}; they are set by the "
                         "autotuner's configs and must not be passed at launch")


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _wall_clock(kernel_call: Callable[[], None], runs: int = 1) -> list[float]:
    """Quantiles of wall-clock runs, in ms: the interpreter's timer (one run
    per config: interpreted kernels are slow, and the choice there is moot)."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        kernel_call()
        times.append((time.perf_counter() - t) * 1000)
    return [bench.quantile(times, q) for q in tuning.QUANTILES]


class Heuristics(KernelInterface):
    def __init__(self, fn: Any, arg_names: list[str], values: dict[str, Callable[[dict], Any]]):
        self.fn = fn
        self.values = dict(values)
        self.arg_names = list(arg_names)
        self.__name__ = getattr(fn, "__name__", "kernel")

    def with_values(self, args: tuple, kwargs: dict) -> dict:
        """`kwargs` plus each heuristic's value, computed in order (a later
        one sees the earlier ones)."""
        named = dict(zip(self.arg_names, args))
        kwargs = dict(kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule({**named, **kwargs})
        return kwargs

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        return self.fn.run(*args, grid=grid, **self.with_values(args, kwargs))

    def warmup(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn.warmup(*args, **self.with_values(args, kwargs))


def autotune(configs: list[Config], key: list[str], prune_configs_by: dict | None = None,
             reset_to_zero: list[str] | None = None, restore_value: list[str] | None = None,
             pre_hook: Callable | None = None, post_hook: Callable | None = None, warmup: float | None = None,
             rep: float | None = None, use_cuda_graph: bool = False, do_bench: Callable | None = None,
             cache_results: bool = False) -> Callable[[Any], Autotuner]:
    """`@autotune(configs=[Config(...), ...], key=["n"])` over a @jit (or
    @heuristics) function; see the module docstring."""
    def decorate(fn: Any) -> Autotuner:
        return Autotuner(fn, _base_jit(fn).arg_names, configs, key, reset_to_zero, restore_value, pre_hook,
                         post_hook, prune_configs_by, warmup, rep, use_cuda_graph, do_bench, cache_results)
    return decorate


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[Any], Heuristics]:
    """`@heuristics({'BLOCK': lambda args: ...})`: each value computed from the
    launch's named arguments and passed as that keyword."""
    def decorate(fn: Any) -> Heuristics:
        return Heuristics(fn, _base_jit(fn).arg_names, values)
    return decorate
