"""GPU checks for fp8 casts, all five formats (e4m3fn, e5m2, Triton's e4b15,
e4b8 = e4m3fnuz, e5b16 = e5m2fnuz): compiled kernels convert every fp8 code,
every f16 code and random/edge f32, bf16 and f64 values, and the bits must
equal the interpreter's (interpreter/floats.py) exactly; NaN only needs to
stay NaN in wider formats. On the H100 the round-to-nearest f32/f16 paths
into e4m3/e5m2 use PTX's `cvt.rn.satfinite`; rtz, f64 and the other three
formats use the integer algorithm of fp8.rs. e4b15 has no torch dtype: its
tensors are uint8 seen through `tritium.reinterpret`."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from tritium.interpreter import floats
from tritium.language import bfloat16, float16, float32, float64

from test_codegen_fp8 import DTYPES, _f32_e4b15_edges, _f32_samples, interp_cast_bits

pytestmark = pytest.mark.gpu

TORCH_FP8 = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2, "fp8e4b8": torch.float8_e4m3fnuz,
             "fp8e5b16": torch.float8_e5m2fnuz, "fp8e4b15": torch.uint8}
MAX_FINITE = {"fp8e4nv": 448.0, "fp8e5": 57344.0, "fp8e4b8": 240.0, "fp8e5b16": 57344.0}
WIDE = {"fp32": (torch.float32, float32, np.float32), "fp16": (torch.float16, float16, np.float16),
        "bf16": (torch.bfloat16, bfloat16, None), "fp64": (torch.float64, float64, np.float64)}


@tritium.jit
def cast_kernel(x_ptr, y_ptr, n, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING), mask=m)


@tritium.jit
def fp8_arith_kernel(a_ptr, b_ptr, sum_ptr, prod_ptr, lt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    tl.store(sum_ptr + offs, a + b, mask=m)
    tl.store(prod_ptr + offs, a * b, mask=m)
    tl.store(lt_ptr + offs, (a < b).to(tl.int8), mask=m)


def _arg(t: torch.Tensor, name: str | None):
    """e4b15 tensors are uint8 storage reinterpreted as the kernel's dtype."""
    return tritium.reinterpret(t, tl.float8e4b15) if name == "fp8e4b15" else t


def _run_cast(x: torch.Tensor, out_dtype: torch.dtype, rounding=None, src: str | None = None,
              dst: str | None = None) -> torch.Tensor:
    n = x.numel()
    y = torch.empty(n, dtype=out_dtype, device="cuda")
    cast_kernel[(triton_cdiv(n, 1024),)](_arg(x, src), _arg(y, dst), n, ROUNDING=rounding, BLOCK=1024)
    torch.cuda.synchronize()
    return y


def _codes(name: str) -> torch.Tensor:
    return torch.arange(256, dtype=torch.int32).to(torch.uint8).cuda().view(TORCH_FP8[name])


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.uint8).cpu().numpy()


def _same_wide(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    eq = got.view(width) == want.view(width)
    bad = np.nonzero(~(nan | eq))[0]
    assert bad.size == 0, [(i, got[i], want[i]) for i in bad[:8]]


@pytest.mark.parametrize("name", list(TORCH_FP8))
@pytest.mark.parametrize("wide", list(WIDE))
def test_every_fp8_code_widens_exactly(name, wide):
    tdt, kdt, _ = WIDE[wide]
    got = _run_cast(_codes(name), tdt, src=name)
    want = floats.fp8_decode(np.arange(256), name)  # exact in every wider format
    if wide == "bf16":  # compared as f32 (bf16 widens exactly), so NaN is recognised
        _same_wide(got.to(torch.float32).cpu().numpy(), want)
    else:
        _same_wide(got.cpu().numpy(), want.astype(WIDE[wide][2]))


@pytest.mark.parametrize("name", list(TORCH_FP8))
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_f32_to_fp8_bits_match_interpreter(name, rounding):
    x = _f32_samples()
    got = _bits(_run_cast(torch.from_numpy(x).cuda(), TORCH_FP8[name], rounding, dst=name))
    want = interp_cast_bits(x, float32, name, rounding)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(x[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", list(TORCH_FP8))
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_every_f16_code_to_fp8_matches_interpreter(name, rounding):
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = _bits(_run_cast(torch.from_numpy(h.copy()).cuda(), TORCH_FP8[name], rounding, dst=name))
    want = interp_cast_bits(h, float16, name, rounding)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(h[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", list(TORCH_FP8))
def test_bf16_and_f64_to_fp8_match_interpreter(name):
    x = _f32_samples()
    # the bf16 bits themselves (torch's f32 -> bf16 conversion would make every NaN positive)
    bf_bits = (x.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    bf = (bf_bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    got = _bits(_run_cast(torch.from_numpy(bf_bits.view(np.int16)).cuda().view(torch.bfloat16), TORCH_FP8[name],
                          dst=name))
    want = interp_cast_bits(bf, bfloat16, name)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(bf_bits[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]
    with np.errstate(invalid="ignore"):
        d = np.concatenate([x.astype(np.float64) * (1 + 2.0 ** -40), np.random.default_rng(3).standard_normal(50000)])
    got = _bits(_run_cast(torch.from_numpy(d).cuda(), TORCH_FP8[name], dst=name))
    want = interp_cast_bits(d, float64, name)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(d[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]


@pytest.mark.parametrize("src,dst", [(a, b) for a in TORCH_FP8 for b in TORCH_FP8 if a != b])
def test_fp8_to_fp8_every_code(src, dst):
    got = _bits(_run_cast(_codes(src), TORCH_FP8[dst], src=src, dst=dst))
    want = interp_cast_bits(floats.fp8_decode(np.arange(256), src), DTYPES[src], dst)
    assert np.array_equal(got, want), np.nonzero(got != want)


@pytest.mark.parametrize("name", list(MAX_FINITE))
def test_in_range_values_agree_with_torch(name):
    """Inside the finite range torch rounds to nearest even too (it only differs on overflow)."""
    x = _f32_samples()
    big = MAX_FINITE[name]
    x = x[np.isfinite(x) & (np.abs(x) <= big)]
    got = _bits(_run_cast(torch.from_numpy(x).cuda(), TORCH_FP8[name], dst=name))
    want = _bits(torch.from_numpy(x).to(TORCH_FP8[name]))
    assert np.array_equal(got, want), np.nonzero(got != want)[0][:8]


@pytest.mark.parametrize("name", list(TORCH_FP8))
def test_fp8_arithmetic_matches_interpreter_rounding(name):
    codes = np.arange(256, dtype=np.uint8)
    a, b = (c.ravel() for c in np.meshgrid(codes, codes))
    n = a.size
    at = torch.from_numpy(a).cuda().view(TORCH_FP8[name])
    bt = torch.from_numpy(b).cuda().view(TORCH_FP8[name])
    s = torch.empty_like(at)
    p = torch.empty_like(at)
    lt = torch.empty(n, dtype=torch.int8, device="cuda")
    fp8_arith_kernel[(triton_cdiv(n, 1024),)](_arg(at, name), _arg(bt, name), _arg(s, name), _arg(p, name), lt, n,
                                              BLOCK=1024)
    va, vb = floats.fp8_decode(a, name), floats.fp8_decode(b, name)
    with np.errstate(all="ignore"):
        for got, r in ((s, va + vb), (p, va * vb)):
            want = floats.fp8_encode(floats.round_to(r.astype(np.float32), name).astype(np.float32), name)
            bad = np.nonzero(_bits(got) != want)[0]
            assert bad.size == 0, [(va[i], vb[i], hex(_bits(got)[i]), hex(want[i])) for i in bad[:8]]
        assert np.array_equal(lt.cpu().numpy(), (va < vb).astype(np.int8))


@pytest.mark.parametrize("name", ["fp8e4b8", "fp8e5b16"])
def test_fnuz_values_widen_like_torch(name):
    """torch's own float8_*fnuz decoding of every code (NaN at 0x80 only)."""
    codes = _codes(name)
    got = _run_cast(codes, torch.float32, src=name).cpu().numpy()
    want = codes.to(torch.float32).cpu().numpy()
    _same_wide(got, want)


# Triton 3.6's e4b15 conversion on this GPU, written out as PTX (the same
# instructions as its language/extra/cuda/utils.py, one value per thread):
# f32 truncated to f16 by `cvt.rz`, |h| clamped to 1.75 by `min.f16`,
# rounded half away on the bits, h's sign put back. Our casts must give its
# bits, NaN signs included (what the hardware's cvt does with them).
_TRITON_E4B15 = """{
    .reg .b16 h, m, top;
    .reg .b32 w, s;
    %s
    and.b16 m, h, 0x7fff;
    mov.b16 top, 0x3f00;
    min.f16 m, m, top;
    cvt.u32.u16 w, m;
    add.u32 w, w, 0x40;
    shr.u32 w, w, 7;
    cvt.u32.u16 s, h;
    shr.u32 s, s, 8;
    and.b32 s, s, 0x80;
    or.b32 $0, w, s;
}"""


@tritium.jit
def e4b15_both_ways_kernel(x_ptr, ours_ptr, theirs_ptr, n, ASM: tl.constexpr, CONS: tl.constexpr,
                           ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(ours_ptr + offs, x.to(tl.float8e4b15, fp_downcast_rounding=ROUNDING), mask=m)
    t = tl.inline_asm_elementwise(ASM, CONS, [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(theirs_ptr + offs, t.to(tl.uint8), mask=m)


TRITON_E4B15_ASM = {"fp16": (_TRITON_E4B15 % "mov.b16 h, $1;", "=r,h"),
                    "fp32": (_TRITON_E4B15 % "cvt.rz.f16.f32 h, $1;", "=r,f")}


@pytest.mark.parametrize("src", ["fp16", "fp32"])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_e4b15_casts_equal_tritons_instructions(src, rounding):
    if src == "fp16":
        x = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.float16).cuda()
    else:
        x = torch.from_numpy(np.concatenate([_f32_e4b15_edges(), _f32_samples()])).cuda()
    n = x.numel()
    ours = torch.empty(n, dtype=torch.uint8, device="cuda")
    theirs = torch.empty(n, dtype=torch.uint8, device="cuda")
    asm, cons = TRITON_E4B15_ASM[src]
    e4b15_both_ways_kernel[(triton_cdiv(n, 1024),)](x, _arg(ours, "fp8e4b15"), theirs, n, ASM=asm, CONS=cons,
                                                    ROUNDING=rounding, BLOCK=1024)
    got, want = _bits(ours), _bits(theirs)
    bad = np.nonzero(got != want)[0]
    xb = x.view(torch.int16 if src == "fp16" else torch.int32).cpu().numpy()
    assert bad.size == 0, (bad.size, [(hex(xb[i] & 0xFFFFFFFF), hex(got[i]), hex(want[i])) for i in bad[:8]])
    # and the interpreter gives the same bits
    interp = interp_cast_bits(x.cpu().numpy(), float16 if src == "fp16" else float32, "fp8e4b15", rounding)
    assert np.array_equal(interp, want)
