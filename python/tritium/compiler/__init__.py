"""The compiler frontend: Python AST of a @jit function → tile IR bytes.
Triton's names at this path (`compile`, `ASTSource`, `CompiledKernel`) belong
to the ahead-of-time entry above the frontend (tritium/ast_source.py); they
are looked up on first use, so importing the frontend never imports it."""
from typing import Any

from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

_ENTRY_NAMES = ("ASTSource", "CompiledKernel", "KernelMetadata", "compile")


def __getattr__(name: str) -> Any:
    if name in _ENTRY_NAMES:
        from .. import ast_source
        return getattr(ast_source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ASTSource", "CompilationError", "CompileTimeAssertionFailure", "CompiledKernel",
           "UnsupportedLanguageConstruct", "compile"]
