"""A `noinline` @jit helper called from a kernel: the call stays a call in
the IR (a separate function), which the benches, fuzz seeds and call tests exercise."""
import tritium as triton
import tritium.language as tl


@triton.jit(noinline=True)
def scaled_tanh(x, scale):
    e = tl.exp(-2.0 * x * scale)
    return (1.0 - e) / (1.0 + e)


@triton.jit
def noinline_call(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, scaled_tanh(x, scale), mask=mask)
