"""cuBLASLt matrix multiply through ctypes: Triton's
`triton._C.libtriton.nvidia.cublas.CublasLt`, which tutorials and
benchmarks use as the vendor baseline.

    cublas = CublasLt(torch.empty(32 << 20, device="cuda", dtype=torch.uint8))
    cublas.matmul(a, b, c)      # c = a @ b.T; a (M, K), b (N, K), c (M, N), row-major

a, b and c share one dtype: float16, bfloat16, float32 or float8_e4m3fn
(fp8 accumulates in fp32 with cuBLASLt's fast-accumulation mode, as
Triton's binding sets it). The library is the libcublasLt the process has
loaded already (PyTorch's), else the one from the nvidia-cublas wheels on
sys.path, else the system's. The workspace tensor is cuBLASLt's scratch
memory (its size caps the algorithms chosen); the product runs on the
current stream (Triton's binding uses the default stream). The algorithm
cuBLASLt's heuristic picks is kept per problem shape and dtype."""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
from pathlib import Path
from typing import Any

from . import driver

# cublasLt.h / library_types.h numbering
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF, CUDA_R_8F_E4M3 = 0, 2, 14, 28
CUBLAS_COMPUTE_32F = 68
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
MATMUL_DESC_TRANSA, MATMUL_DESC_TRANSB, MATMUL_DESC_FAST_ACCUM = 3, 4, 25
MATMUL_PREF_MAX_WORKSPACE_BYTES = 1

DTYPES = {"torch.float16": CUDA_R_16F, "torch.bfloat16": CUDA_R_16BF, "torch.float32": CUDA_R_32F,
          "torch.float8_e4m3fn": CUDA_R_8F_E4M3}

STATUS = {1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH", 11: "MAPPING_ERROR",
          13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}


class HeuristicResult(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t."""
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves_count", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "cublasLtCreate": [ctypes.POINTER(_P)],
    "cublasLtDestroy": [_P],
    "cublasLtMatmulDescCreate": [ctypes.POINTER(_P), ctypes.c_int, ctypes.c_int],
    "cublasLtMatmulDescDestroy": [_P],
    "cublasLtMatmulDescSetAttribute": [_P, ctypes.c_int, _P, ctypes.c_size_t],
    "cublasLtMatrixLayoutCreate": [ctypes.POINTER(_P), ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64,
                                   ctypes.c_int64],
    "cublasLtMatrixLayoutDestroy": [_P],
    "cublasLtMatmulPreferenceCreate": [ctypes.POINTER(_P)],
    "cublasLtMatmulPreferenceDestroy": [_P],
    "cublasLtMatmulPreferenceSetAttribute": [_P, ctypes.c_int, _P, ctypes.c_size_t],
    "cublasLtMatmulAlgoGetHeuristic": [_P, _P, _P, _P, _P, _P, _P, ctypes.c_int, ctypes.POINTER(HeuristicResult),
                                       ctypes.POINTER(ctypes.c_int)],
    "cublasLtMatmul": [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, ctypes.c_size_t, _P],
}


def library_path() -> str | None:
    """Where libcublasLt is: the copy this process loaded, a pip wheel's, the system's."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and "/libcublasLt.so" in parts[5]:
                    return parts[5].strip()
    except OSError:
        pass
    for entry in sys.path:
        for rel in ("nvidia/cublas/lib", "nvidia/cu13/lib"):
            found = sorted(Path(entry or ".").joinpath(rel).glob("libcublasLt.so*"))
            if found:
                return str(found[0])
    return ctypes.util.find_library("cublasLt")


_lib: Any = None


def library() -> Any:
    """libcublasLt through ctypes, loaded once; RuntimeError when absent."""
    global _lib
    if _lib is None:
        path = library_path()
        if path is None:
            raise RuntimeError("cuBLASLt (libcublasLt.so) was not found: it comes with PyTorch's CUDA wheels "
                               "(nvidia-cublas-cu12), or put it on LD_LIBRARY_PATH")
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError(f"cuBLASLt: cannot load {path}: {e}") from None
        for name, args in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int
        _lib = lib
    return _lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"cuBLASLt {what} failed: CUBLAS_STATUS_{STATUS.get(status, str(status))}")


def _shape(t: Any, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in t.shape)
    except (AttributeError, TypeError):
        raise TypeError(f"CublasLt.matmul: '{name}' must be a tensor, got {type(t).__name__}") from None


def matmul_problem(a: Any, b: Any, c: Any) -> tuple[int, int, int, str]:
    """(M, N, K, dtype) of `c = a @ b.T`, after Triton's binding's checks
    (one supported dtype; 2-D; a (M, K), b (N, K), c (M, N)) and
    row-major contiguity, which the binding assumes."""
    sa, sb, sc = _shape(a, "a"), _shape(b, "b"), _shape(c, "c")
    # cuBLASLt dereferences the pointers on the device: a host tensor would crash the process
    devices = [str(getattr(t, "device", "an unknown device")) for t in (a, b, c)]
    for name, d in zip("abc", devices):
        if not d.startswith("cuda"):
            raise RuntimeError(f"CublasLt.matmul: '{name}' is on {d}, expected a CUDA tensor")
    if len(set(devices)) != 1:
        raise RuntimeError(f"CublasLt.matmul: a, b and c must be on one device, got {', '.join(devices)}")
    dtypes = [str(t.dtype) for t in (a, b, c)]
    if len(set(dtypes)) != 1:
        raise RuntimeError(f"CublasLt.matmul: a, b and c must have one dtype, got {', '.join(dtypes)}")
    if dtypes[0] not in DTYPES:
        raise RuntimeError(f"CublasLt.matmul: unsupported dtype {dtypes[0]} (supported: "
                           f"{', '.join(DTYPES)})")
    if len(sa) != 2 or len(sb) != 2 or len(sc) != 2:
        raise RuntimeError(f"CublasLt.matmul: only 2-D matrices are supported, got shapes {list(sa)}, {list(sb)}, "
                           f"{list(sc)}")
    (m, k), (n, kb) = sa, sb
    if kb != k:
        raise RuntimeError(f"CublasLt.matmul: a is {list(sa)} and b is {list(sb)}: expected a.shape[1] == "
                           "b.shape[1] (b is given transposed, as (N, K))")
    if sc != (m, n):
        raise RuntimeError(f"CublasLt.matmul: c is {list(sc)}, expected [{m}, {n}] for a {list(sa)} and "
                           f"b {list(sb)} (b is given transposed, as (N, K))")
    for t, name in ((a, "a"), (b, "b"), (c, "c")):
        if not t.is_contiguous():
            raise RuntimeError(f"CublasLt.matmul: '{name}' must be contiguous (row-major)")
    return m, n, k, dtypes[0]


class CublasLt:
    """A cuBLASLt handle with its workspace (a CUDA tensor, kept alive here)."""

    def __init__(self, workspace: Any):
        device = getattr(workspace, "device", None)
        if device is not None and not str(device).startswith("cuda"):
            raise TypeError(f"CublasLt: the workspace must be a CUDA tensor, got one on {device}")
        try:
            self.workspace_ptr = int(workspace.data_ptr())
            self.workspace_size = int(workspace.numel()) * int(workspace.element_size())
        except AttributeError:
            raise TypeError(f"CublasLt: the workspace must be a CUDA tensor, got {type(workspace).__name__}") \
                from None
        self.workspace = workspace
        self._plans: dict[tuple, tuple] = {}
        self._handle = None
        self._preference = None
        lib = self._lib = library()
        handle = _P()
        _check(lib.cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
        self._handle = handle
        pref = _P()
        _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "cublasLtMatmulPreferenceCreate")
        self._preference = pref
        size = ctypes.c_uint64(self.workspace_size)
        _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, MATMUL_PREF_MAX_WORKSPACE_BYTES, ctypes.byref(size),
                                                        ctypes.sizeof(size)), "setting the workspace size")

    def _plan(self, m: int, n: int, k: int, dtype: str) -> tuple:
        """The descriptors and algorithm for one shape and dtype, made once.
        cuBLASLt is column-major: the row-major c (M, N) is the column-major
        c^T (N, M) = b (N, K) · a^T, i.e. op(A) = T on b's (K, N) column-major
        view and op(B) = N on a's (K, M) view."""
        key = (m, n, k, dtype)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        lib = self._lib
        t = DTYPES[dtype]
        desc = _P()
        _check(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate")
        layouts: list[_P] = []
        try:
            for attr, value in ((MATMUL_DESC_TRANSA, CUBLAS_OP_T), (MATMUL_DESC_TRANSB, CUBLAS_OP_N)):
                v = ctypes.c_int(value)
                _check(lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(v), ctypes.sizeof(v)),
                       "setting the transposes")
            if t == CUDA_R_8F_E4M3:
                fast = ctypes.c_int8(1)
                _check(lib.cublasLtMatmulDescSetAttribute(desc, MATMUL_DESC_FAST_ACCUM, ctypes.byref(fast), 1),
                       "setting fp8 fast accumulation")
            # C is not read (beta = 0); fp8 products take an fp16 C, as in Triton's binding
            c_type = CUDA_R_16F if t == CUDA_R_8F_E4M3 else t
            for dt, rows, cols, ld in ((t, k, n, k), (t, k, m, k), (c_type, n, m, n), (t, n, m, n)):
                layout = _P()
                _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), dt, rows, cols, ld),
                       "cublasLtMatrixLayoutCreate")
                layouts.append(layout)
            result = HeuristicResult()
            found = ctypes.c_int(0)
            _check(lib.cublasLtMatmulAlgoGetHeuristic(self._handle, desc, *layouts, self._preference, 1,
                                                      ctypes.byref(result), ctypes.byref(found)),
                   "cublasLtMatmulAlgoGetHeuristic")
            if found.value == 0:
                raise RuntimeError(f"cuBLASLt has no algorithm for a ({m}, {k}) x b ({n}, {k})^T in {dtype} with a "
                                   f"{self.workspace_size}-byte workspace")
        except BaseException:
            for layout in layouts:
                lib.cublasLtMatrixLayoutDestroy(layout)
            lib.cublasLtMatmulDescDestroy(desc)
            raise
        plan = self._plans[key] = (desc, layouts, result)
        return plan

    def matmul(self, a: Any, b: Any, c: Any) -> None:
        """c = a @ b.T (b given as (N, K)), written into c."""
        m, n, k, dtype = matmul_problem(a, b, c)
        desc, (la, lb, lc, ld), result = self._plan(m, n, k, dtype)
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        device = driver.current_device()
        stream = driver.current_stream(device)
        _check(self._lib.cublasLtMatmul(self._handle, desc, ctypes.byref(alpha), b.data_ptr(), la, a.data_ptr(), lb,
                                        ctypes.byref(beta), None, lc, c.data_ptr(), ld, ctypes.byref(result.algo),
                                        self.workspace_ptr, self.workspace_size, stream), "cublasLtMatmul")

    def __del__(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is None:
            return
        for desc, layouts, _ in getattr(self, "_plans", {}).values():
            for layout in layouts:
                lib.cublasLtMatrixLayoutDestroy(layout)
            lib.cublasLtMatmulDescDestroy(desc)
        if self._preference is not None:
            lib.cublasLtMatmulPreferenceDestroy(self._preference)
        if self._handle is not None:
            lib.cublasLtDestroy(self._handle)


__all__ = ["CublasLt", "DTYPES", "library", "library_path", "matmul_problem"]
