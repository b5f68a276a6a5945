"""Argument classification (`signature.arg_kind`): the one place that decides
what a launch argument is, shared by compile-time typing (`arg_type`) and the
launch key (`specialization._entry`). Pins where the two views differ."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.signature import ArgKind, arg_kind, arg_type
from tritium.runtime.specialization import specializer


class RankZeroTorchLike:
    """A 0-d torch tensor as far as classification looks: data_ptr, dtype, item, ndim 0."""
    dtype = np.dtype("float32")
    ndim = 0

    def data_ptr(self) -> int:
        return 4096

    def item(self) -> float:
        return 1.0


class DLPackOnly:
    def __dlpack__(self, stream=None):
        raise AssertionError("classification must not read the capsule")


@pytest.mark.parametrize("v, kind", [
    (None, ArgKind.CONSTEXPR), ("s", ArgKind.CONSTEXPR), (tl.float16, ArgKind.CONSTEXPR),
    (tl.constexpr(3), ArgKind.CONSTEXPR), (True, ArgKind.BOOL), (7, ArgKind.INT), (2 ** 63, ArgKind.INT),
    (1.5, ArgKind.FLOAT), (np.zeros(4, np.float16), ArgKind.TENSOR), (np.float32(1), ArgKind.SCALAR),
    (object(), None), ((1, 2), None),
])
def test_kinds_both_views_agree_on(v, kind):
    assert arg_kind(v) is kind
    assert arg_kind(v, launch=True) is kind


def test_rank_zero_tensor_is_a_pointer_only_at_launch():
    assert arg_kind(RankZeroTorchLike()) is ArgKind.SCALAR
    assert arg_kind(RankZeroTorchLike(), launch=True) is ArgKind.TENSOR


def test_dlpack_is_read_only_at_launch():
    assert arg_kind(DLPackOnly()) is None
    assert arg_kind(DLPackOnly(), launch=True) is ArgKind.DLPACK


@pytest.mark.parametrize("v, want", [
    (True, tl.int1), (7, tl.int32), (2 ** 40, tl.int64), (2 ** 63, tl.uint64), (1.5, tl.float32),
    (np.zeros(4, np.float16), tl.pointer_type(tl.float16)), (np.int64(3), tl.int64),
])
def test_arg_type_and_the_launch_key_give_the_same_type(v, want):
    @triton.jit
    def k(a):
        pass
    s = specializer(k)
    assert arg_type("a", v) == want
    assert s.specialization(s.key((v,))).signature["a"] == want


def test_unsupported_argument_messages():
    @triton.jit
    def k(a):
        pass
    with pytest.raises(TypeError, match=r"^unsupported type object for kernel argument 'a' \(expected"):
        arg_type("a", object())
    with pytest.raises(TypeError, match=r"^unsupported type object for kernel argument 'a' of 'k' \(expected"):
        specializer(k).key_python((object(),))
