"""The compiler frontend: Python AST of a @jit function → tile IR bytes.
Triton's names at this path (`compile`, `ASTSource`, `CompiledKernel`,
`KernelMetadata`) belong to the ahead-of-time entry above the frontend
(tritium/ast_source.py), which registers them here when it is imported
(importing tritium does), so the frontend never imports it."""
from typing import Any

from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

_entry: dict[str, Any] = {}


def register_entry(names: dict[str, Any]) -> None:
    _entry.update(names)


def __getattr__(name: str) -> Any:
    if name in _entry:
        return _entry[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ASTSource", "CompilationError", "CompileTimeAssertionFailure", "CompiledKernel",
           "UnsupportedLanguageConstruct", "compile"]
