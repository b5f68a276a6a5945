"""The compiler frontend: Python AST of a @jit function → tile IR bytes."""
from .errors import CompilationError

__all__ = ["CompilationError"]
