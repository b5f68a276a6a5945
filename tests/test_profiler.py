"""`triton.profiler` (python/tritium/profiler) on the CPU: sessions, scopes
and kernel launches recorded as a tree; interpreter launches timed with the
host clock, GPU launches and scopes with device events (a fake device here,
as tests/test_testing.py times do_bench); the hatchet file finalize writes,
read back and printed by the viewer with derived columns; nothing recorded
and the Rust fast path untouched while no session is active. Also
`triton._C.libtriton.nvidia.cublas` without CUDA."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
import tritium.profiler as proton
from tritium.profiler import hooks, viewer
from tritium.runtime import cublas, driver, launch_hooks


@pytest.fixture(autouse=True)
def no_sessions(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    yield
    proton.finalize()       # every session a failing test left open
    assert launch_hooks.hook is None


def _metadata(grid, kernel, args):
    n = args["n"]
    return {"name": f"{kernel.name} [n={n}]", "flops32": 2.0 * n, "bytes": 8 * n, "note": "not a number"}


@triton.jit(interpret=True, launch_metadata=_metadata)
def axpy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def _load(name):
    with open(name) as f:
        return json.load(f)


def _child(frame, name):
    found = [c for c in frame["children"] if c["frame"]["name"] == name]
    assert len(found) == 1, [c["frame"]["name"] for c in frame["children"]]
    return found[0]


def _run_axpy(n=100):
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    axpy[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y


def test_interpreted_launches_nest_in_scopes_with_launch_metadata():
    sid = proton.start("prof", hook="triton")
    with proton.scope("outer", {"bytes": 5}):
        with proton.scope("inner"):
            _run_axpy(100)
            _run_axpy(100)
        _run_axpy(50)
    proton.finalize(sid)
    root, devices = _load("prof.hatchet")
    assert devices == {}        # interpreted launches run on no device
    assert root["frame"] == {"name": "ROOT", "type": "function"}
    assert root["metrics"] == {"count": 0, "time (ns)": 0}
    outer = _child(root, "outer")
    assert outer["metrics"] == {"bytes": 5}
    kernel = _child(_child(outer, "inner"), "axpy [n=100]")
    m = kernel["metrics"]
    assert m["count"] == 2 and m["flops32"] == 400.0 and m["bytes"] == 1600
    assert m["time (ns)"] > 0 and "note" not in m and kernel["children"] == []
    assert _child(outer, "axpy [n=50]")["metrics"]["count"] == 1


def test_without_the_triton_hook_kernels_are_named_by_function():
    proton.start("plain")
    _run_axpy()
    proton.finalize()
    kernel = _child(_load("plain.hatchet")[0], "axpy")
    assert set(kernel["metrics"]) == {"count", "time (ns)"}


def test_nothing_is_recorded_without_an_active_session():
    assert hooks.enter_scope("x", {"flops": 1}) is None and launch_hooks.hook is None
    sid = proton.start("quiet", hook="triton")
    assert launch_hooks.hook is hooks.LAUNCH_HOOK
    proton.deactivate(sid)
    assert launch_hooks.hook is None
    with proton.scope("ignored", {"flops": 1}):
        _run_axpy()
    proton.activate(sid)
    with proton.scope("kept"):
        pass
    proton.finalize()
    root = _load("quiet.hatchet")[0]
    # an untimed scope with no metrics is still a frame; the inactive one is not
    assert [c["frame"]["name"] for c in root["children"]] == ["kept"]
    assert launch_hooks.hook is None


def test_a_session_detaches_the_rust_fast_path_and_gives_it_back():
    @triton.jit
    def k(x):
        pass
    fast = object()
    k.__dict__["_cuda_launcher"] = types.SimpleNamespace(fast=fast)
    launch_hooks.register(k)
    k._attach_fast()
    assert k._fast is fast
    sid = proton.start("detach")
    assert k._fast is None
    proton.deactivate(sid)
    assert k._fast is fast
    proton.activate()
    assert k._fast is None
    proton.finalize()
    assert k._fast is fast


def test_sessions_start_and_stop_while_other_threads_register_kernels():
    # proton.start/deactivate walk every registered @jit function while
    # another thread's first launch registers one: the walk saw the set
    # change ("Set changed size during iteration") before the lock
    class Fn:
        def _attach_fast(self):
            pass
    keep = [Fn() for _ in range(20000)]
    for f in keep:
        launch_hooks.register(f)
    errors, stop = [], threading.Event()

    def toggle():
        try:
            for i in range(40):
                if i % 2 == 0:
                    proton.start("threads")
                else:
                    proton.deactivate()
        except Exception as e:      # noqa: BLE001 - the test reports it
            errors.append(e)

    def add():
        while not stop.is_set():
            f = Fn()
            keep.append(f)
            launch_hooks.register(f)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        adder, toggler = threading.Thread(target=add), threading.Thread(target=toggle)
        adder.start()
        toggler.start()
        toggler.join()
        stop.set()
        adder.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert launch_hooks.hook is None


# -- device timing, with a fake device ----------------------------------------

class Clock:
    now = 0.0       # ms


class FakeEvent:
    def __init__(self, enable_timing=False):
        assert enable_timing
        self.t = None

    def record(self):
        self.t = Clock.now

    def elapsed_time(self, end):
        return end.t - self.t


class FakeDevice:
    Event = FakeEvent
    syncs = 0

    def synchronize(self):
        FakeDevice.syncs += 1


@pytest.fixture
def fake_device():
    fake = types.SimpleNamespace(get_device_interface=FakeDevice)
    driver.set_active(fake)
    yield fake
    proton.finalize()
    driver.reset_active()


def test_torch_without_a_gpu_times_interpreter_runs_by_the_host_clock():
    # a CPU-only torch hands out torch.cuda, whose events fail when recorded
    # ("Torch not compiled with CUDA enabled"): a scope crashed with it
    class NoGpu:
        @staticmethod
        def is_available():
            return False

        class Event:
            def __init__(self, enable_timing=False):
                pass

            def record(self):
                raise AssertionError("Torch not compiled with CUDA enabled")

        @staticmethod
        def synchronize():
            raise AssertionError("Torch not compiled with CUDA enabled")
    driver.set_active(types.SimpleNamespace(get_device_interface=lambda: NoGpu))
    try:
        proton.start("cpu")
        with proton.scope("s", {"bytes": 8}):
            _run_axpy()
        with proton.scope("torch work"):
            pass
        proton.finalize()
    finally:
        driver.reset_active()
    root = _load("cpu.hatchet")[0]
    scope = _child(root, "s")
    assert scope["metrics"] == {"bytes": 8}
    kernel = _child(scope, "axpy")["metrics"]
    assert kernel["count"] == 1 and kernel["time (ns)"] > 0
    assert _child(root, "torch work")["metrics"] == {}


def test_scopes_without_kernels_are_timed_with_device_events(fake_device):
    proton.start("scopes")
    for _ in range(3):
        with proton.scope("torch", {"flops16": 10.0}):
            Clock.now += 2.0          # 2 ms of "GPU work"
    with proton.scope("outer"):
        with proton.scope("a"):
            Clock.now += 1.0
        Clock.now += 5.0              # not counted: the outer scope's time is its children's
        with proton.scope("b"):
            Clock.now += 0.5
    proton.finalize()
    root = _load("scopes.hatchet")[0]
    torch_scope = _child(root, "torch")["metrics"]
    assert torch_scope == {"flops16": 30.0, "time (ns)": 6_000_000, "count": 3}
    outer = _child(root, "outer")
    assert "time (ns)" not in outer["metrics"]
    assert _child(outer, "a")["metrics"]["time (ns)"] == 1_000_000
    assert _child(outer, "b")["metrics"]["time (ns)"] == 500_000


def test_gpu_launches_are_timed_around_the_launch_with_metadata(fake_device):
    @triton.jit(launch_metadata=lambda grid, kernel, args: {
        "name": f"{kernel.name} {grid} w{kernel.num_warps} N={args['N']}", "flops16": args["N"] * 1.0})
    def k(x, N, BLOCK: tl.constexpr):
        pass
    kernel = types.SimpleNamespace(num_warps=8, shared_bytes=0, device=0)
    launches = []

    def launch():
        launches.append(1)
        Clock.now += 0.25
    before = FakeDevice.syncs
    proton.start("gpu", hook="triton")
    with proton.scope("s"):
        for _ in range(hooks.PENDING_LIMIT + 1):    # a full pending list is read (one synchronize) on the way
            hooks.LAUNCH_HOOK.gpu_launch(k, kernel, (4, 1, 1), ("x", 7, 64), launch)
    proton.finalize()
    assert len(launches) == hooks.PENDING_LIMIT + 1 and FakeDevice.syncs == before + 2
    frame = _child(_child(_load("gpu.hatchet")[0], "s"), "k (4, 1, 1) w8 N=7")
    assert frame["metrics"] == {"count": hooks.PENDING_LIMIT + 1, "time (ns)": 250_000 * (hooks.PENDING_LIMIT + 1),
                                "flops16": 7.0 * (hooks.PENDING_LIMIT + 1), "device_id": "0", "device_type": "CUDA"}


def test_a_launch_records_into_the_sessions_active_when_it_began(fake_device):
    # the launch_metadata function (standing for another thread) stops a
    # session mid-launch: the launch is still recorded whole in both; the
    # device went to the wrong session's frame before (zip with the new list)
    first = proton.start("first", hook="triton")

    def metadata(grid, kernel, args):
        proton.deactivate(first)
        return {"name": "k0", "bytes": 4}

    @triton.jit(launch_metadata=metadata)
    def k(x):
        pass
    proton.start("second", hook="triton")
    kernel = types.SimpleNamespace(num_warps=4, shared_bytes=0, device=0)
    hooks.LAUNCH_HOOK.gpu_launch(k, kernel, (1, 1, 1), ("x",), lambda: None)
    proton.finalize()
    for name in ("first", "second"):
        root, devices = _load(f"{name}.hatchet")
        metrics = _child(root, "k0")["metrics"]
        assert metrics["device_id"] == "0" and metrics["bytes"] == 4 and metrics["count"] == 1, name


def test_launches_on_several_threads_are_all_counted(fake_device, monkeypatch):
    # four threads launch under their own scope of one name: frames and
    # counts were updated without a lock (2-8% of the launches lost, and a
    # scope's frame made twice could drop one thread's)
    monkeypatch.setattr(hooks, "PENDING_LIMIT", 8)

    @triton.jit
    def k(x):
        pass
    kernel = types.SimpleNamespace(num_warps=4, shared_bytes=0, device=0)
    proton.start("threaded")

    def work():
        with proton.scope("worker", {"bytes": 1}):
            for _ in range(5000):
                hooks.LAUNCH_HOOK.gpu_launch(k, kernel, (1, 1, 1), ("x",), lambda: None)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    proton.finalize()
    worker = _child(_load("threaded.hatchet")[0], "worker")
    assert worker["metrics"] == {"bytes": 4}
    assert _child(worker, "k")["metrics"]["count"] == 20000


# -- the session API ----------------------------------------------------------------

def test_session_api_checks_and_names():
    with pytest.raises(ValueError, match="backend 'instrumentation' is not supported"):
        proton.start("x", backend="instrumentation")
    with pytest.raises(ValueError, match="hook must be None or 'triton'"):
        proton.start("x", hook="torch")
    a = proton.start("same.hatchet")
    assert proton.start("same.hatchet") == a
    b = proton.start("other")
    assert b == a + 1
    with pytest.raises(ValueError, match=r"no profiling session 999 \(sessions: "):
        proton.activate(999)
    with pytest.raises(TypeError, match=r"proton.scope\('s'\): metric 'flops' must be a number, got str"):
        with proton.scope("s", {"flops": "many"}):
            pass
    with pytest.raises(ValueError, match="output_format 'json'"):
        proton.finalize(output_format="json")
    proton.finalize(a)
    assert _load("same.hatchet")[1] == {}        # the name already ends in .hatchet
    assert proton.enter_scope("e", metrics={"bytes": 3}) >= 0
    assert proton.exit_scope() >= 0 and proton.exit_scope() == -1
    proton.finalize()
    assert _child(_load("other.hatchet")[0], "e")["metrics"] == {"bytes": 3}


def test_finalize_that_cannot_write_still_ends_the_session():
    # a session named into a missing folder: finalize raises the OSError, yet
    # the session ends, recording stops and the fast path comes back; the
    # other session is still written
    proton.start("missing/folder/run", hook="triton")
    proton.start("written")
    assert launch_hooks.hook is hooks.LAUNCH_HOOK
    with proton.scope("s", {"bytes": 1}):
        pass
    with pytest.raises(FileNotFoundError, match="missing/folder/run.hatchet"):
        proton.finalize()
    assert launch_hooks.hook is None and hooks.RECORDER.sessions == ()
    assert _child(_load("written.hatchet")[0], "s")["metrics"] == {"bytes": 1}
    assert proton.start("again") == proton.start("again")      # nothing of the old sessions left
    proton.finalize()


def test_scope_as_decorator_counts_each_call():
    @proton.scope("decorated", {"bytes": 2})
    def f(v):
        return v + 1
    proton.start("deco")
    assert f(1) == 2 and f(2) == 3
    proton.finalize()
    assert _child(_load("deco.hatchet")[0], "decorated")["metrics"] == {"bytes": 4}


# -- the viewer -------------------------------------------------------------------------

def _frame(name, metrics, *children):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics, "children": list(children)}


PROFILE = [
    _frame("ROOT", {"count": 0, "time (ns)": 0},
           _frame("cublas", {"flops16": 4e12, "bytes": 2e9},
                  _frame("gemm", {"count": 2, "time (ns)": 2_000_000, "device_id": "0", "device_type": "CUDA"})),
           _frame("matmul [M=8]", {"count": 4, "time (ns)": 6_000_000, "flops16": 6e12, "bytes": 1e9}),
           _frame("no time", {"flops16": 1.0}),
           _frame("__proton_launch_metadata", {}, _frame("hidden", {"count": 1, "time (ns)": 5})),
           _frame("empty scope", {})),
    {"CUDA": {"0": {"arch": "90", "num_sms": 132, "clock_rate": 1980000, "memory_clock_rate": 2619000,
                    "bus_width": 5120}}},
]


@pytest.fixture
def profile_file(tmp_path):
    path = tmp_path / "p.hatchet"
    path.write_text(json.dumps(PROFILE))
    return str(path)


def test_viewer_derives_columns_from_inclusive_metrics(profile_file):
    tree, cols = viewer.parse(["tflop16/s", "time/ms", "avg_time/us", "gbyte/s", "time/%", "Count"], profile_file)
    assert cols == ["tflop16/s (inc)", "time/ms (inc)", "avg_time/us (inc)", "gbyte/s (inc)", "time/% (inc)",
                    "count (inc)"]
    assert [c.name for c in tree.children] == ["cublas", "matmul [M=8]", "no time"]
    cub, mm, nt = tree.children
    assert cub.values["tflop16/s (inc)"] == pytest.approx(2000.0)      # 4e12 flops in 2 ms
    assert cub.values["time/ms (inc)"] == pytest.approx(2.0)
    assert cub.values["avg_time/us (inc)"] == pytest.approx(1000.0)
    assert cub.values["gbyte/s (inc)"] == pytest.approx(1000.0)
    assert cub.values["time/% (inc)"] == pytest.approx(25.0)
    assert tree.values["tflop16/s (inc)"] == pytest.approx(10e12 / 8e-3 / 1e12)
    assert mm.values["count (inc)"] == 4
    assert math.isinf(nt.values["tflop16/s (inc)"]) and math.isnan(nt.values["avg_time/us (inc)"])


def test_viewer_prints_the_tree(profile_file, capsys):
    tree, cols = viewer.parse(["tflop16/s", "time/ms"], profile_file)
    viewer.print_tree(tree, cols)
    assert capsys.readouterr().out.splitlines() == [
        "1250.000 8.000 ROOT",
        "├─ 2000.000 2.000 cublas",
        "│  └─ 0.000 2.000 gemm",
        "├─ 1000.000 6.000 matmul [M=8]",
        "└─ inf 0.000 no time",
    ]
    viewer.print_tree(tree, cols, depth=0)
    assert capsys.readouterr().out.splitlines() == ["1250.000 8.000 ROOT"]


def test_viewer_filters_and_errors(profile_file, capsys, tmp_path):
    tree, cols = viewer.parse(["time/ms"], profile_file, exclude="cub.*")
    assert [c.name for c in tree.children] == ["matmul [M=8]", "no time"] and tree.values[cols[0]] == 6.0
    tree, cols = viewer.parse(["time/ms"], profile_file, include="gemm")
    assert [c.name for c in tree.walk()] == ["ROOT", "cublas", "gemm"]
    tree, cols = viewer.parse(["time/ms"], profile_file, threshold=1.0)
    assert [c.name for c in tree.walk()] == ["ROOT", "cublas", "gemm", "matmul [M=8]"]
    with pytest.raises(RuntimeError, match="Metric flops8 is not found"):
        viewer.parse(["tflop8/s"], profile_file)
    with pytest.raises(ValueError, match="'util' needs each GPU's peak rates"):
        viewer.parse(["util"], profile_file)
    # files that are not profiles: an error naming the file (json's own named nothing; a list of
    # metrics was an AttributeError)
    (tmp_path / "cut.hatchet").write_text('[{"frame": {"name": "ROOT"}, "metr')
    with pytest.raises(ValueError, match=r"cut.hatchet: not a hatchet profile \(not JSON: "):
        viewer.parse(["time/ms"], str(tmp_path / "cut.hatchet"))
    (tmp_path / "odd.hatchet").write_text('[{"frame": {"name": "ROOT"}, "metrics": [1], "children": []}, {}]')
    with pytest.raises(ValueError, match="odd.hatchet: not a hatchet profile \\(frame 'ROOT' has metrics list"):
        viewer.parse(["time/ms"], str(tmp_path / "odd.hatchet"))
    assert viewer.main(["-l", profile_file]) == 0
    assert capsys.readouterr().out.splitlines() == ["Available metrics:", "- count", "- time", "- flops16", "- bytes"]


def test_finalize_writes_what_the_viewer_reads():
    proton.start("round", hook="triton")
    with proton.scope("s", {"flops32": 1e6}):
        _run_axpy(64)
    proton.finalize()
    tree, cols = viewer.parse(["flop32/s", "time/s"], "round.hatchet")
    s = tree.children[0]
    assert s.name == "s" and [c.name for c in s.children] == ["axpy [n=64]"]
    t = s.values["time/s (inc)"]
    assert 0 < t < 60 and s.values["flop32/s (inc)"] == pytest.approx((1e6 + 128.0) / t)


# -- under the switch, in a fresh interpreter -----------------------------------

def test_triton_profiler_and_libtriton_import_under_the_switch(tmp_path):
    code = (
        "import tritium; tritium.install_as_triton()\n"
        "import triton.profiler as proton\n"
        "import triton.profiler.viewer as v\n"
        "from triton._C.libtriton import nvidia\n"
        "import tritium.profiler, tritium.profiler.viewer\n"
        "assert proton is tritium.profiler and v is tritium.profiler.viewer\n"
        "print(proton.start('first', hook='triton'), nvidia.cublas.CublasLt.__name__)\n"
        "proton.finalize()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "CublasLt"]     # the tutorial activates session 0
    assert (tmp_path / "first.hatchet").exists()


class FakeTensor:
    def __init__(self, shape, dtype="torch.float16", contiguous=True, device="cuda:0"):
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self._contiguous = contiguous

    def is_contiguous(self):
        return self._contiguous


def test_cublas_matmul_checks_its_operands():
    f = FakeTensor
    assert cublas.matmul_problem(f((8, 32)), f((16, 32)), f((8, 16))) == (8, 16, 32, "torch.float16")
    with pytest.raises(RuntimeError, match="unsupported dtype torch.int8"):
        cublas.matmul_problem(f((8, 32), "torch.int8"), f((16, 32), "torch.int8"), f((8, 16), "torch.int8"))
    with pytest.raises(RuntimeError, match="must have one dtype, got torch.float16, torch.bfloat16"):
        cublas.matmul_problem(f((8, 32)), f((16, 32), "torch.bfloat16"), f((8, 16)))
    with pytest.raises(RuntimeError, match=r"expected a.shape\[1\] == b.shape\[1\] \(b is given transposed"):
        cublas.matmul_problem(f((8, 32)), f((32, 16)), f((8, 16)))
    with pytest.raises(RuntimeError, match=r"c is \[16, 8\], expected \[8, 16\]"):
        cublas.matmul_problem(f((8, 32)), f((16, 32)), f((16, 8)))
    with pytest.raises(RuntimeError, match="only 2-D"):
        cublas.matmul_problem(f((2, 8, 32)), f((16, 32)), f((8, 16)))
    with pytest.raises(RuntimeError, match="'b' must be contiguous"):
        cublas.matmul_problem(f((8, 32)), f((16, 32), contiguous=False), f((8, 16)))
    with pytest.raises(TypeError, match="'a' must be a tensor, got int"):
        cublas.matmul_problem(3, f((16, 32)), f((8, 16)))
    # host memory or two devices: an error, not a crash inside cuBLASLt
    with pytest.raises(RuntimeError, match="'b' is on cpu, expected a CUDA tensor"):
        cublas.matmul_problem(f((8, 32)), f((16, 32), device="cpu"), f((8, 16)))
    with pytest.raises(RuntimeError, match="must be on one device, got cuda:0, cuda:0, cuda:1"):
        cublas.matmul_problem(f((8, 32)), f((16, 32)), f((8, 16), device="cuda:1"))


def test_cublas_without_the_library_is_a_clear_error(monkeypatch):
    with pytest.raises(TypeError, match="the workspace must be a CUDA tensor, got bytes"):
        cublas.CublasLt(b"workspace")
    with pytest.raises(TypeError, match="the workspace must be a CUDA tensor, got one on cpu"):
        cublas.CublasLt(types.SimpleNamespace(device="cpu", data_ptr=lambda: 4096, numel=lambda: 1024,
                                              element_size=lambda: 1))
    monkeypatch.setattr(cublas, "_lib", None)
    monkeypatch.setattr(cublas, "library_path", lambda: None)
    workspace = types.SimpleNamespace(data_ptr=lambda: 4096, numel=lambda: 1024, element_size=lambda: 1)
    with pytest.raises(RuntimeError, match=r"cuBLASLt \(libcublasLt.so\) was not found"):
        cublas.CublasLt(workspace)
