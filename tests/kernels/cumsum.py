"""Cumulative sums with `tl.cumsum`: along a row, carried across blocks for rows
longer than one block, and along axis 1 of a 2-D tile."""
import tritium as triton
import tritium.language as tl


@triton.jit
def row_cumsum_kernel(x_ptr, out_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * row_stride
    out_ptr += row * row_stride
    carry = tl.zeros([1], dtype=out_ptr.dtype.element_ty)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        valid = cols < n_cols
        x = tl.load(x_ptr + cols, mask=valid, other=0)
        running = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + cols, running, mask=valid)
        carry += tl.sum(x, axis=0)


@triton.jit
def tile_cumsum_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=1), mask=mask)
