"""The interpreter's `extern_elementwise` (libdevice functions, computed by
libdevice_numpy.py), `gather`, `histogram` and `assume` ops; mixed into
NumpyBuilder. Where compiled code would be undefined (an index out of
range, a false assumption) the interpreter reports it at the kernel line."""
from __future__ import annotations

import numpy as np

from . import floats, libdevice_numpy
from .errors import InterpreterError
from .handles import wrap


class ExternOps:
    """Mixed into NumpyBuilder (which supplies `_error`)."""

    def _op_extern_elementwise(self, op, vals, types, rtys, attrs):
        symbol = attrs.get("symbol", "")
        name = attrs.get("name") or symbol
        args = [np.asarray(v) for v in vals]
        if args:
            args = list(np.broadcast_arrays(*args))
        try:
            out = libdevice_numpy.call(symbol, args, floats.storage_dtype(rtys[0].scalar))
        except KeyError:
            raise self._error(InterpreterError, f"{name} ({symbol}) has no interpreter implementation") from None
        return [wrap(out, rtys[0])]

    def _op_gather(self, op, vals, types, rtys, attrs):
        src, index = np.asarray(vals[0]), np.asarray(vals[1]).astype(np.int64)
        axis = int(attrs["axis"]) + 1
        length = src.shape[axis]
        bad = (index < 0) | (index >= length)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise self._error(InterpreterError, f"gather: index {int(index[first])} at position {first[1:]} is "
                              f"outside the source's axis {axis - 1} of length {length}")
        lead = np.broadcast_shapes(src.shape[:1], index.shape[:1])
        src = np.broadcast_to(src, lead + src.shape[1:])
        index = np.broadcast_to(index, lead + index.shape[1:])
        return [wrap(np.take_along_axis(src, index, axis), rtys[0])]

    def _op_histogram(self, op, vals, types, rtys, attrs):
        bins = int(attrs["num_bins"])
        data = np.asarray(vals[0]).astype(np.int64)
        keep = (data >= 0) & (data < bins)
        if len(vals) > 1:
            keep &= np.asarray(vals[1]).astype(bool)
        out = np.zeros((data.shape[0], bins), np.int32)
        for p in range(data.shape[0]):
            out[p] = np.bincount(data[p][keep[p]], minlength=bins)[:bins]
        return [wrap(out, rtys[0])]

    def _op_assume(self, op, vals, types, rtys, attrs):
        cond = np.asarray(vals[0]).astype(bool)
        if not cond.all():
            raise self._error(InterpreterError, "tl.assume: the assumed condition is false; compiled code "
                              "relying on it would be undefined")
        return []
