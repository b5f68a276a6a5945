"""The one home of sample kernels: the Triton tutorial kernels, written the way
a Triton user writes them (`import tritium as triton`, `@triton.jit`, constexpr
block sizes), imported by the tests, the compile-time benches
(benches/kernels/defs.py) and the fuzz seeds (fuzz/seed_kernels.py), so all of
them run the same kernels. Files the benches import use only what Triton itself
accepts (benches/vs_triton.py compiles them with Triton too); the
interpreter-only decorator lives in axpy.py."""
