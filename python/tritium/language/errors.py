"""User-facing kernel errors: one exception type that points at the kernel's
own source line (file:line:col, the line, a caret), so a mistake in a kernel
never surfaces as a traceback through the compiler's or the interpreter's
internals. Here, below both, so the two raise the same types."""
from __future__ import annotations


class TritonError(Exception):
    """The base of every error tritium raises for a kernel (Triton's
    `triton.errors.TritonError`, so code that catches it keeps working)."""


class CompilationError(TritonError):
    """A kernel failed to compile. `message` is the bare reason; str() adds the
    location, the source line and a caret under the offending column."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 col_offset: int | None = None, src_line: str | None = None,
                 notes: list[str] | None = None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col_offset = col_offset
        self.src_line = src_line
        # extra lines such as "in call to 'helper' from file:line"
        self.notes = list(notes or [])
        super().__init__(self._render())

    def _render(self) -> str:
        if self.filename is None or self.lineno is None:
            head = f"error: {self.message}"
        else:
            col = self.col_offset if self.col_offset is not None else 0
            head = f"{self.filename}:{self.lineno}:{col}: error: {self.message}"
        lines = [head]
        if self.src_line is not None:
            lines.append(self.src_line.rstrip("\n"))
            if self.col_offset is not None:
                lines.append(" " * self.col_offset + "^")
        lines.extend(self.notes)
        return "\n".join(lines)

    def add_call_site(self, note: str) -> None:
        self.notes.append(note)
        self.args = (self._render(),)

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.filename, self.lineno, self.col_offset,
                           self.src_line, self.notes))


def _rebuild(cls, message, filename, lineno, col_offset, src_line, notes):
    return cls(message, filename, lineno, col_offset, src_line, notes)


class UnsupportedLanguageConstruct(CompilationError):
    """A Python construct kernels cannot use (break, with, lambda, ...)."""


class CompileTimeAssertionFailure(CompilationError):
    """A `tl.static_assert` (or `assert` on a constexpr) failed while compiling;
    Triton users catch it under this name."""
