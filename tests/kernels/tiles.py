"""Small kernels several compile tests (and their GPU counterparts) share:
a one-stride softmax, a 2-D tile layer norm with a reduction per row, a loop
kernel with a loop-carried tensor, an `if` inside and a `while` after, and a
2-D tile summed per row."""
import tritium as triton
import tritium.language as tl


@triton.jit
def softmax(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def layer_norm_2d(x_ptr, y_ptr, n_rows, n_cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / n_cols
    xc = tl.where(mask, x - mean[:, None], 0.0)
    var = tl.sum(xc * xc, axis=1) / n_cols
    y = xc / tl.sqrt(var + 1e-5)[:, None]
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def loop_kernel(x_ptr, out_ptr, lb, ub, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    cnt = 0
    for i in range(lb, ub, step):
        x = tl.load(x_ptr + offs + i * BLOCK)
        if i % 2 == 0:
            acc += x
        else:
            acc -= x * 0.5
        cnt += 1
    while cnt > 1:
        cnt = cnt // 2
        acc = acc * 2.0
    tl.store(out_ptr + offs, acc + cnt)


@triton.jit
def row_sum_2d(x_ptr, out_ptr, n_rows, n_cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=rows < n_rows)
