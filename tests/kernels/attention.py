"""Fused attention forward: one block of queries per program, keys and values
streamed in blocks with an online softmax (running max and normaliser)."""
import tritium as triton
import tritium.language as tl


@triton.jit
def attention_fwd_kernel(Q, K, V, O, sm_scale, n_ctx, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < n_ctx, other=0.0)
    # running max and normaliser per query row; exp2 with log2(e) folded into the scale
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.4426950408889634
    for start in range(0, n_ctx, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        k_t = tl.load(K + cols[None, :] * HEAD_DIM + dims[:, None], mask=cols[None, :] < n_ctx, other=0.0)
        visible = cols[None, :] < n_ctx
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        scores = tl.where(visible, tl.dot(q, k_t) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(scores, 1))
        p = tl.math.exp2(scores - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + cols[:, None] * HEAD_DIM + dims[None, :], mask=cols[:, None] < n_ctx, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(O + rows[:, None] * HEAD_DIM + dims[None, :], out.to(O.dtype.element_ty), mask=rows[:, None] < n_ctx)
