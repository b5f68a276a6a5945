"""Builtins that Triton also exposes as tensor methods (`x.sum(1)`, `x.exp()`):
registered with `core` for `tensor.__getattr__`, so the list lives in one place."""
from __future__ import annotations

from . import builtins as _b
from . import core
from . import lookup as _look
from . import math as _m
from . import sorting as _sort
from . import standard as _s

core.add_tensor_members({
    # reductions and scans
    "sum": _s.sum, "max": _s.max, "min": _s.min, "argmax": _s.argmax, "argmin": _s.argmin,
    "xor_sum": _s.xor_sum, "reduce": _s.reduce, "associative_scan": _s.associative_scan,
    "cumsum": _s.cumsum, "cumprod": _s.cumprod, "softmax": _s.softmax, "sigmoid": _s.sigmoid,
    "flip": _s.flip, "reduce_or": _s.reduce_or, "sort": _sort.sort, "topk": _sort.topk,
    "gather": _look.gather, "histogram": _look.histogram,
    # math
    "exp": _m.exp, "exp2": _m.exp2, "log": _m.log, "log2": _m.log2, "sqrt": _m.sqrt,
    "sqrt_rn": _m.sqrt_rn, "rsqrt": _m.rsqrt, "abs": _m.abs, "sin": _m.sin, "cos": _m.cos,
    "floor": _m.floor, "ceil": _m.ceil, "erf": _m.erf, "fdiv": _m.fdiv, "umulhi": _m.umulhi,
    # shape and misc
    "join": _b.join, "interleave": _b.interleave, "cast": _b.cast,
})
