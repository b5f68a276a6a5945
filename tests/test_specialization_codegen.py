"""Specialization facts reaching generated code: an argument specialized as
equal to 1 is the constant 1 in the kernel, so `offs * stride` folds away
and the access keeps the contiguity of `offs` (16-byte vectors)."""
import re

import tritium
import tritium.language as tl
from tritium.backends import INTEGER, POINTER, Backend, Property, divisibility, equal_to_1
from tritium.runtime.specialization import specializer

from test_specialization import FakeTensor as Tensor


@tritium.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride))


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32"}


def compile_with(attrs: dict):
    return tritium.compile(strided_copy, signature=SIG, constexprs={"BLOCK": 1024}, target="cuda:90",
                           attrs=attrs)


def param_used(llir: str, kernel: str, index: int) -> bool:
    """Whether the kernel's LLVM parameter `index` is used in its body."""
    define = next(line for line in llir.splitlines() if line.startswith("define") and f"@{kernel}(" in line)
    params = re.findall(r"(%[\w.]+)[,)]", define)
    assert index < len(params), define
    body = llir[llir.index(define) + len(define):]
    return re.search(re.escape(params[index]) + r"\b", body) is not None


def stride_param_used(llir: str) -> bool:
    return param_used(llir, "strided_copy", 2)


def test_equal_to_1_stride_disappears_and_loads_are_vectors():
    ck = compile_with({"divisibility": ["x_ptr", "y_ptr"], "equal_to_1": ["stride"]})
    assert "equal_to_1" in ck.asm["ir"]
    assert not stride_param_used(ck.asm["llir"])
    assert "ld.global.v4.f32" in ck.asm["ptx"]


def test_without_equal_to_1_the_stride_multiplies_and_loads_are_scalar():
    ck = compile_with({"divisibility": ["x_ptr", "y_ptr"]})
    assert "equal_to_1" not in ck.asm["ir"]
    assert stride_param_used(ck.asm["llir"])
    assert "ld.global.v4.f32" not in ck.asm["ptx"]
    assert "st.global.v4.f32" in ck.asm["ptx"]   # the store's pointer is still contiguous


# -- a property declared by a test backend changes only its arguments' code ---
#
# The three accesses use different element types (x: f32 loads, y: f16 loads,
# out: f32 stores), so each PTX memory instruction names the argument it
# serves and the vector width can be read per argument.

@tritium.jit
def mixed(x_ptr, y_ptr, out_ptr, sx, sy, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs * sx)
    b = tl.load(y_ptr + offs * sy)
    tl.store(out_ptr + offs, a + b.to(tl.float32))


MIXED_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp16", "out_ptr": "*fp32", "sx": "i32", "sy": "i32"}


def variant(backend, *args) -> tuple:
    """(specialization, IR text, LLVM IR, PTX) of `mixed` as the launch path
    would specialize it for `args` under `backend`."""
    from tritium import _core
    s = specializer(mixed, backend)
    key, bound, _ = s.bind(*args, BLOCK=1024)
    assert s.key_python(bound) == key
    sp = s.specialization(key)
    ir = mixed.compile_ir(signature=MIXED_SIG, constexprs={"BLOCK": 1024}, arg_attrs=sp.arg_attrs())
    out = _core.compile_ptx(ir, arch="sm_90a", num_warps=4)
    return sp, _core.to_text(ir), out["llir"], out["ptx"]


def widths(ptx: str) -> dict:
    """Per access, {vector width: instruction count}."""
    access = {"x": r"ld\.global(\.v\d)?\.f32", "y": r"ld\.global(\.v\d)?\.b16", "out": r"st\.global(\.v\d)?\.f32"}
    out = {}
    for name, pat in access.items():
        counts: dict = {}
        for m in re.finditer(pat, ptx):
            w = int(m.group(1)[2:]) if m.group(1) else 1
            counts[w] = counts.get(w, 0) + 1
        out[name] = counts
    return out


def elements(counts: dict) -> int:
    return sum(w * n for w, n in counts.items())


def ir_diff(a: str, b: str) -> list:
    la, lb = a.splitlines(), b.splitlines()
    assert len(la) == len(lb)
    return [(x, y) for x, y in zip(la, lb) if x != y]


PAGE = 4096


def test_pointer_property_of_a_test_backend_vectorizes_only_its_argument():
    # the base knows only equal_to_1 (so offs * 1 stays contiguous); the test
    # backend adds page alignment, carried by the divisibility attribute
    base = Backend("test-base", [equal_to_1()])
    page = Property("page_aligned", frozenset({POINTER}), lambda t: t.data_ptr() % PAGE == 0, ("divisibility", 16))
    ext = base.with_properties("test-page", [page])
    # x on a page; y and out 16-byte aligned but not on a page
    args = (Tensor(8 * PAGE, "float32"), Tensor(9 * PAGE + 16, "float16"), Tensor(10 * PAGE + 64, "float32"), 1, 1)
    sb, ir_b, _, ptx_b = variant(base, *args)
    se, ir_e, _, ptx_e = variant(ext, *args)
    assert se.sets["page_aligned"] == {0}
    assert se.sets["equal_to_1"] == sb.sets["equal_to_1"] == {3, 4}
    ab, ae = sb.arg_attrs(), se.arg_attrs()
    assert ae == {**ab, "x_ptr": {"divisibility": 16}}
    diff = ir_diff(ir_b, ir_e)
    assert len(diff) == 1 and diff[0][0].startswith("func @")   # only the signature line
    assert "%0: ptr<f32> {divisibility = 16}" in diff[0][1] and "%0: ptr<f32> {divisibility" not in diff[0][0]
    wb, we = widths(ptx_b), widths(ptx_e)
    assert wb == {"x": {1: elements(wb["x"])}, "y": {1: elements(wb["y"])}, "out": {1: elements(wb["out"])}}
    assert set(we["x"]) == {4}                                   # x: 16-byte vectors
    assert set(we["y"]) == {1} and set(we["out"]) == {1}         # y and out: unchanged width
    for name in ("x", "y", "out"):                               # same work per thread
        assert elements(we[name]) == elements(wb[name]) > 0


def test_pointer_property_that_holds_nowhere_changes_nothing():
    base = Backend("test-base", [equal_to_1()])
    page = Property("page_aligned", frozenset({POINTER}), lambda t: t.data_ptr() % PAGE == 0, ("divisibility", 16))
    ext = base.with_properties("test-page", [page])
    args = (Tensor(8 * PAGE + 16, "float32"), Tensor(9 * PAGE + 16, "float16"), Tensor(10 * PAGE + 64, "float32"), 1, 1)
    _, ir_b, llir_b, ptx_b = variant(base, *args)
    se, ir_e, llir_e, ptx_e = variant(ext, *args)
    assert se.sets["page_aligned"] == set()
    assert ir_b == ir_e and llir_b == llir_e and ptx_b == ptx_e


def test_integer_property_of_a_test_backend_folds_only_its_argument():
    # the base knows only divisibility; the test backend adds a unit-stride
    # fact carried by the equal_to_1 attribute
    base = Backend("test-div", [divisibility(16)])
    unit = Property("unit_stride", frozenset({INTEGER}), lambda v: v == 1, ("equal_to_1", True))
    ext = base.with_properties("test-unit", [unit])
    args = (Tensor(8 * PAGE, "float32"), Tensor(9 * PAGE, "float16"), Tensor(10 * PAGE, "float32"), 1, 2)
    sb, ir_b, llir_b, ptx_b = variant(base, *args)
    se, ir_e, llir_e, ptx_e = variant(ext, *args)
    assert se.sets["unit_stride"] == {3}
    assert se.arg_attrs() == {**sb.arg_attrs(), "sx": {"equal_to_1": True}}
    diff = ir_diff(ir_b, ir_e)
    assert len(diff) == 1 and "%3: i32 {equal_to_1 = true}" in diff[0][1] and "equal_to_1" not in diff[0][0]
    assert param_used(llir_b, "mixed", 3) and param_used(llir_b, "mixed", 4)
    assert not param_used(llir_e, "mixed", 3) and param_used(llir_e, "mixed", 4)
    wb, we = widths(ptx_b), widths(ptx_e)
    assert set(wb["x"]) == {1} and set(we["x"]) == {4}           # x's stride folded: 16-byte vectors
    assert set(wb["y"]) == set(we["y"]) == {1}                   # y's stride is 2 in both
    assert wb["out"] == we["out"]                                # out never depended on a stride
    for name in ("x", "y", "out"):
        assert elements(we[name]) == elements(wb[name]) > 0
