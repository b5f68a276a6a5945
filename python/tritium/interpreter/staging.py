"""The software pipeliner's ops (`local_alloc`, `local_view`, `async_copy`,
`async_commit`, `async_wait`, `dot_wait`, and TMA's `tma_copy` with its
`mbarrier_init` / `mbarrier_wait` / `mbarrier_inval`) in the interpreter. Compiled code makes them
only after layout assignment, so kernels never bring them here; hand-written
or fuzzed IR may. A copy lands at once, which is one of the orders a
correctly waited-for pipeline allows, so commit and wait have nothing to do;
likewise a dot finishes at once, so `dot_wait` gives back its operands."""
from __future__ import annotations

import numpy as np

from ..language.dtypes import block_type
from .errors import InterpreterError


class StagingOps:
    """Mixed into NumpyBuilder."""

    def _op_local_alloc(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        return [self.wrap(np.zeros((self.pids.shape[0], *ty.shape)), ty)]

    def _stage(self, buf, stage) -> np.ndarray:
        s = np.asarray(stage).astype(np.int64).reshape(-1)
        stages = buf.shape[1]
        if ((s < 0) | (s >= stages)).any():
            raise self._error(InterpreterError, f"stage {int(s[(s < 0) | (s >= stages)][0])} of a buffer with "
                                                f"{stages} stages")
        return np.broadcast_to(s, (buf.shape[0],))

    def _op_local_view(self, op, vals, types, rtys, attrs):
        buf, stage = vals[0], self._stage(vals[0], vals[1])
        return [self.wrap(buf[np.arange(buf.shape[0]), stage], rtys[0])]

    def _op_async_copy(self, op, vals, types, rtys, attrs):
        buf, stage = vals[0], self._stage(vals[0], vals[1])
        tile = self._op_load(op, vals[2:], types[2:], [block_type(types[0], list(buf.shape[2:]))], {})[0]
        buf[np.arange(buf.shape[0]), stage] = np.broadcast_to(tile, (buf.shape[0], *tile.shape[1:]))
        return []

    def _op_async_commit(self, op, vals, types, rtys, attrs):
        return []

    def _op_async_wait(self, op, vals, types, rtys, attrs):
        return []

    def _op_dot_wait(self, op, vals, types, rtys, attrs):
        return list(vals)

    # a TMA copy lands at once too (where its guard holds): a barrier's
    # phases then always completed before anyone waits on them
    def _op_mbarrier_init(self, op, vals, types, rtys, attrs):
        return []

    def _op_mbarrier_wait(self, op, vals, types, rtys, attrs):
        return []

    def _op_mbarrier_inval(self, op, vals, types, rtys, attrs):
        return []

    def _op_tma_copy(self, op, vals, types, rtys, attrs):
        # operands: buffer, stage, barriers, guard, then a tma_load's (the map first)
        buf, stage = vals[0], self._stage(vals[0], vals[1])
        guard = np.broadcast_to(np.asarray(vals[3]).astype(bool).reshape(-1), (buf.shape[0],))
        tile_ty = block_type(types[0], list(buf.shape[2:]))
        tile = self._op_block_load(op, vals[5:], types[5:], [tile_ty], attrs)[0]
        tile = np.broadcast_to(tile, (buf.shape[0], *tile.shape[1:]))
        rows = np.arange(buf.shape[0])[guard]
        buf[rows, stage[guard]] = tile[guard]
        return []
