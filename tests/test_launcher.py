"""The Rust launch entry (`_core.FastLauncher`) without a GPU: what it takes
itself and what it hands to the Python path (grids, keyword arguments, launch
options, table misses), that its key is the Python key and each tensor is
read once, and that TRITIUM_INTERPRET is honoured on every launch."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.runtime import driver
from tritium.runtime import launcher as launcher_module
from tritium.runtime.specialization import specializer

pytestmark = pytest.mark.skipif(not hasattr(_core, "FastLauncher"), reason="extension built without FastLauncher")


class CountingTensor:
    """data_ptr() and dtype, counting how often the address is read."""

    reads = 0

    def __init__(self, ptr: int, dtype: str = "f4"):
        self._ptr = ptr
        self.dtype = np.dtype(dtype)

    def data_ptr(self) -> int:
        CountingTensor.reads += 1
        return self._ptr


class CMethodTensor(np.ndarray):
    """A type whose data_ptr is a C method and dtype a C getset, as in
    torch.Tensor: the key calls the type's descriptors directly."""

    data_ptr = np.ndarray.item


def c_tensor(address: int) -> CMethodTensor:
    return np.array([address], dtype=np.int64).view(CMethodTensor)


@tritium.jit
def k(x, n, f, B: tl.constexpr):
    pass


def recorder():
    calls = []

    def slow(grid, args, kwargs):
        calls.append((grid, args, kwargs))
        return "slow"
    return slow, calls


def launcher(fn=k):
    s = specializer(fn)
    slow, calls = recorder()
    return s, _core.FastLauncher(s._plan, slow, driver.torch_queries), calls


def test_prepare_gives_the_python_key_and_reads_each_tensor_once():
    s, L, _ = launcher()
    t = CountingTensor(64)
    s.key_python((t, 5, 0.5, 16))           # the first sight of a dtype is Python's
    CountingTensor.reads = 0
    key, grid, reads = L.prepare_only((2, 3), (t, 5, 0.5, 16))
    assert CountingTensor.reads == 1
    assert key == s.bind(t, 5, 0.5, 16)[0] == s.key_python((t, 5, 0.5, 16))
    assert grid == (2, 3, 1)
    assert reads == (("ptr", 64), 5, 0.5, None)


def test_c_method_tensors_key_like_python():
    s, L, _ = launcher()
    for addr in (1 << 20, (1 << 20) + 4, 0):
        t = c_tensor(addr)
        s.key_python((t, 7, 1.0, 3))
        key, _, reads = L.prepare_only(1, (t, 7, 1.0, 3))
        assert key == s.key_python((t, 7, 1.0, 3))
        assert reads[0] == ("ptr", addr)


def test_keyword_parameters_bind_like_python():
    s, L, _ = launcher()
    t = CountingTensor(128)
    s.key_python((t, 1, 2.0, 8))
    key, grid, reads = L.prepare_only(4, (t, 1), {"f": 2.0, "B": 8})
    assert key == s.bind(t, 1, f=2.0, B=8)[0]
    assert grid == (4, 1, 1) and reads == (("ptr", 128), 1, 2.0, None)


@pytest.mark.parametrize("kwargs", [{"num_warps": 4}, {"stream": 0}, {"enable_fp_fusion": False}, {"nope": 1}, {"x": 1}])
def test_options_unknown_and_duplicate_keywords_are_pythons(kwargs):
    s, L, calls = launcher()
    t = CountingTensor(64)
    s.key_python((t, 5, 0.5, 16))
    full = {"f": 0.5, "B": 16, **kwargs}
    assert L.prepare_only((1,), (t, 5), full) is None
    assert L((1,), (t, 5), full) == "slow"
    assert calls == [((1,), (t, 5), full)]


@pytest.mark.parametrize("grid", [[1], (), (1, 2, 3, 4), (-1,), (1.0,), (True,), (1, -2), 2 ** 64,
                                  lambda meta: (1,), "1", None])
def test_unusual_grids_go_to_python_unchanged(grid):
    s, L, calls = launcher()
    t = CountingTensor(64)
    s.key_python((t, 5, 0.5, 16))
    assert L.prepare_only(grid, (t, 5, 0.5, 16)) is None
    assert L[grid](t, 5, 0.5, 16) == "slow"
    assert calls[0][0] is grid


@pytest.mark.parametrize("grid,want", [((3,), (3, 1, 1)), ((3, 4), (3, 4, 1)), ((3, 4, 5), (3, 4, 5)),
                                       (6, (6, 1, 1)), ((0,), (0, 1, 1)), ((2 ** 40,), (2 ** 40, 1, 1))])
def test_grids_the_rust_entry_takes(grid, want):
    s, L, _ = launcher()
    t = CountingTensor(64)
    s.key_python((t, 5, 0.5, 16))
    assert L.prepare_only(grid, (t, 5, 0.5, 16))[1] == want


def test_a_table_miss_and_bad_calls_go_to_python():
    s, L, calls = launcher()
    t = CountingTensor(64)
    s.key_python((t, 5, 0.5, 16))
    assert len(L) == 0
    assert L((1,), (t, 5, 0.5, 16)) == "slow"           # nothing loaded yet
    assert L((1,), (t, 5), {}) == "slow"                 # missing arguments: Python's error
    assert L((1,), (t, 5, 0.5, 16, 1), {}) == "slow"     # too many
    assert L((1,), (object(), 5, 0.5, 16), {}) == "slow"  # not a kernel argument
    assert len(calls) == 4 and all(c[2] == {} for c in calls)


def test_only_loaded_kernels_can_be_inserted():
    s, L, _ = launcher()
    with pytest.raises(TypeError):
        L.insert(s.key_python((CountingTensor(64), 5, 0.5, 16)), 0, object())


def test_no_torch_means_device_0_and_the_default_stream():
    _, L, _ = launcher()
    import sys
    if "torch" in sys.modules:
        pytest.skip("torch is imported in this process")
    assert _core.launch_device_and_stream(L) == (0, 0)


@pytest.mark.parametrize("value,want", [("1", True), ("true", True), ("TRUE", True), ("Yes", True), ("on", True),
                                        ("0", False), ("", False), ("false", False), ("2", False), (" 1", False)])
def test_interpret_switch_matches_python(monkeypatch, value, want):
    from tritium.settings import interpret_requested
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("TRITIUM_INTERPRET", value)
    assert _core.interpret_requested() is want is interpret_requested()
    monkeypatch.delenv("TRITIUM_INTERPRET")
    monkeypatch.setenv("TRITON_INTERPRET", value)
    assert _core.interpret_requested() is want is interpret_requested()
    monkeypatch.delenv("TRITON_INTERPRET")
    assert _core.interpret_requested() is False


@tritium.jit
def store_kernel(out_ptr, v, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, offs + v)


def test_interpret_env_is_read_on_every_launch(monkeypatch):
    """With the Rust entry installed, setting or clearing TRITIUM_INTERPRET
    between two launches switches between the interpreter and the GPU path."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    fn = tritium.jit(store_kernel.fn)
    s = specializer(fn)
    fn._fast = _core.FastLauncher(s._plan, launcher_module._slow_path(weakref.ref(fn)), driver.torch_queries)
    assert type(fn[(1,)]).__name__ == "GridLaunch"
    out = np.zeros(8, dtype=np.int32)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    fn[(2,)](out, 10, B=4)
    assert out.tolist() == list(range(10, 18))
    monkeypatch.setenv("TRITIUM_INTERPRET", "0")
    if not driver.available():
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            fn[(2,)](out, 10, B=4)
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    out[:] = 0
    fn.run(out, 20, B=4, grid=(2,))
    assert out.tolist() == list(range(20, 28))


def test_jit_without_the_rust_entry_returns_a_partial():
    fn = tritium.jit(store_kernel.fn)
    assert fn._fast is None
    assert type(fn[(1,)]).__name__ == "partial"


def test_the_slow_path_holds_the_kernel_weakly():
    fn = tritium.jit(store_kernel.fn)
    slow = launcher_module._slow_path(weakref.ref(fn))
    del fn
    import gc
    gc.collect()
    with pytest.raises(RuntimeError, match="no longer exists"):
        slow((1,), (), {})


def test_c_method_types_use_the_direct_reads_and_python_classes_do_not():
    s, L, _ = launcher()
    c, p = c_tensor(1 << 20), CountingTensor(1 << 20)
    s.key_python((c, 1, 1.0, 1))
    s.key_python((p, 1, 1.0, 1))
    L.prepare_only(1, (c, 1, 1.0, 1))
    L.prepare_only(1, (p, 1, 1.0, 1))
    seen = {t: (how, direct, c) for t, how, direct, c in _core.KeyPlanProbe(s._plan).type_cache()}
    # ndarray.item is a METH_VARARGS method named item, not data_ptr: its C
    # function is not taken (cpython.rs checks the name and the flags)
    assert seen[CMethodTensor] == ("data_ptr", True, False)
    assert seen[CountingTensor] == ("data_ptr", False, False)


def test_a_python_getattribute_keeps_the_generic_reads():
    class Watched(CMethodTensor):
        looked_up: list = []

        def __getattribute__(self, name):
            Watched.looked_up.append(name)
            return super().__getattribute__(name)
    s, L, _ = launcher()
    w = np.array([1 << 20], dtype=np.int64).view(Watched)
    s.key_python((w, 1, 1.0, 1))
    Watched.looked_up.clear()
    key, _, reads = L.prepare_only(1, (w, 1, 1.0, 1))
    assert "data_ptr" in Watched.looked_up and "dtype" in Watched.looked_up
    assert reads[0] == ("ptr", 1 << 20) and key == s.key_python((w, 1, 1.0, 1))


@tritium.jit
def _toggle_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def test_setting_interpret_detaches_and_restores_the_rust_entry():
    """`kernel.interpret = True` after GPU launches must reach the interpreter:
    the Rust entry does not read the flag, so the setter detaches it."""
    sentinel = object()
    k = _toggle_kernel
    k.__dict__["_cuda_launcher"] = type("FakeLauncher", (), {"fast": sentinel})()
    try:
        k.interpret = False
        assert k._fast is sentinel
        k.interpret = True
        assert k._fast is None
        x = np.arange(8, dtype=np.float32)
        out = np.zeros(8, np.float32)
        k[(1,)](x, out, BLOCK=8)            # runs in the interpreter, not the (fake) entry
        np.testing.assert_array_equal(out, x + 1.0)
        k.interpret = False
        assert k._fast is sentinel
    finally:
        del k.__dict__["_cuda_launcher"]
        k.interpret = None
        assert k._fast is None


@tritium.jit
def _none_default(x_ptr, n, bias_ptr=None, B: tl.constexpr = 4):
    tl.store(x_ptr, n)


def test_a_none_default_keeps_the_rust_key():
    """A parameter defaulting to None is a real default: the Rust key serves
    the kernel, fills it in as Python does, and gives Python's key."""
    s = specializer(_none_default)
    assert s._plan is not None
    t = CountingTensor(64)
    s.key_python((t, 5, None, 4))
    key, bound, _ = s.bind(t, 5)
    assert bound == (t, 5, None, 4)
    assert key == s.key_python((t, 5, None, 4))
    b = CountingTensor(128)
    s.key_python((t, 5, b, 4))
    assert s.bind(t, 5, bias_ptr=b)[0] == s.key_python((t, 5, b, 4))


@tritium.jit
def kc(x, n, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    pass


def test_keys_without_constexprs_are_bytes_alone():
    s, L, _ = launcher()
    t = c_tensor(1 << 20)
    s.key_python((t, 5, 0.5, 16))
    key, _, _ = L.prepare_only(1, (t, 5, 0.5, 16))
    assert isinstance(key, tuple) and key == s.key_python((t, 5, 0.5, 16))   # B is a constexpr

    @tritium.jit
    def plain(x, n):
        pass
    sp = specializer(plain)
    key = sp.key_python((t, 5))
    assert isinstance(key, bytes) and len(key) == 16 and sp.bind(t, 5)[0] == key
    assert sp.specialization(key).signature["n"] == tl.int32


@pytest.mark.parametrize("consts,inline", [((4, True, None), True), ((1, False, 7), True),
                                           ((2 ** 63 - 1, True, -5), True),
                                           ((2 ** 64, True, None), False), ((1.5, True, None), False),
                                           (("s", True, None), False), (((1, 2), True, None), False)])
def test_native_key_holds_int_bool_none_constexprs_inline(consts, inline):
    """The launcher's table key: ints within i64, bools and None inline;
    anything else leaves the key to Python's (class, value) entries."""
    s = specializer(kc)
    t = c_tensor(1 << 20)
    s.key_python((t, 5) + consts)
    key = s._plan.key((t, 5) + consts)
    assert key == s.key_python((t, 5) + consts)
    native = _core.KeyPlanProbe(s._plan).native_key(key)
    assert (native is not None) == inline
    if inline:
        assert len(native) == 2 * 5 and native[1] == native[3] == 0      # runtime entries carry no value
        other = _core.KeyPlanProbe(s._plan).native_key(s.key_python((t, 5) + consts[:2] + (("x", 1),)))
        assert other is None or other != native


def test_native_keys_tell_classes_and_values_apart():
    s = specializer(kc)
    t = c_tensor(1 << 20)
    s.key_python((t, 5, 1, True, None))
    probe = _core.KeyPlanProbe(s._plan)
    nat = {c: tuple(probe.native_key(s.key_python((t, 5) + c))) for c in
           [(1, True, None), (True, True, None), (1, 1, None), (0, True, None), (1, True, 0), (-1, True, None)]}
    assert len(set(nat.values())) == len(nat)


def test_native_key_rejects_keys_of_another_signature():
    s = specializer(kc)
    with pytest.raises(ValueError, match="another signature"):
        _core.KeyPlanProbe(s._plan).native_key(b"\0" * 8)


def test_options_of_a_call_without_any_are_an_empty_read_only_mapping():
    s = specializer(kc)
    t = c_tensor(1 << 20)
    s.key_python((t, 5, 1, True, None))
    _, _, opts = s.bind(t, 5, 1, True, None)
    assert opts == {} and not opts
    with pytest.raises(TypeError):
        opts["num_warps"] = 8
    _, _, opts = s.bind(t, 5, 1, True, None, num_warps=8)
    assert opts == {"num_warps": 8}



def test_tensor_types_interleaved_in_one_call_key_like_python():
    """The last direct-read tensor type is remembered across arguments and
    calls; a different type in between must still take its own reads."""
    @tritium.jit
    def four(a, b, c, d):
        pass
    s = specializer(four)

    class Sub(CMethodTensor):
        pass
    mixes = [(c_tensor(1 << 20), CountingTensor(64), c_tensor((1 << 20) + 4), CountingTensor(66)),
             (CountingTensor(64), c_tensor(1 << 20), np.array([3], dtype=np.int64).view(Sub), c_tensor(48)),
             (c_tensor(16), c_tensor(17), c_tensor(32), CountingTensor(8, "f2"))]
    for args in mixes:
        s.key_python(args)
    for _ in range(2):
        for args in mixes:
            assert s._plan.key(args) == s.key_python(args)


_EDGES = [0, 1, -1, 15, 16, 17, -16, -17, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, 2 ** 63 - 1,
          -(2 ** 63), 2 ** 63, 2 ** 64 - 1, 2 ** 64, -(2 ** 63) - 1, 48, 1 << 40]


@pytest.mark.parametrize("v", _EDGES)
def test_int_keys_at_the_edges_match_python(v):
    """The launch path's plain-mask int test agrees with Python's rules at
    every width boundary (or leaves the value to Python)."""
    s = specializer(k)
    t = c_tensor(1 << 20)
    s.key_python((t, 5, 0.5, 16))
    try:
        want = s.key_python((t, v, 0.5, 16))
    except (ValueError, OverflowError):
        want = None
    got = s._plan.key((t, v, 0.5, 16))
    assert got is None or got == want


def test_random_ints_and_addresses_key_like_python():
    import random
    rng = random.Random(7)
    s = specializer(k)
    s.key_python((c_tensor(1 << 20), 5, 0.5, 16))
    for _ in range(3000):
        bits = rng.choice([4, 8, 31, 32, 40, 62, 63, 64])
        v = rng.randrange(-(1 << bits), 1 << bits)
        addr = rng.randrange(0, 1 << 47) & ~rng.choice([0, 1, 3, 7, 15])
        args = (c_tensor(addr), v, 0.5, rng.choice([1, 16, 17]))
        try:
            want = s.key_python(args)
        except (ValueError, OverflowError):
            want = None
        got = s._plan.key(args)
        assert got is None or got == want, (v, addr)
