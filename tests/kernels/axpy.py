"""axpy (y = alpha * x + y) with the interpreter asked for in the decorator
(`@triton.jit(interpret=True)`), which Triton itself does not accept: kept
apart from the kernels the benches compile with Triton too."""
import tritium as triton
import tritium.language as tl


@triton.jit(interpret=True)
def axpy_kernel(x_ptr, y_ptr, alpha, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(y_ptr + offsets, alpha * x + y, mask=in_bounds)
