"""Layer norm forward (storing mean and rstd) and backward: dx per row, dw/db
as per-group partial sums (under a spin lock, or with atomic adds), then a
second kernel that sums the partials."""
import tritium as triton
import tritium.language as tl


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, row_stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * row_stride
    Y += row * row_stride
    # Two passes over the row (mean, then variance) in BLOCK_SIZE chunks, so
    # rows wider than one block work and the variance stays accurate.
    total = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        total += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        centred = tl.where(cols < N, x - mean, 0.0)
        sq += centred * centred
    var = tl.sum(sq, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        valid = cols < N
        w = tl.load(W + cols, mask=valid)
        b = tl.load(B + cols, mask=valid)
        x = tl.load(X + cols, mask=valid, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=valid)


@triton.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW_part, DB_part, X, W, Mean, Rstd, Lock,
                             row_stride, N, GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                             LOCKED: tl.constexpr):
    # One row per program; the whole row fits in one block.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    valid = cols < N
    X += row * row_stride
    DY += row * row_stride
    DX += row * row_stride
    x = tl.load(X + cols, mask=valid, other=0.0).to(tl.float32)
    dy = tl.load(DY + cols, mask=valid, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=valid).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(valid, (x - mean) * rstd, 0.0)
    wdy = tl.where(valid, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=valid)

    # Rows sharing `row % GROUP_SIZE_M` accumulate dw/db into the same partial row.
    part = row % GROUP_SIZE_M
    dw_ptrs = DW_part + part * N + cols
    db_ptrs = DB_part + part * N + cols
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    if LOCKED:
        lock = Lock + part
        first_visit = Lock + GROUP_SIZE_M + part
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
        seen = tl.load(first_visit)
        if seen == 0:
            tl.atomic_xchg(first_visit, 1)
        else:
            partial_dw += tl.load(dw_ptrs, mask=valid)
            partial_db += tl.load(db_ptrs, mask=valid)
        tl.store(dw_ptrs, partial_dw, mask=valid)
        tl.store(db_ptrs, partial_db, mask=valid)
        tl.atomic_xchg(lock, 0)
    else:
        # lock-free: the partial buffers start zeroed and every row adds atomically
        tl.atomic_add(dw_ptrs, partial_dw, mask=valid)
        tl.atomic_add(db_ptrs, partial_db, mask=valid)


@triton.jit
def layer_norm_bwd_dwdb_kernel(DW_part, DB_part, FINAL_DW, FINAL_DB, M, N,
                               BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for start in range(0, M, BLOCK_SIZE_M):
        rows = start + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW_part + offs, mask=mask, other=0.0)
        db += tl.load(DB_part + offs, mask=mask, other=0.0)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)
