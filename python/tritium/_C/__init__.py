"""Triton's native extension (`triton._C`), as far as code outside Triton's
own compiler reaches into it: see libtriton.py."""
