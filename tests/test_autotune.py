"""The autotuner on the CPU: configs timed by a fake timer (a `do_bench`
that reads which config ran from a pre_hook) or by the interpreter's wall
clock; the choice per key and per dtype, pruning, reset_to_zero and
restore_value around trials, hooks, skipped configs, the printed report,
the progress line, the choice kept with cache_results, and warmup compiling
every config in one batch."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime import tuning
from tritium.runtime.errors import AutotunerError


@triton.jit
def add_into(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=m) + tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def small_blocks_only(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 32, "BLOCK too large")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((16, 1), (32, 2), (64, 4), (128, 4))]
FAKE_MS = {16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}


def grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


class FakeTimer:
    """A do_bench: runs the call once and answers the time FAKE_MS gives the
    config it saw run (recorded by the autotuner's pre_hook)."""

    def __init__(self, ms=FAKE_MS):
        self.ms, self.seen, self.calls = ms, [], 0

    def pre_hook(self, nargs):
        self.seen.append(nargs["BLOCK"])

    def __call__(self, fn, quantiles):
        self.calls += 1
        fn()
        t = self.ms[self.seen[-1]]
        return [t, t * 0.9, t * 1.1][:len(quantiles)]


def tuned(timer, fn=add_into, configs=CONFIGS, **kw):
    return triton.autotune(configs, key=["n"], do_bench=timer, pre_hook=timer.pre_hook, **kw)(fn)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


def test_the_fastest_config_wins_and_is_kept_per_key(interp):
    timer = FakeTimer()
    k = tuned(timer, reset_to_zero=["out_ptr"])
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    k[grid](x, out, 100)
    assert k.best_config.kwargs == {"BLOCK": 32} and k.best_config.num_warps == 2
    assert {c.kwargs["BLOCK"]: t[0] for c, t in k.configs_timings.items()} == FAKE_MS
    assert timer.calls == 4
    np.testing.assert_array_equal(out, x)          # trials zeroed out; the real launch added once
    k[grid](x, out, 100)                            # same key: no new tuning
    assert timer.calls == 4
    np.testing.assert_array_equal(out, 2 * x)
    k[grid](x, out, 50)                             # another n: tuned again
    assert timer.calls == 8 and len(k.cache) == 2


def test_dtypes_are_part_of_the_key(interp):
    timer = FakeTimer()
    k = tuned(timer)
    for dt in (np.float32, np.float64, np.float32):
        k[grid](np.ones(64, dt), np.zeros(64, dt), 64)
    assert timer.calls == 8
    assert sorted(k.cache) == [(64, "float32", "float32"), (64, "float64", "float64")]


def test_restore_value_leaves_the_argument_as_it_was(interp):
    timer = FakeTimer()
    k = tuned(timer, restore_value=["out_ptr"])
    x = np.arange(40, dtype=np.float32)
    out = np.full(40, 5.0, np.float32)
    k[grid](x, out, 40)
    np.testing.assert_array_equal(out, x + 5)      # four trials undone, one real launch


def test_hooks_see_each_trial_and_exceptions(interp):
    timer = FakeTimer()
    posts = []
    k = triton.autotune(CONFIGS, key=["n"], do_bench=timer, pre_hook=timer.pre_hook,
                        post_hook=lambda nargs, exception: posts.append((nargs["BLOCK"], nargs["num_warps"],
                                                                        exception)))(add_into)
    k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)
    assert [p[:2] for p in posts] == [(16, 1), (32, 2), (64, 4), (128, 4)]
    assert all(p[2] is None for p in posts)


def test_early_prune_and_perf_model(interp):
    timer = FakeTimer()
    got = {}

    def early(configs, nargs, **kwargs):
        got["nargs"] = sorted(nargs)
        return [c for c in configs if c.kwargs["BLOCK"] >= 32]

    def model(**kw):
        return -kw["BLOCK"]                          # predicts the largest block fastest
    k = tuned(timer, prune_configs_by={"early_config_prune": early, "perf_model": model, "top_k": 2})
    k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)
    assert got["nargs"] == ["n", "out_ptr", "x_ptr"]
    assert sorted(c.kwargs["BLOCK"] for c in k.configs_timings) == [64, 128]
    assert k.best_config.kwargs["BLOCK"] == 64
    with pytest.raises(AutotunerError, match="at least one"):
        tuned(FakeTimer(), prune_configs_by={"early_config_prune": lambda c, n, **kw: []})[grid](
            np.ones(8, np.float32), np.zeros(8, np.float32), 16)
    k = tuned(FakeTimer(), prune_configs_by={"perf_model": model, "top_k": 0.5})
    assert [c.kwargs["BLOCK"] for c in k.prune_configs({}, {"n": 8})] == [128, 64]


def test_a_config_that_fails_to_compile_is_skipped_with_a_note(interp):
    timer = FakeTimer({16: 3.0, 32: 2.0, 64: 0.5, 128: 0.1})
    k = tuned(timer, fn=small_blocks_only)
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    with pytest.warns(RuntimeWarning, match=r"2 of 4 configs skipped: \[BLOCK: 64.*BLOCK too large"):
        k[grid](x, out, 100)
    assert k.best_config.kwargs["BLOCK"] == 32
    assert k.configs_timings[CONFIGS[2]] == [float("inf")] * 3
    np.testing.assert_array_equal(out, x)
    bad = tuned(FakeTimer(), fn=small_blocks_only, configs=CONFIGS[2:])
    with pytest.raises(AutotunerError, match="every config"):
        bad[grid](x, out, 100)


def test_launch_meta_parameters_must_not_clash(interp):
    k = tuned(FakeTimer())
    with pytest.raises(ValueError, match="conflicting meta-parameters: BLOCK"):
        k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8, BLOCK=16)


def test_print_autotuning_reports_choice_and_table(interp, monkeypatch, capsys):
    monkeypatch.setenv("TRITIUM_PRINT_AUTOTUNING", "1")
    k = tuned(FakeTimer())
    k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)
    text = capsys.readouterr().out
    assert "autotuning for function add_into" in text and "best config selected: BLOCK: 32" in text
    rows = [line for line in text.splitlines() if "num_warps" in line and "selected" not in line]
    assert len(rows) == 4 and rows[0].rstrip().endswith("*") and "1.0000" in rows[0]
    k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)
    assert capsys.readouterr().out == ""             # a cached choice prints nothing


def test_progress_line_after_the_delay(interp, monkeypatch, capsys):
    monkeypatch.setattr(tuning.Progress, "DELAY_S", 0.0)
    k = tuned(FakeTimer())
    k[grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)
    err = capsys.readouterr().err
    assert "autotuning add_into over 4 configs" in err and "autotuned add_into in" in err


def test_interpreter_times_by_wall_clock(interp):
    calls = []
    k = triton.autotune(CONFIGS[:2], key=["n"], reset_to_zero=["out_ptr"],
                        pre_hook=lambda nargs: calls.append(nargs["BLOCK"]))(add_into)
    x = np.arange(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    k[grid](x, out, 50)
    assert calls == [16, 32] and set(k.configs_timings) == set(CONFIGS[:2])
    assert all(0 < t[0] < float("inf") for t in k.configs_timings.values())
    np.testing.assert_array_equal(out, x)


def test_heuristics_under_autotune(interp):
    # heuristics inside the tuner compute values from the config's
    timer = FakeTimer()
    seen = []
    inner = triton.heuristics({"EXTRA": lambda a: a["BLOCK"] * 2})(add_with_extra)
    k = triton.autotune(CONFIGS[:2], key=["n"], do_bench=timer, pre_hook=timer.pre_hook,
                        post_hook=lambda nargs, exception: seen.append(nargs["BLOCK"]))(inner)
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    k[grid](x, out, 20)
    np.testing.assert_array_equal(out, 5 * x)
    assert seen == [16, 32]


@triton.jit
def add_with_extra(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EXTRA: tl.constexpr):
    tl.static_assert(EXTRA == 2 * BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 5, mask=m)


def test_cache_results_keeps_the_choice_for_the_next_process(tmp_path, monkeypatch):
    """Without a GPU the kernel's `run` is replaced by a recorder: the cache
    path is what is under test."""
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))

    @triton.jit
    def kern(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    ran = []
    kern.run = lambda *a, grid, **kw: ran.append(kw["BLOCK"])
    ms = {16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}

    def timer(fn, quantiles):
        fn()
        return [ms[ran[-1]]] * 3
    first = triton.autotune(CONFIGS, key=["n"], do_bench=timer, cache_results=True)(kern)
    x = triton.MockTensor(tl.float32)
    first[(1,)](x, 1000)
    assert first.best_config.kwargs["BLOCK"] == 32 and ran == [16, 32, 64, 128, 32]

    def no_bench(fn, quantiles):
        raise AssertionError("benchmarked although the choice was cached")
    second = triton.autotune(CONFIGS, key=["n"], do_bench=no_bench, cache_results=True)(kern)
    second[(1,)](x, 1000)
    assert second.best_config.kwargs["BLOCK"] == 32 and ran[-1] == 32
    assert [t[0] for t in second.configs_timings.values()] == [4.0, 1.0, 2.0, 3.0]
    # other configs: another result
    third = triton.autotune(CONFIGS[2:], key=["n"], do_bench=timer, cache_results=True)(kern)
    third[(1,)](x, 1000)
    assert third.best_config.kwargs["BLOCK"] == 64


def test_warmup_compiles_every_config_in_one_batch(tmp_path, monkeypatch):
    from tritium.runtime import compiled as aot
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    batches = []
    real = aot.compile_ir_many
    monkeypatch.setattr(aot, "compile_ir_many", lambda jobs, *a, **k: batches.append(len(jobs)) or real(jobs, *a, **k))
    k = triton.autotune(CONFIGS, key=["n"])(add_into)
    compiled = k.warmup(triton.MockTensor(tl.float32), triton.MockTensor(tl.float32), 1024)
    assert batches == [4]
    assert [c.metadata["num_warps"] for c in compiled] == [1, 2, 4, 4]
    assert len({c.asm["ptx"] for c in compiled}) == 4
    k.warmup(triton.MockTensor(tl.float32), triton.MockTensor(tl.float32), 1024)
    assert batches == [4]                            # all cached now


class FakeDriver:
    """driver.active with a benchmarker that records each call's budget."""

    def __init__(self, ms):
        self.ms, self.calls = ms, []

    def get_benchmarker(self):
        def bench(fn, quantiles, warmup, rep):
            fn()
            block = self.ran[-1]
            self.calls.append((block, warmup, rep))
            # the screen is noisy; the final tells the truth
            t = self.ms[block][0 if rep == tuning.SCREEN["rep"] else 1]
            return [t, t, t]
        return bench


def test_the_default_race_screens_all_and_times_finalists_longer(monkeypatch):
    from tritium.runtime import driver
    # screen: 32 looks best, 64 within 10%, 16 within 10%, 128 far off; final: 64 is truly best
    fake = FakeDriver({16: (1.08, 1.5), 32: (1.0, 1.2), 64: (1.05, 1.1), 128: (2.0, 0.1)})
    driver.set_active(fake)
    try:
        @triton.jit
        def kern(x_ptr, n, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
        fake.ran = []
        kern.run = lambda *a, grid, **kw: fake.ran.append(kw["BLOCK"])
        k = triton.autotune(CONFIGS, key=["n"])(kern)
        k[(1,)](triton.MockTensor(tl.float32), 10)
    finally:
        driver.reset_active()
    screen = [(b, w, r) for b, w, r in fake.calls if (w, r) == (tuning.SCREEN["warmup"], tuning.SCREEN["rep"])]
    final = [(b, w, r) for b, w, r in fake.calls if (w, r) == (tuning.FINAL["warmup"], tuning.FINAL["rep"])]
    assert [b for b, _, _ in screen] == [16, 32, 64, 128]
    assert sorted(b for b, _, _ in final) == [16, 32, 64]          # 128 lost the screen by far
    assert k.best_config.kwargs["BLOCK"] == 64
    assert {c.kwargs["BLOCK"]: t[0] for c, t in k.configs_timings.items()} == {16: 1.5, 32: 1.2, 64: 1.1, 128: 2.0}


@triton.jit
def desc_copy(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    dst.store([0, 0], src.load([0, 0]))


def _set_blocks(nargs):
    # tutorial 06's pre_hook: each descriptor's block from the config
    nargs["src"].block_shape = [nargs["BM"], nargs["BN"]]
    nargs["dst"].block_shape = [nargs["BM"], nargs["BN"]]


@pytest.fixture
def precompiled(monkeypatch):
    """The batch compile ahead of timing, faked: the list it fills with each
    call's (src block, dst block, BM), src and dst positional or keyword."""
    from tritium.runtime import autotuner
    seen = []

    class FakeLauncher:
        def precompile(self, calls):
            for a, kw in calls:
                given = {**dict(zip(("src", "dst"), a)), **kw}
                seen.append((given["src"].block_shape, given["dst"].block_shape, kw["BM"]))
            return [None] * len(calls)

    monkeypatch.setattr(autotuner.driver, "available", lambda: True)
    monkeypatch.setattr(autotuner, "launcher_for", lambda fn: FakeLauncher())
    return seen


def _descriptors(block):
    from tritium.tools.tensor_descriptor import TensorDescriptor
    x = np.zeros((256, 256), np.float16)
    return x, [TensorDescriptor(x, shape=[256, 256], strides=[256, 1], block_shape=list(block)) for _ in range(2)]


def test_precompile_sees_each_configs_pre_hook_on_descriptor_copies(precompiled):
    # tutorial 06: host descriptors are made with a dummy block shape and each
    # config's pre_hook sets it; the batch compile ahead of timing must see
    # every config's own shape (and leave the caller's descriptors alone)
    configs = [triton.Config({"BM": bm, "BN": bn}, pre_hook=_set_blocks) for bm, bn in ((64, 32), (128, 64))]
    k = triton.autotune(configs, key=[])(desc_copy)
    x, (src, dst) = _descriptors([1, 1])
    assert k._precompile(configs, (src, dst), {}) == {}
    assert precompiled == [([64, 32], [64, 32], 64), ([128, 64], [128, 64], 128)]
    assert src.block_shape == [1, 1] and dst.block_shape == [1, 1]
    # without a descriptor argument the arguments are passed as they are
    assert k._hooked_args(configs[0], (x, x), {}) == ((x, x), {})


def test_precompile_runs_pre_hook_on_descriptors_passed_by_keyword(precompiled):
    # the same with the descriptors as keyword arguments: the batch compile
    # saw the caller's [1, 1] blocks (every config would fail and be skipped)
    configs = [triton.Config({"BM": bm, "BN": bn}, pre_hook=_set_blocks) for bm, bn in ((64, 32), (128, 64))]
    configs.append(triton.Config({"BM": 16, "BN": 16}))      # no pre_hook: the caller's descriptors as given
    k = triton.autotune(configs, key=[])(desc_copy)
    _, (src, dst) = _descriptors([16, 16])
    assert k._precompile(configs, (src,), {"dst": dst}) == {}
    assert precompiled == [([64, 32], [64, 32], 64), ([128, 64], [128, 64], 128), ([16, 16], [16, 16], 16)]
    precompiled.clear()
    assert k._precompile(configs, (), {"src": src, "dst": dst}) == {}
    assert precompiled == [([64, 32], [64, 32], 64), ([128, 64], [128, 64], 128), ([16, 16], [16, 16], 16)]
    assert src.block_shape == [16, 16] and dst.block_shape == [16, 16]
