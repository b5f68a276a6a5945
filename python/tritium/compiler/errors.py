"""Triton's public path for the compile errors (`triton.compiler.errors`). The
classes live in language/errors.py so the interpreter raises the same types
without importing the compiler."""
from ..language.errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"]
