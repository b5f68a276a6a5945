"""Whole kernels in the style of Triton's tutorials (tests/kernels/) compile to
verified IR."""
import tritium as triton
import tritium.language as tl
from ir_util import ir_text, ops
from kernels.matmul import matmul_kernel
from kernels.softmax import persistent_softmax_kernel


def test_matmul():
    sig = "*fp16 *fp16 *fp16 " + " ".join(["i32"] * 9)
    text = ir_text(matmul_kernel, sig, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8,
                   ACTIVATION="leaky_relu")
    assert ops(text, "dot") == 1 and ops(text, "for") == 1 and ops(text, "select") == 1
    assert "tensor<64x64xf32>, tensor<64x32xptr<f16>>, tensor<32x64xptr<f16>>" in text
    plain = ir_text(matmul_kernel, sig, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8,
                    ACTIVATION="")
    assert ops(plain, "select") == 0


def test_softmax():
    text = ir_text(persistent_softmax_kernel, "*fp32 *fp32 i32 i32 i32", BLOCK_SIZE=1024, NUM_STAGES=2)
    assert ops(text, "for") == 1 and ops(text, "reduce") == 2 and ops(text, "exp") == 1


@triton.jit(noinline=True)
def store_one(ptr, V: tl.constexpr):
    tl.store(ptr, V)


@triton.jit
def noinline_statement(x_ptr):
    store_one(x_ptr, 1)
    store_one(x_ptr + 1, 2)
    store_one(x_ptr + 2, 1)


def test_noinline_without_results_and_constexpr_specializations():
    text = ir_text(noinline_statement, "*i32")
    assert ops(text, "call") == 3 and text.count("func @") == 3


@triton.jit
def print_kernel(x_ptr):
    x = tl.load(x_ptr)
    print("x:", x)
    tl.static_print("compile time")


def test_print_maps_to_device_print(capsys):
    text = ir_text(print_kernel, "*i32")
    assert ops(text, "print") == 1 and 'x:' in text
