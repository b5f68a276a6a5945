"""The AMD half of `tritium.compile`: targets `hip:gfx942` and the like, and
tile IR → LLVM IR → AMDGCN → HSACO (lld inside `_core`), with the kernel's
resources read from the code object's metadata note. Needs no GPU and no ROCm."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import hsaco

# the architectures the code generator knows, with their wave size
ARCHS = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1200": 32}


@dataclass(frozen=True)
class HipTarget:
    """An AMD compilation target: "hip:gfx942". Like Triton's GPUTarget:
    backend "hip", arch "gfx942", warp (wave) size 64."""
    arch: str

    backend = "hip"

    @staticmethod
    def parse(text: str) -> "HipTarget":
        family, _, arch = str(text).partition(":")
        arch = arch.strip().lower()
        if family.lower() not in ("hip", "amd", "rocm") or arch not in ARCHS:
            raise ValueError(f"unknown AMD target {text!r} (expected one of "
                             f"{', '.join('hip:' + a for a in ARCHS)})")
        return HipTarget(arch)

    def __str__(self) -> str:
        return f"hip:{self.arch}"

    @property
    def warp_size(self) -> int:
        return ARCHS[self.arch]

    @property
    def codegen_arch(self) -> str:
        return str(self)


class AmdAsm(dict):
    """`.asm` of an AMD kernel, whose "amdgcn" text is made on first read from
    its "llir". The HSACO does not need the text, and making it costs a second
    run of LLVM's code generator: about half of a small kernel's compile."""

    def __init__(self, target: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.target = str(target)

    def __missing__(self, key: str) -> str:
        if key != "amdgcn" or not super().__contains__("llir"):
            raise KeyError(key)
        from .. import _core
        text = self["amdgcn"] = _core.assembly_from_llir(self["llir"], self.target)
        return text

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (key == "amdgcn" and super().__contains__("llir"))

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


def compile_hsaco(ir: bytes, asm: dict, meta: dict, target: HipTarget, num_warps: int, dump_stages: bool) -> None:
    """Fills `asm` (llir, hsaco; an AmdAsm adds amdgcn when read) and `meta`
    (symbol, shared, registers, spills, wave size) for `ir` compiled for `target`."""
    from .. import _core
    out = _core.compile_ptx(ir, arch=target.codegen_arch, num_warps=num_warps, dump_stages=dump_stages,
                            assembly=False)
    if dump_stages:
        asm["stages"] = [(str(stage), str(text)) for stage, text in out["stages"]]
    asm["llir"], asm["hsaco"] = out["llir"], bytes(out["binary"])
    asm["allocation"] = out["allocation"]
    meta["symbol"] = out["kernels"][0] if out["kernels"] else meta["name"]
    res = hsaco.kernel_resources(asm["hsaco"], meta["symbol"])
    meta.update(res)
    # LDS is static in the code object (its descriptor states it): nothing dynamic at launch
    meta["shared"] = int(res["lds"])
    meta["dynamic_shared"] = 0
    meta["registers"] = int(res["vgprs"])
    meta["spill_stores"] = int(res["vgpr_spills"]) + int(res["sgpr_spills"])
    meta["stack_bytes"] = int(res["scratch"])
    meta["warp_size"] = int(res["wave_size"])


def parse_gpu_target(target: Any) -> HipTarget:
    """A GPUTarget-like object with backend "hip" → HipTarget."""
    return HipTarget.parse(f"hip:{target.arch}")
