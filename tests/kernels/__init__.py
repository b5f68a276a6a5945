"""The Triton tutorial kernels, written the way a Triton user writes them
(`import tritium as triton`, `@triton.jit`, constexpr block sizes). Shared so
that interpreter tests, IR tests and, later, GPU tests and benches run the same
kernels."""
