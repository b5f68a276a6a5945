"""Compile a kernel to verified IR text for the frontend tests, or compile it
and run it in the interpreter."""
import numpy as np

from tritium import _core
from tritium.interpreter import run_grid


def ir_text(kernel, signature, **constexprs) -> str:
    data = kernel.compile_ir(signature=signature, constexprs=constexprs)
    _core.verify(data)
    text = _core.to_text(data)
    # the text parses back to the same module
    assert _core.to_text(_core.parse_text(text)) == text
    return text


def canonical_text(kernel, signature, **constexprs) -> str:
    """The kernel's IR after Rust's canonicalize (which drops the loop-carried
    slots a loop never changes, such as aggregate fields it only reads)."""
    data = kernel.compile_ir(signature=signature, constexprs=constexprs)
    return _core.to_text(_core.run_passes(data, ["canonicalize"]))


def ops(text: str, name: str) -> int:
    return text.count(f'"{name}"(')


def verified_and_interpreted(kernel, grid, args: list, **constexprs) -> list:
    """Compiles for these arguments (verified IR), then runs the interpreter
    on copies of the arrays; returns the copies for checking."""
    _core.verify(kernel.compile_ir(*args, **constexprs))
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_grid(kernel, grid, kernel.bind_call(copies, constexprs))
    return copies
