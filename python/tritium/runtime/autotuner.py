"""`Config`, `@autotune` and `@heuristics`. Heuristics compute constexpr
arguments from the bound launch arguments. Autotuning proper (timing each
config on the device) needs a GPU backend; until then the tuner uses the
first config that survives pruning, which is also what the interpreter runs."""
from __future__ import annotations

from typing import Any, Callable

from .jit import KernelInterface


class Config:
    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

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


def _named_args(fn: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    names = _base_jit(fn).arg_names
    return {**dict(zip(names, args)), **kwargs}


class Autotuner(KernelInterface):
    def __init__(self, fn: Any, configs: list[Config], key: list[str], prune_configs_by: dict | None = None,
                 reset_to_zero: list[str] | None = None, restore_value: list[str] | None = None, **_options: Any):
        self.fn = fn
        self.configs = list(configs) or [Config({})]
        self.key = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = reset_to_zero or []
        self.restore_value = restore_value or []
        self.best_config: Config | None = None
        self.arg_names = _base_jit(fn).arg_names
        self.__name__ = getattr(fn, "__name__", "kernel")

    def prune_configs(self, named: dict[str, Any]) -> list[Config]:
        configs = self.configs
        early = self.prune_configs_by.get("early_config_prune")
        if early is not None:
            configs = list(early(configs, named)) or configs
        return configs

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        named = _named_args(self.fn, args, kwargs)
        config = self.prune_configs(named)[0]
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**named, **config.all_kwargs()})
        clash = set(config.kwargs) & set(kwargs)
        if clash:
            raise ValueError(f"conflicting meta-parameters: {', '.join(sorted(clash))}; they are set by the "
                             "autotuner's configs and must not be passed at launch")
        return self.fn.run(*args, grid=grid, **{**config.all_kwargs(), **kwargs})

    def warmup(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn.warmup(*args, **kwargs)


class Heuristics(KernelInterface):
    def __init__(self, fn: Any, values: dict[str, Callable[[dict], Any]]):
        self.fn = fn
        self.values = dict(values)
        self.arg_names = _base_jit(fn).arg_names
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        named = _named_args(self.fn, args, kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule({**named, **kwargs})
        return self.fn.run(*args, grid=grid, **kwargs)

    def warmup(self, *args: Any, **kwargs: Any) -> Any:
        named = _named_args(self.fn, args, kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule({**named, **kwargs})
        return self.fn.warmup(*args, **kwargs)


def autotune(configs: list[Config], key: list[str], prune_configs_by: dict | None = None,
             reset_to_zero: list[str] | None = None, restore_value: list[str] | None = None,
             **options: Any) -> Callable[[Any], Autotuner]:
    """Decorator; see the module docstring for what is tuned today."""
    def decorate(fn: Any) -> Autotuner:
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, **options)
    return decorate


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[Any], Heuristics]:
    """`@heuristics({'BLOCK': lambda args: ...})`: each value computed from the
    launch's named arguments and passed as that keyword."""
    def decorate(fn: Any) -> Heuristics:
        return Heuristics(fn, values)
    return decorate
