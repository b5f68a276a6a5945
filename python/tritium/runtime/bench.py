"""Kernel timing (`triton.testing.do_bench`, `do_bench_cudagraph`): device
events around each call, the L2 cache flushed before each timed call, the
number of calls sized from a first estimate so warm-up and measurement take
about `warmup` and `rep` milliseconds. The device comes from
`driver.active` (its `get_device_interface()` supplies Event and
synchronize), so tests can time a fake device on the CPU. Here, below
testing.py, because the autotuner times configs with it."""
from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Sequence

from . import driver

RETURN_MODES = ("min", "max", "mean", "median", "all")


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (NumPy's default)."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantiles must be in [0, 1], got {q}")
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    """The quantiles of `times` (one float for one quantile), else the
    statistic `return_mode` names ("all" is the list itself)."""
    if quantiles is not None:
        out = [quantile(times, q) for q in quantiles]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean, "median": statistics.median}[return_mode](times)


def _check_mode(return_mode: str) -> None:
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(RETURN_MODES)}, got {return_mode!r}")


def _reset_grads(grad_to_none: Any) -> None:
    # a function that runs a backward pass would otherwise accumulate into .grad
    if grad_to_none is not None:
        for x in grad_to_none:
            x.grad = None


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
    """Times `fn()` on the device, in milliseconds: about `warmup` ms of
    untimed calls, then about `rep` ms of calls each timed by a pair of events
    with the L2 cache flushed before it. Returns the `quantiles` of the times
    if given, else their `return_mode` ("min", "max", "mean", "median", "all")."""
    _check_mode(return_mode)
    active = driver.active
    di = active.get_device_interface()
    fn()
    di.synchronize()
    cache = active.get_empty_cache_for_benchmark()
    # a first estimate (five calls, flush included) sizes the loops
    start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        active.clear_cache(cache)
        fn()
    end.record()
    di.synchronize()
    estimate_ms = start.elapsed_time(end) / 5
    n_warmup = max(1, int(warmup / estimate_ms)) if estimate_ms > 0 else 1000
    n_repeat = max(1, int(rep / estimate_ms)) if estimate_ms > 0 else 1000
    starts = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for s, e in zip(starts, ends):
        _reset_grads(grad_to_none)
        active.clear_cache(cache)
        s.record()
        fn()
        e.record()
    di.synchronize()
    return summarize([s.elapsed_time(e) for s, e in zip(starts, ends)], quantiles, return_mode)


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20, grad_to_none: Any = None,
                       quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
    """Times `fn()` replayed from a CUDA graph (no launch overhead), in ms
    per call: the graph unrolls about `rep` ms of calls and is replayed ten
    times, each replay timed by a pair of events. Needs PyTorch (its
    CUDAGraph captures on a side stream) and a function that is capturable."""
    import torch
    _check_mode(return_mode)
    with torch.cuda.stream(torch.cuda.Stream()):
        fn()
        if grad_to_none is not None:
            for x in grad_to_none:
                x.detach_()
                x.requires_grad_(True)
                x.grad = None
        # estimated without a graph: capturing one costs far more than a few calls
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate_ms = start.elapsed_time(end) / 5
        n_repeat = 1000 if estimate_ms == 0 else max(1, int(rep / estimate_ms))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n_repeat):
                _reset_grads(grad_to_none)
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_repeat)
    return summarize(times, quantiles, return_mode)


__all__ = ["RETURN_MODES", "do_bench", "do_bench_cudagraph", "quantile", "summarize"]
