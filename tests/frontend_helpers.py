"""@jit helpers in their own module, so tests can check inlining across
modules (the callee resolves names in *its* globals, not the caller's)."""
import tritium as triton
import tritium.language as tl

SCALE = tl.constexpr(3)


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def masked_load(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n, other=0.0)


@triton.jit(noinline=True)
def twice(x):
    return x + x


@triton.jit
def bad_add(x, y):
    return x + y
