"""tritium.testing (= triton.testing under the switch) on the CPU:
perf_report's files and printout against the ones real Triton 3.6 wrote for
the same fake benchmarks (tests/fixtures/perf_report), do_bench's loop
against a fake device whose events read a fake clock, and assert_close.
do_bench on a real GPU is in tests/gpu/test_testing_gpu.py."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import tritium.testing as testing
from tritium.runtime import driver
from tritium.runtime.bench import quantile, summarize

FIXTURES = Path(__file__).parent / "fixtures" / "perf_report"


def _load_fixture_module():
    spec = importlib.util.spec_from_file_location("perf_report_benchmarks", FIXTURES / "benchmarks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def perf_outputs(tmp_path_factory):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("perf_report")
    result = _load_fixture_module().run_all(testing, str(out))
    return out, result


@pytest.mark.parametrize("name", ["ranges/vector-add.csv", "single/two-x.csv", "single/scalar-x.csv",
                                  "ranges/results.html", "single/results.html", "printed.txt"])
def test_perf_report_writes_what_triton_writes(perf_outputs, name):
    out, _ = perf_outputs
    assert (out / name).read_text() == (FIXTURES / name).read_text()


@pytest.mark.parametrize("name", ["ranges/vector-add.png", "single/two-x.png", "single/scalar-x.png"])
def test_perf_report_plots_match_triton(perf_outputs, name):
    import matplotlib
    recorded = dict(line.split() for line in (FIXTURES / "versions.txt").read_text().splitlines())
    if matplotlib.__version__ != recorded["matplotlib"]:
        pytest.skip(f"plots were recorded with matplotlib {recorded['matplotlib']}")
    out, _ = perf_outputs
    assert (out / name).read_bytes() == (FIXTURES / name).read_bytes()


def test_perf_report_returns_frames(perf_outputs):
    _, result = perf_outputs
    two_x, scalar_x = result["frames"]
    assert list(two_x.columns) == ["M", "N", "a (ms)", "b (ms)"]
    assert list(scalar_x["M"]) == [7, 9] and list(scalar_x["N"]) == [7, 9]
    assert math.isclose(two_x["b (ms)"][2], 512 * 1000 / 7 / 2)


def test_perf_report_rejects_ragged_x_values():
    pytest.importorskip("pandas")
    bench = testing.Benchmark(x_names=["M", "N"], x_vals=[(1, 2, 3)], line_arg="p", line_vals=[0],
                              line_names=["p"], plot_name="", args={})
    with pytest.raises(ValueError, match="Expected 2 values"):
        testing.perf_report(bench)(lambda M, N, p: 1.0).run()


# -- do_bench against a fake device ---------------------------------------------

class FakeClock:
    now = 0.0


class FakeEvent:
    def __init__(self, enable_timing: bool = False):
        assert enable_timing
        self.t = None

    def record(self):
        self.t = FakeClock.now

    def elapsed_time(self, end: "FakeEvent") -> float:
        return end.t - self.t


class FakeDeviceInterface:
    Event = FakeEvent
    syncs = 0

    def synchronize(self):
        FakeDeviceInterface.syncs += 1


class FakeDriver:
    """Each call of the benchmarked function advances the clock by its cost;
    clearing the cache is counted."""

    def __init__(self):
        self.clears = 0

    def get_device_interface(self):
        return FakeDeviceInterface()

    def get_empty_cache_for_benchmark(self):
        return "cache"

    def clear_cache(self, cache):
        assert cache == "cache"
        self.clears += 1


@pytest.fixture
def fake_driver():
    fake = FakeDriver()
    driver.set_active(fake)
    yield fake
    driver.reset_active()


def _costly(costs):
    calls = []

    def fn():
        FakeClock.now += costs[min(len(calls), len(costs) - 1)]
        calls.append(1)
    return fn, calls


def test_do_bench_sizes_warmup_and_repetitions_from_an_estimate(fake_driver):
    fn, calls = _costly([0.5])          # every call takes 0.5 ms
    t = testing.do_bench(fn, warmup=10, rep=20)
    # 1 first call + 5 estimate calls + 20 warm-up (10 ms) + 40 timed (20 ms)
    assert len(calls) == 1 + 5 + 20 + 40
    assert fake_driver.clears == 5 + 40      # the L2 flush before each estimated and each timed call
    assert t == pytest.approx(0.5)


def test_do_bench_statistics_and_quantiles(fake_driver):
    costs = [1.0] * 6 + [1.0] * 1 + [float(i) for i in range(1, 101)]
    fn, _ = _costly(costs)
    times = testing.do_bench(fn, warmup=1, rep=100, return_mode="all")
    assert times == [float(i) for i in range(1, 101)]
    for mode, expect in [("min", 1.0), ("max", 100.0), ("mean", 50.5), ("median", 50.5)]:
        fn, _ = _costly(costs)
        assert testing.do_bench(fn, warmup=1, rep=100, return_mode=mode) == expect
    fn, _ = _costly(costs)
    assert testing.do_bench(fn, warmup=1, rep=100, quantiles=[0.5, 0.2, 0.8]) == \
        pytest.approx([50.5, 20.8, 80.2])
    fn, _ = _costly(costs)
    assert testing.do_bench(fn, warmup=1, rep=100, quantiles=[0.5]) == 50.5


def test_do_bench_clears_gradients_before_each_timed_call(fake_driver):
    class T:
        grad = "stale"
    seen = []
    t = T()

    def fn():
        seen.append(t.grad)
        t.grad = "accumulated"
        FakeClock.now += 1.0
    testing.do_bench(fn, warmup=2, rep=3, grad_to_none=[t])
    assert seen[-3:] == [None, None, None]


def test_do_bench_rejects_unknown_return_mode(fake_driver):
    with pytest.raises(ValueError, match="return_mode"):
        testing.do_bench(lambda: None, return_mode="p90")


def test_quantiles_interpolate_like_numpy():
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    for q in (0.0, 0.1, 0.25, 0.5, 0.9, 1.0):
        assert quantile(values, q) == pytest.approx(np.quantile(values, q))
    with pytest.raises(ValueError):
        quantile(values, 1.5)
    assert summarize([1.0, 2.0], None, "mean") == 1.5


# -- assert_close -------------------------------------------------------------------

def test_assert_close_defaults_and_callables():
    testing.assert_close(np.float32(1.0), 1.005)                 # atol 1e-2 by default
    with pytest.raises(AssertionError, match="is not close to"):
        testing.assert_close(1.0, 1.02, err_msg="scalar")
    testing.assert_close([1.0, 2.0], [1.0, 2.5], atol=lambda dt: 0.6)
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol=0, rtol=lambda dt: 0.1)
    testing.assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    testing.assert_close(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([True, False]), np.array([True, True]))


def test_assert_close_takes_numpy_arrays():
    testing.assert_close(np.ones(3), np.ones(3) + 1e-3)
    with pytest.raises(AssertionError):
        testing.assert_close(np.ones(3), np.ones(3) + 1)
