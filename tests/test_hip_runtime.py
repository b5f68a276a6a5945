"""The HIP launch path without an AMD GPU: arguments packed at the offsets the
code object's metadata states, the error a user gets when the HIP runtime is
absent (naming the library), and a launch test marked `hip` that only runs
where ROCm and an AMD GPU exist (never run here: none is reachable)."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.backends import hsaco
from tritium.runtime import hip


@tritium.jit
def scale(x_ptr, out_ptr, alpha, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.where(flag, x * alpha, x), mask=m)


def _compiled(arch="hip:gfx942"):
    return tritium.compile(scale, signature="*fp32,*fp32,fp32,i32,i1", constexprs={"BLOCK": 256}, target=arch)


class _Tensor:
    def __init__(self, addr: int) -> None:
        self.addr = addr

    def data_ptr(self) -> int:
        return self.addr


@pytest.mark.parametrize("arch", ["hip:gfx942", "hip:gfx1100"])
def test_arguments_go_where_the_code_object_says(arch):
    k = _compiled(arch)
    doc = hsaco.metadata(k.asm["hsaco"])
    slots = [a for a in doc["amdhsa.kernels"][0][".args"] if not a[".value_kind"].startswith("hidden_")]
    buf = hip.pack_arguments(k.asm["hsaco"], k.metadata["symbol"], k.params,
                             (_Tensor(0x1000), 0x2000, 2.5, np.int32(77), True, 256))
    assert len(buf) == doc["amdhsa.kernels"][0][".kernarg_segment_size"]
    offs = [s[".offset"] for s in slots]
    assert struct.unpack_from("<Q", buf, offs[0])[0] == 0x1000
    assert struct.unpack_from("<Q", buf, offs[1])[0] == 0x2000
    assert struct.unpack_from("<f", buf, offs[2])[0] == 2.5
    assert struct.unpack_from("<i", buf, offs[3])[0] == 77
    assert buf[offs[4]] == 1


def test_bad_arguments_name_the_parameter():
    k = _compiled()
    with pytest.raises(TypeError, match="'n' \\(int32\\)"):
        hip.pack_arguments(k.asm["hsaco"], k.metadata["symbol"], k.params, (0, 0, 1.0, 2**40, True, 256))
    with pytest.raises(TypeError, match="takes 6 arguments"):
        hip.pack_arguments(k.asm["hsaco"], k.metadata["symbol"], k.params, (0, 0))


def test_without_rocm_a_launch_names_the_library(monkeypatch):
    try:
        hip.library()
        pytest.skip("a HIP runtime is installed here")
    except hip.HipUnavailable:
        pass
    monkeypatch.setattr(hip, "_LIB", None)
    k = _compiled()
    with pytest.raises(hip.HipUnavailable, match="libamdhip64.so.*TRITIUM_HIP_LIBRARY"):
        k[(1,)](_Tensor(0), _Tensor(0), 1.0, 4, True, 256)


def _hip_gpu() -> bool:
    try:
        import torch
        return bool(getattr(torch.version, "hip", None)) and torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.hip
@pytest.mark.skipif(not _hip_gpu(), reason="needs PyTorch ROCm and an AMD GPU (never run: none is reachable)")
def test_launch_on_an_amd_gpu():
    import torch
    props = torch.cuda.get_device_properties(0)
    arch = props.gcnArchName.split(":")[0]
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    out = torch.empty_like(x)
    k = tritium.compile(scale, signature="*fp32,*fp32,fp32,i32,i1", constexprs={"BLOCK": 256}, target=f"hip:{arch}")
    k[(4,)](x, out, 3.0, 1000, True, 256)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 3.0)
