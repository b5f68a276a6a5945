"""Reading an AMD code object (HSACO): the ELF note NT_AMDGPU_METADATA holds a
MessagePack document (the one `llvm-readelf --notes` prints as YAML) with each
kernel's registers, spills, LDS bytes and wave size. Only what that note uses
is decoded: no ROCm and no msgpack package needed."""
from __future__ import annotations

import struct
from typing import Any

NT_AMDGPU_METADATA = 32


class HsacoError(ValueError):
    """A code object tritium cannot read (truncated, not ELF64, no metadata note)."""


def _unpack(data: bytes, pos: int) -> tuple[Any, int]:
    """One MessagePack value at `pos`: (value, position after it)."""
    b = data[pos]
    pos += 1
    if b <= 0x7F:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0x80 <= b <= 0x8F:
        return _unpack_map(data, pos, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _unpack_array(data, pos, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return data[pos:pos + n].decode(), pos + n
    fixed = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in fixed:
        return fixed[b], pos
    sized = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if b in sized:
        fmt = sized[b]
        return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)
    lengths = {0xD9: ">B", 0xDA: ">H", 0xDB: ">I", 0xC4: ">B", 0xC5: ">H", 0xC6: ">I"}
    if b in lengths:
        fmt = lengths[b]
        n = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        raw = data[pos:pos + n]
        return (raw.decode() if b >= 0xD9 else bytes(raw)), pos + n
    containers = {0xDC: (">H", _unpack_array), 0xDD: (">I", _unpack_array), 0xDE: (">H", _unpack_map),
                  0xDF: (">I", _unpack_map)}
    if b in containers:
        fmt, unpack = containers[b]
        n = struct.unpack_from(fmt, data, pos)[0]
        return unpack(data, pos + struct.calcsize(fmt), n)
    raise HsacoError(f"metadata note: unsupported MessagePack byte 0x{b:02x}")


def _unpack_array(data: bytes, pos: int, n: int) -> tuple[list, int]:
    out = []
    for _ in range(n):
        v, pos = _unpack(data, pos)
        out.append(v)
    return out, pos


def _unpack_map(data: bytes, pos: int, n: int) -> tuple[dict, int]:
    out = {}
    for _ in range(n):
        k, pos = _unpack(data, pos)
        v, pos = _unpack(data, pos)
        out[k] = v
    return out, pos


def _notes(elf: bytes) -> list[tuple[str, int, bytes]]:
    """(owner, type, descriptor) of every note in every SHT_NOTE section."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise HsacoError("not an ELF64 code object")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    out = []
    for i in range(shnum):
        sh = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", elf, sh + 4)
        if sh_type != 7:                                    # SHT_NOTE
            continue
        off, size = struct.unpack_from("<QQ", elf, sh + 0x18)
        pos, end = off, off + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            pos += 12
            name = elf[pos:pos + namesz].rstrip(b"\0").decode(errors="replace")
            pos += (namesz + 3) & ~3
            out.append((name, ntype, elf[pos:pos + descsz]))
            pos += (descsz + 3) & ~3
    return out


def metadata(hsaco: bytes) -> dict:
    """The code object's AMDGPU metadata document (`amdhsa.kernels`, `amdhsa.target`, ...)."""
    try:
        for owner, ntype, desc in _notes(hsaco):
            if owner == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
                doc, _ = _unpack(desc, 0)
                if isinstance(doc, dict):
                    return doc
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise HsacoError(f"truncated or malformed code object: {e}") from None
    raise HsacoError("the code object has no AMDGPU metadata note")


def kernel_resources(hsaco: bytes, symbol: str) -> dict:
    """Kernel `symbol`'s resources as compiled metadata fields: vgprs, agprs,
    sgprs, spills (VGPR and SGPR), lds (bytes), scratch bytes, wave size."""
    doc = metadata(hsaco)
    for k in doc.get("amdhsa.kernels", []):
        if k.get(".name") == symbol:
            return {"vgprs": k.get(".vgpr_count", 0), "agprs": k.get(".agpr_count", 0), "sgprs": k.get(".sgpr_count", 0),
                    "vgpr_spills": k.get(".vgpr_spill_count", 0), "sgpr_spills": k.get(".sgpr_spill_count", 0),
                    "lds": k.get(".group_segment_fixed_size", 0),
                    "scratch": k.get(".private_segment_fixed_size", 0), "wave_size": k.get(".wavefront_size", 0),
                    "kernarg_size": k.get(".kernarg_segment_size", 0)}
    raise HsacoError(f"the code object has no kernel named {symbol!r}")
