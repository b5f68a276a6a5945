"""A long unrolled chain of elementwise math (STEPS a constexpr): thousands of
ops in one kernel, to stress each compile stage's per-op cost."""
import tritium as triton
import tritium.language as tl


@triton.jit
def big_elementwise(x_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # a long unrolled chain of block math: stresses every stage's per-op cost
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x
    for i in tl.static_range(STEPS):
        acc = acc * 0.999 + tl.sin(acc) * 0.5
        if i % 4 == 0:
            acc = tl.maximum(acc, x)
    tl.store(out_ptr + offs, acc, mask=mask)
