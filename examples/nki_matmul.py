"""A tiled matmul written in NKI's style, run by tritium's interpreter:
C[M, N] = A_T[K, M].T @ B[K, N], one 128 x 512 output tile per program,
accumulated over 128-deep slices of K in an fp32 PSUM tile.

    .venv/bin/python examples/nki_matmul.py [out_dir]

writes the visualizer's view of the launch (matmul.png, matmul.html: the A,
B and C tiles each program touched) and prints the profiler's table.
"""
import sys
from pathlib import Path

import numpy as np

import tritium.nki as nki
import tritium.nki.language as nl
from tritium.interpreter import Profiler, Visualizer, clients


@nki.jit
def nki_matmul(a_t, b, c):
    K, M = a_t.shape
    _, N = b.shape
    TILE_M = nl.tile_size.gemm_stationary_fmax   # 128: rows of C per program
    TILE_K = nl.tile_size.pmax                   # 128: the contraction runs along partitions
    TILE_N = nl.tile_size.gemm_moving_fmax       # 512: columns of C per program
    m = nl.program_id(0)
    n = nl.program_id(1)
    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // TILE_K):
        a_tile = nl.load(a_t[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        b_tile = nl.load(b[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
        acc += nl.matmul(a_tile, b_tile, transpose_x=True)
    nl.store(c[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=acc)


def run(M: int = 256, K: int = 256, N: int = 1024, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    nki_matmul[(M // 128, N // 512)](np.ascontiguousarray(a.T), b, c)
    return a, b, c


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    with clients(Visualizer(), Profiler()) as (viz, prof):
        a, b, c = run()
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-2)
    print("matmul matches NumPy;", viz.save_png(out / "matmul.png"), viz.save_html(out / "matmul.html"))
    print(prof.table())


if __name__ == "__main__":
    main()
