"""A noinline function with a dot, called inside a kernel's pipelined K loop:
the kernel's stage buffers are live across the call, so the callee's shared
memory (its staged operands) must sit at a non-zero virtual-buffer offset.
Shared by tests/test_codegen_calls.py (allocation, ptxas, interpreter) and
tests/gpu/test_dot_gpu.py (the H100)."""
import tritium
import tritium.language as tl


@tritium.jit(noinline=True)
def strided_tile_product(x_ptr, stride, acc, N: tl.constexpr):
    # its own operands, loaded and staged in its own shared memory
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * stride + r[None, :])
    return tl.dot(x, x, acc)


@tritium.jit
def dot_beside_call(a_ptr, b_ptr, x_ptr, c_ptr, K, N: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, N)
    rk = tl.arange(0, BK)
    acc = tl.zeros((N, N), dtype=tl.float32)
    side = tl.zeros((N, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + r[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + r[None, :])
        acc = tl.dot(a, b, acc)
        side = strided_tile_product(x_ptr + k0, K, side, N)
    tl.store(c_ptr + r[:, None] * N + r[None, :], acc + side)
