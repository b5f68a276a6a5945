"""Triton's error classes: importable where Triton users look for them,
raised for a failed static_assert and for unsupported constructs, and
picklable with their class."""
from __future__ import annotations

import pytest

import tritium as triton
import tritium.language as tl


def test_error_classes_importable_where_triton_users_look():
    from tritium.compiler import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct
    from tritium.compiler.errors import CompilationError as E2
    assert CompilationError is E2 is triton.CompilationError
    assert issubclass(CompileTimeAssertionFailure, CompilationError)
    assert issubclass(UnsupportedLanguageConstruct, CompilationError)


@triton.jit
def _static_assert_fails(x_ptr, N: tl.constexpr):
    tl.static_assert(N > 10, "N too small")


@triton.jit
def _uses_lambda(x_ptr):
    f = lambda a: a  # noqa: E731
    tl.store(x_ptr, f(1))


@triton.jit
def _uses_break(x_ptr, n):
    for i in range(n):
        break


def test_static_assert_raises_compile_time_assertion_failure():
    from tritium.compiler.errors import CompileTimeAssertionFailure
    with pytest.raises(CompileTimeAssertionFailure, match="N too small") as info:
        _static_assert_fails.compile_ir(signature="*i32", constexprs={"N": 2})
    assert info.value.__cause__ is None and info.value.__suppress_context__ or info.value.__context__ is None
    assert "tl.static_assert(N > 10" in str(info.value)


@pytest.mark.parametrize("kernel, sig, what", [(_uses_lambda, "*i32", "'lambda'"), (_uses_break, "*i32 i32", "'break'")])
def test_unsupported_constructs_raise_unsupported_language_construct(kernel, sig, what):
    from tritium.compiler.errors import UnsupportedLanguageConstruct
    with pytest.raises(UnsupportedLanguageConstruct, match=what):
        kernel.compile_ir(signature=sig)


def test_compile_errors_pickle_with_their_class():
    import pickle
    from tritium.compiler.errors import CompileTimeAssertionFailure
    with pytest.raises(CompileTimeAssertionFailure) as info:
        _static_assert_fails.compile_ir(signature="*i32", constexprs={"N": 2})
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is CompileTimeAssertionFailure and str(again) == str(info.value)
