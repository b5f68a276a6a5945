"""Fused row-wise softmax: each row is loaded once, padded to a power of two
with -inf so the padding neither wins the max nor adds to the sum.
`strided_softmax_kernel` (separate in/out strides, no pipelining hint) is the
one the compile-time benches measure."""
import tritium as triton
import tritium.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    valid = cols < n_cols
    # Padding lanes read -inf so they neither win the max nor add to the sum.
    logits = tl.load(in_ptr + row * in_row_stride + cols, mask=valid, other=-float("inf"))
    shifted = logits - tl.max(logits, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=valid)


@triton.jit
def persistent_softmax_kernel(out_ptr, in_ptr, row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                              NUM_STAGES: tl.constexpr):
    # Fewer programs than rows: each program strides over the rows.
    first = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_SIZE)
    valid = cols < n_cols
    for row in tl.range(first, n_rows, step, num_stages=NUM_STAGES):
        x = tl.load(in_ptr + row * row_stride + cols, mask=valid, other=-float("inf"))
        z = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * row_stride + cols, z / tl.sum(z, axis=0), mask=valid)


@triton.jit
def strided_softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                           BLOCK_SIZE: tl.constexpr):
    # one program per row slice, striding over rows like the fused-softmax tutorial
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row in tl.range(first_row, n_rows, row_step):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        shifted = x - tl.max(x, axis=0)
        num = tl.exp(shifted)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)
