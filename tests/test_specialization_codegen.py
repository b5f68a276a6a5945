"""Specialization facts reaching generated code: an argument specialized as
equal to 1 is the constant 1 in the kernel, so `offs * stride` folds away
and the access keeps the contiguity of `offs` (16-byte vectors)."""
import re

import tritium
import tritium.language as tl


@tritium.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride))


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32"}


def compile_with(attrs: dict):
    return tritium.compile(strided_copy, signature=SIG, constexprs={"BLOCK": 1024}, target="cuda:90",
                           attrs=attrs)


def stride_param_used(llir: str) -> bool:
    """Whether the kernel's third LLVM parameter (the stride) is used in its body."""
    define = next(line for line in llir.splitlines() if line.startswith("define") and "@strided_copy(" in line)
    params = re.findall(r"(%[\w.]+)[,)]", define)
    assert len(params) == 3, define
    body = llir[llir.index(define) + len(define):]
    return re.search(re.escape(params[2]) + r"\b", body) is not None


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
