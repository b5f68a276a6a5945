"""Grouped GEMM: one persistent launch computes many independent fp16
matmuls C_g = A_g @ B_g. Program p takes output tiles p, p + PROGRAMS, ...
of the problems laid end to end; each problem's sizes (m, n, k) and row
strides (lda, ldb, ldc) are read from tables in memory, and so are its
matrices: as 64-bit addresses (`BY_OFFSET=False`, what a CUDA caller passes:
`tensor.data_ptr()`), or as element offsets into one buffer per operand
(`BY_OFFSET=True`: the interpreter maps only kernel arguments, so a table of
real addresses means nothing to it). Either way the compiler knows nothing
about the matrices' alignment unless `HINT` says, as tutorial 08 does, with
`tl.multiple_of` statements. `PLUS_EQUALS` picks how the K loop
accumulates: `acc += tl.dot(a, b)` or `acc = tl.dot(a, b, acc)`."""
import tritium
import tritium.language as tl


@tritium.jit
def grouped_gemm_kernel(a_table, b_table, c_table, a_all, b_all, c_all, shapes, strides, count,
                        PROGRAMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                        BY_OFFSET: tl.constexpr, PLUS_EQUALS: tl.constexpr, HINT: tl.constexpr = False):
    tile = tl.program_id(0)
    first = 0
    for g in range(count):
        m = tl.load(shapes + 3 * g)
        n = tl.load(shapes + 3 * g + 1)
        k = tl.load(shapes + 3 * g + 2)
        tiles_n = tl.cdiv(n, BN)
        end = first + tl.cdiv(m, BM) * tiles_n
        while tile >= first and tile < end:
            lda = tl.load(strides + 3 * g)
            ldb = tl.load(strides + 3 * g + 1)
            ldc = tl.load(strides + 3 * g + 2)
            if BY_OFFSET:
                a = a_all + tl.load(a_table + g)
                b = b_all + tl.load(b_table + g)
                c = c_all + tl.load(c_table + g)
            else:
                a = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
                b = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
                c = tl.load(c_table + g).to(tl.pointer_type(tl.float16))
            rows = (tile - first) // tiles_n * BM + tl.arange(0, BM)
            cols = (tile - first) % tiles_n * BN + tl.arange(0, BN)
            ks = tl.arange(0, BK)
            a_ptrs = a + rows[:, None] * lda + ks[None, :]
            b_ptrs = b + ks[:, None] * ldb + cols[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            # whole tiles only: every m, n and k is a multiple of the blocks
            for _ in range(0, tl.cdiv(k, BK)):
                if HINT:
                    tl.multiple_of(a_ptrs, [16, 16])
                    tl.multiple_of(b_ptrs, [16, 16])
                x = tl.load(a_ptrs)
                y = tl.load(b_ptrs)
                if PLUS_EQUALS:
                    acc += tl.dot(x, y)
                else:
                    acc = tl.dot(x, y, acc)
                a_ptrs += BK
                b_ptrs += BK * ldb
            tl.store(c + rows[:, None] * ldc + cols[None, :], acc.to(tl.float16))
            tile += PROGRAMS
        first = end
