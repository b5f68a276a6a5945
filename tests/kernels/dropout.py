"""Dropout: with a keep mask from memory, and seeded (`tl.rand(seed, offsets)`,
so the mask is recomputed rather than stored); `rand_kernel` exposes the raw
random stream."""
import tritium as triton
import tritium.language as tl


@triton.jit
def masked_dropout_kernel(x_ptr, keep_ptr, out_ptr, n_elements, p, BLOCK_SIZE: tl.constexpr):
    # The first version of the tutorial: the keep mask comes from host memory.
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    keep = tl.load(keep_ptr + offsets, mask=in_bounds)
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=in_bounds)


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    # The random stream is a pure function of (seed, offset): no state to carry.
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=in_bounds)


@triton.jit
def rand_kernel(out_ptr, n_elements, seed, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.rand(seed, offsets), mask=offsets < n_elements)
