"""What the autotuner does around its loop: how configs are timed (Triton's
one `do_bench` per config, or by default a two-round race), the tuning
result kept in the cache stack (`cache_results`), the progress line and the
TRITIUM_PRINT_AUTOTUNING report.

The race: every config is timed briefly (SCREEN: about 15 ms of calls), and
only those within FINALIST_MARGIN of the fastest (at most FINALISTS of them)
are timed again for longer (FINAL); their final timings decide. A config
that loses the screen by more than the margin cannot win the final: kernel
times of one config vary by a percent or two between runs, not 10%. This is
where most of the time Triton spends benchmarking goes away (it times every
config for about 125 ms)."""
from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from typing import Any, Callable

from .. import settings
from .cache import compiler_version
from .dependencies import dependencies_digest

INF3 = [float("inf")] * 3
QUANTILES = (0.5, 0.2, 0.8)
SCREEN = {"warmup": 5, "rep": 10}
FINAL = {"warmup": 10, "rep": 40}
FINALIST_MARGIN = 1.10
FINALISTS = 4


def print_requested() -> bool:
    return settings.print_autotuning()


def cache_requested() -> bool:
    return settings.cache_autotuning()


def race(configs: list, time_config: Callable[[Any, dict], list[float]],
         on_step: Callable[[int, int], None] = lambda done, total: None) -> dict:
    """{config: [p50, p20, p80] ms}: the screen for all, the final for the
    finalists (their screen timing replaced). `time_config(config, budget)`
    times one config with do_bench's `warmup`/`rep` from `budget`."""
    timings: dict = {}
    total = len(configs)
    for i, c in enumerate(configs):
        timings[c] = time_config(c, SCREEN)
        on_step(i + 1, total)
    ranked = sorted((c for c in configs if timings[c][0] < float("inf")), key=lambda c: timings[c][0])
    if len(ranked) < 2:
        return timings
    best = timings[ranked[0]][0]
    finalists = [c for c in ranked[:FINALISTS] if timings[c][0] <= best * FINALIST_MARGIN]
    if len(finalists) > 1:
        for c in finalists:
            timings[c] = time_config(c, FINAL)
    return timings


def best_of(timings: dict) -> Any:
    # as Triton: the timing lists compare in order (median first)
    return min(timings, key=lambda c: list(timings[c]))


# -- the tuning result in the cache stack -------------------------------------

def result_key(base_fn: Any, target: str, tuning_key: tuple, configs: list) -> str:
    """What a tuning result depends on: the compiler, the target, the kernel
    with everything it reads (its cache_key), the tuning key and the configs
    tried, in order."""
    parts = [compiler_version(), target, dependencies_digest(base_fn), repr(tuning_key)] + [repr(c) for c in configs]
    return hashlib.sha256("\x1f".join(["autotune"] + parts).encode()).hexdigest()


def encode_result(configs: list, timings: dict, best: Any) -> dict[str, bytes]:
    doc = {"best": configs.index(best), "configs": [repr(c) for c in configs],
           "timings": [list(map(float, timings[c])) for c in configs]}
    return {"autotune.json": json.dumps(doc).encode()}


def decode_result(files: dict[str, bytes], configs: list) -> tuple[Any, dict]:
    """(best config, timings) from `encode_result`'s files; ValueError if
    they do not describe these configs (the cache then drops the entry)."""
    doc = json.loads(files["autotune.json"])
    if not isinstance(doc, dict) or doc.get("configs") != [repr(c) for c in configs]:
        raise ValueError("the stored tuning result is for other configs")
    best, timings = doc.get("best"), doc.get("timings")
    if type(best) is not int or not 0 <= best < len(configs) or not isinstance(timings, list) \
            or len(timings) != len(configs):
        raise ValueError("malformed tuning result")
    return configs[best], {c: [float(x) for x in t] for c, t in zip(configs, timings)}


# -- what the user sees ---------------------------------------------------------

class Progress:
    """A line on stderr once tuning has taken a second: rewritten in place
    on a terminal, printed once (and at the end) otherwise."""

    DELAY_S = 1.0

    def __init__(self, name: str, n_configs: int):
        self.name, self.n = name, n_configs
        self.start = time.perf_counter()
        self.shown = False
        self.tty = sys.stderr.isatty()
        self.enabled = settings.autotune_progress()
        self._timer = threading.Timer(self.DELAY_S, self._show, ("compiling",))
        self._timer.daemon = True
        if self.enabled:
            self._timer.start()

    def _show(self, what: str) -> None:
        if not self.enabled or (self.shown and not self.tty):
            return
        self.shown = True
        elapsed = time.perf_counter() - self.start
        line = f"tritium: autotuning {self.name} over {self.n} configs: {what} ({elapsed:.1f} s)"
        sys.stderr.write(("\r" + line + "\x1b[K") if self.tty else line + "\n")
        sys.stderr.flush()

    def step(self, what: str) -> None:
        if time.perf_counter() - self.start >= self.DELAY_S:
            self._show(what)

    def cancel(self) -> None:
        self._timer.cancel()

    def done(self, best: Any) -> None:
        self._timer.cancel()
        if self.shown and self.enabled:
            elapsed = time.perf_counter() - self.start
            end = f"tritium: autotuned {self.name} in {elapsed:.1f} s: {best}"
            sys.stderr.write(("\r" + end + "\x1b[K\n") if self.tty else end + "\n")
            sys.stderr.flush()


def report(name: str, key: tuple, seconds: float, compile_s: float, timings: dict, best: Any,
           skipped: dict) -> str:
    """TRITIUM_PRINT_AUTOTUNING's text: the choice, then every config's timing."""
    lines = [f"tritium autotuning for function {name}, with key as {key}, finished after {seconds:.2f}s "
             f"(compiling {compile_s:.2f}s), best config selected: {best};"]
    width = max(len(repr(c)) for c in timings)
    lines.append(f"  {'config':<{width}}  {'p50 ms':>10} {'p20 ms':>10} {'p80 ms':>10}")
    for c in sorted(timings, key=lambda c: list(timings[c])):
        t = timings[c]
        mark = " *" if c is best else ""
        if c in skipped:
            lines.append(f"  {repr(c):<{width}}  skipped: {skipped[c]}")
        else:
            lines.append(f"  {repr(c):<{width}}  {t[0]:>10.4f} {t[1]:>10.4f} {t[2]:>10.4f}{mark}")
    return "\n".join(lines)


__all__ = ["FINAL", "FINALISTS", "FINALIST_MARGIN", "INF3", "Progress", "QUANTILES", "SCREEN", "best_of",
           "cache_requested", "decode_result", "encode_result", "print_requested", "race", "report", "result_key"]
