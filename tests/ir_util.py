"""Compile a kernel to verified IR text for the frontend tests."""
from tritium import _core


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
