"""Kernel names that are not valid PTX identifiers (Python allows `kérnel`)
must compile and load under an escaped symbol; LLVM's NVPTX backend used to
abort the whole process on them (found by the `pipeline` fuzz target)."""
import pytest

import tritium
import tritium.language as tl
from tritium.runtime import driver


@tritium.jit
def kérnel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


@tritium.jit
def plain_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def test_non_ascii_kernel_name_gets_an_escaped_symbol():
    ck = tritium.compile(kérnel, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 128})
    assert ck.metadata["symbol"] == "__tritium_k_c3_a9rnel"
    assert ".entry __tritium_k_c3_a9rnel" in ck.asm["ptx"]
    if driver.ptxas_path() is None:
        pytest.skip("no ptxas: the symbol is checked in the PTX only")
    assert ck.asm["cubin"]


def test_valid_kernel_names_are_kept():
    ck = tritium.compile(plain_kernel, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 128})
    assert ck.metadata["symbol"] == "plain_kernel"
    assert ".entry plain_kernel" in ck.asm["ptx"]
