"""Errors of compiling and launching on a device, at Triton's path
(`triton.runtime.errors`): `OutOfResources` (a kernel needs more shared
memory or registers than the device has; the autotuner skips such configs),
`PTXASError` (ptxas refused the PTX), `AutotunerError`, and the
interpreter's `InterpreterError` re-exported where Triton users import it."""
from __future__ import annotations

from ..interpreter.errors import InterpreterError
from ..language.errors import TritonError


class OutOfResources(TritonError):
    """The kernel needs `required` of `name` ("shared memory", "threads") but
    the device allows `limit`; `kernel` names the kernel when known."""

    def __init__(self, required: int, limit: int, name: str, kernel: str | None = None):
        self.required = required
        self.limit = limit
        self.name = name
        self.kernel = kernel
        super().__init__(required, limit, name, kernel)

    def __str__(self) -> str:
        of = f" (kernel '{self.kernel}')" if self.kernel else ""
        return (f"out of resource: {self.name}, Required: {self.required}, Hardware limit: {self.limit}{of}. "
                "Reducing block sizes or `num_stages` may help.")


class PTXASError(TritonError):
    """ptxas failed on PTX the code generator produced; the message is ptxas's."""

    def __init__(self, error_message: str | None = None):
        self.error_message = error_message
        super().__init__(error_message)

    def __str__(self) -> str:
        return f"PTXAS error: {self.error_message or ''}"


class AutotunerError(TritonError):
    def __init__(self, error_message: str | None = None):
        self.error_message = error_message
        super().__init__(error_message)

    def __str__(self) -> str:
        return f"Autotuner error: {self.error_message or ''}"


__all__ = ["AutotunerError", "InterpreterError", "OutOfResources", "PTXASError", "TritonError"]
