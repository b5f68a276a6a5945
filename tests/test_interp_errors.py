"""Errors raised while interpreting (issue #15 item 2): one type,
InterpreterError, a CompilationError, whose message names the kernel's
file:line:col and shows the line with a caret, like the compiler's; calls
between kernel functions become notes. The bad-kernel corpus, run in the
interpreter, ends in nothing else."""
from __future__ import annotations

import os
import random
import signal
import sys
from collections import Counter

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError, UnsupportedLanguageConstruct
from tritium.interpreter import InterpreterError, run_grid

interp = triton.jit(interpret=True)


def _line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@interp
def _shape_mismatch(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, a + b)


def test_a_shape_mismatch_names_the_kernel_line_with_a_caret():
    with pytest.raises(InterpreterError) as info:
        run_grid(_shape_mismatch, (1,), (np.zeros(16, np.int32),))
    err = info.value
    assert isinstance(err, CompilationError)
    line = _line_of(_shape_mismatch, "a + b")
    head, src, caret = str(err).splitlines()[:3]
    assert head.startswith(f"{__file__}:{line}:") and ": error: " in head and "16" in head and "32" in head
    assert src == "    tl.store(x_ptr + a, a + b)"
    assert caret == " " * err.col_offset + "^" and src[err.col_offset:].startswith("a + b")
    assert isinstance(err.original, ValueError)


@triton.jit
def _bad_helper(x):
    return x.to(tl.float32, bitcast=True) + tl.arange(0, 8)


@interp
def _calls_bad_helper(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 4), _bad_helper(v))


def test_an_error_in_a_helper_names_both_lines():
    with pytest.raises(InterpreterError) as info:
        run_grid(_calls_bad_helper, (1,), (np.zeros(4, np.int64),))
    err = info.value
    assert err.lineno == _line_of(_bad_helper, "bitcast=True")
    assert f"in '_bad_helper' called from {__file__}:{_line_of(_calls_bad_helper, '_bad_helper(v)')}" in str(err)


@interp
def _undefined(x_ptr):
    tl.store(x_ptr, tl.no_such_function(1))


def test_a_missing_attribute_is_located():
    with pytest.raises(InterpreterError, match="no_such_function") as info:
        run_grid(_undefined, (1,), (np.zeros(1, np.int32),))
    assert info.value.lineno == _line_of(_undefined, "no_such_function")


def test_the_bad_kernel_corpus_ends_in_located_errors(tmp_path):
    """Every mutant the interpreter does not run ends in a CompilationError
    naming file:line; a mutant it runs never fails the compiler's Python
    subset check."""
    sys.path.insert(0, os.path.dirname(__file__))
    from test_bad_kernel_corpus import load, mutant_source
    count = int(os.environ.get("TRITIUM_BAD_KERNELS_INTERP", "300"))
    results, bugs = Counter(), []
    for index in range(count):
        name, source = mutant_source(random.Random(index))
        try:
            mod = load(tmp_path / f"bad_interp_{index}.py", source)
        except Exception:
            continue
        result = _interpret(getattr(mod, name), name)
        sys.modules.pop(f"bad_interp_{index}", None)
        results[result.split(":")[0]] += 1
        if result.startswith("BUG"):
            bugs.append(f"mutant {index}: {result}\n{source}")
    print("interpreted bad-kernel corpus:", dict(sorted(results.items())))
    assert not bugs, f"{len(bugs)} mutants escaped:\n\n" + "\n\n".join(bugs[:3])
    assert results["ran"] > 0 and results["CompilationError"] + results["InterpreterError"] > 0


def _args(name: str) -> tuple:
    f32 = np.float32
    return {
        "vector_add": ((2,), (np.ones(256, f32), np.ones(256, f32), np.zeros(256, f32), 200), {"BLOCK": 128}),
        "softmax": ((2,), (np.zeros(512, f32), np.ones(512, f32), 256, 200), {"BLOCK": 256}),
        "tiles": ((2,), (np.ones(64 * 64, f32), np.zeros(64, f32), 64, 64), {"BM": 32, "BN": 64}),
        "counters": ((2,), (np.arange(256, dtype=np.int32), np.zeros(17, np.int32), 256), {"BLOCK": 128}),
    }[name]


class _Timeout(BaseException):
    pass


def _interpret(kernel, name: str) -> str:
    grid, args, kwargs = _args(name)

    def on_alarm(*_):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    try:
        run_grid(kernel, grid, args, kwargs=kwargs, oob="skip")
    except _Timeout:
        return "timeout"
    except CompilationError as e:
        first = str(e).splitlines()[0]
        if e.filename is None or not first.startswith(f"{e.filename}:{e.lineno}:"):
            return f"BUG: an error without its place: {first}"
        return type(e).__name__ if type(e) in (CompilationError, InterpreterError) else "CompilationError"
    except Exception as e:  # noqa: BLE001 - the test is that nothing else escapes
        return f"BUG: {type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    try:
        kernel.compile_ir(*args, **kwargs)
    except UnsupportedLanguageConstruct as e:
        return f"BUG: ran in the interpreter but the compiler refuses its Python: {e}"
    except Exception:  # noqa: BLE001 - typing errors on paths the interpreter did not take are allowed
        pass
    return "ran"
