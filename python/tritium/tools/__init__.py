"""Host-side helpers kernels take as arguments (`triton.tools` in Triton)."""
