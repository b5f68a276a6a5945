"""Launch-key cost: microseconds to bind arguments and compute the
specialization key of a 12-argument kernel (6 tensors, 4 ints, 2 floats),
tritium next to Triton's own binder (`create_function_from_signature` +
`compute_cache_key`, what `JITFunction.run` does per launch) in the same run.

Two tritium figures: the launch path's key (`KeyPlanProbe.native_keys`: what
`kernel[grid](...)` computes before its table lookup, no Python object
made) and the Python path's `Specializer.bind` (binding, the key as a Python
object and the launch options, what a launch with options or a table miss
runs).

    .venv/bin/python benches/key_bench.py [--n 200000] [--triton-site DIR]

Tensors are torch CUDA tensors when torch (and a GPU) is there, torch CPU
tensors with torch alone, else plain objects with `data_ptr()` and `dtype`.
Without an importable triton, the site-packages of benches/.venv-triton (if
present) is added to sys.path; Triton's timing is skipped if that fails.
"""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_args(use_torch: bool) -> tuple[list, str]:
    if use_torch:
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        ts = [torch.empty(4096, dtype=torch.float32, device=dev) for _ in range(5)]
        ts.append(torch.empty(4096, dtype=torch.float16, device=dev)[1:])   # one misaligned pointer
        return ts + [4096, 1, 17, 1 << 20, 0.5, 1e-5], f"torch tensors on {dev}"

    import numpy as np

    class CMethodTensor(np.ndarray):
        """data_ptr a C method and dtype a C getset, as on torch.Tensor, so
        the key takes the same direct-descriptor path as for torch."""
        data_ptr = np.ndarray.item

    def tensor(addr: int):
        return np.array([addr], dtype=np.int64).view(CMethodTensor)   # item() is the "address"

    ts = [tensor((1 << 20) + 64 * i) for i in range(5)] + [tensor((1 << 20) + 2)]   # one misaligned
    return ts + [4096, 1, 17, 1 << 20, 0.5, 1e-5], "NumPy-based objects with C-level data_ptr()/dtype (no torch)"


def timeit(f, args: list, n: int) -> float:
    for _ in range(min(n // 10, 10000)):
        f(*args)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f(*args)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def tritium_keyer():
    import tritium
    from tritium.runtime.specialization import specializer

    @tritium.jit
    def k12(a, b, c, d, e, f, n1, n2, n3, n4, x1, x2):
        pass

    s = specializer(k12, "cuda")
    return s, s._native is not None


def triton_keyer(site: str | None):
    try:
        import triton  # noqa: F401
    except ImportError:
        sites = [site] if site else glob.glob(str(HERE / ".venv-triton/lib/python*/site-packages"))
        if not sites:
            return None, "triton not importable"
        sys.path.append(sites[0])
        try:
            import triton  # noqa: F401
        except ImportError as e:
            return None, f"triton not importable ({e})"
    import triton
    from triton.runtime.jit import compute_cache_key, create_function_from_signature

    @triton.jit
    def k12(a, b, c, d, e, f, n1, n2, n3, n4, x1, x2):
        pass

    try:
        from triton.runtime.driver import driver
        target = driver.active.get_current_target()
    except Exception:
        from triton.backends.compiler import GPUTarget
        target = GPUTarget("cuda", 90, 32)
    from triton.compiler import make_backend
    backend = make_backend(target)
    binder = create_function_from_signature(k12.signature, k12.params, backend)
    kc: dict = {}

    def key(*args):
        bound, spec, options = binder(*args)
        return compute_cache_key(kc, spec, options)
    return key, f"triton {triton.__version__}, target {target.backend}:{target.arch}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--triton-site", default=None)
    ap.add_argument("--rounds", type=int, default=7, help="alternating measurement rounds")
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
        use_torch = True
    except ImportError:
        use_torch = False
    args, what = make_args(use_torch)
    spec, native = tritium_keyer()
    sides = {"tritium bind (Python path)": (spec.bind, args)}
    if native:
        from tritium import _core
        plan = spec._plan
        probe = _core.KeyPlanProbe(plan)
        targs = tuple(args)
        spec.bind(*args)        # a dtype's first sight is Python's (it fills the shared dtype table)
        assert plan.key(targs) is not None and probe.native_keys(targs), "the launch path does not take these arguments"
        sides = {"tritium key (launch path)": (probe.native_keys, [targs]), **sides}
    theirs, tinfo = triton_keyer(a.triton_site)
    print(f"12-argument key (6 tensors, 4 ints, 2 floats); arguments: {what}")
    if theirs is not None:
        sides[tinfo] = (theirs, args)
    else:
        print(f"  triton: skipped ({tinfo})")
    # the sides alternate over rounds, so a slow spell of the host lands on
    # all; each round's ratios compare timings taken seconds apart
    rounds = {name: [] for name in sides}
    for _ in range(a.rounds):
        for name, (f, fargs) in sides.items():
            rounds[name].append(timeit(f, fargs, a.n // a.rounds))
    for name, ts in rounds.items():
        print(f"  {name:34} {min(ts):8.3f} us (best round), {statistics.median(ts):8.3f} us (median round)")
    if theirs is not None:
        for name in list(sides)[:-1]:
            ratios = sorted(o / t for o, t in zip(rounds[name], rounds[tinfo]))
            print(f"  {name} / triton: median {statistics.median(ratios):.3f} over {a.rounds} rounds "
                  f"(range {ratios[0]:.3f}..{ratios[-1]:.3f}; target <= 0.2)")
    if native:
        in_rust(probe, tuple(args), a.n, a.rounds, sides, rounds, tinfo if theirs is not None else None)
        breakdown(probe, args, a.n, rounds[tinfo] if theirs is not None else None)


def in_rust(probe, targs: tuple, n: int, nrounds: int, sides: dict, rounds: dict, tinfo: str | None) -> None:
    """The launch path computes the key inside its one Rust call, so what a
    launch pays for it is the key alone: `KeyPlanProbe.time_keys` times it in a
    Rust loop. Triton's launch calls its binder from Python, so the Python
    call is part of what a Triton launch pays for its key. Alternating with
    Triton again, so each ratio compares timings taken seconds apart."""
    ours, theirs = [], []
    for _ in range(nrounds):
        ours.append(min(probe.time_keys(targs, max(n // nrounds, 1)) for _ in range(3)))
        if tinfo is not None:
            f, fargs = sides[tinfo]
            theirs.append(timeit(f, fargs, n // nrounds))
    print(f"  {'tritium key, timed in a Rust loop':34} {min(ours):8.3f} us (best round), "
          f"{statistics.median(ours):8.3f} us (median round)")
    if tinfo is not None:
        ratios = sorted(o / t for o, t in zip(ours, theirs))
        print(f"  tritium key in Rust / triton: median {statistics.median(ratios):.3f} over {nrounds} rounds "
              f"(range {ratios[0]:.3f}..{ratios[-1]:.3f}; triton median {statistics.median(theirs):.3f} us "
              f"in these rounds; target <= 0.2)")


def breakdown(probe, args: list, n: int, triton_rounds: list | None) -> None:
    """Where the launch path's key goes: the same 12-parameter plan keyed
    with the 6 tensors swapped for floats gives the cost of everything but
    the tensors; the difference, over 6, is one tensor (torch's own data_ptr
    and dtype plus our bookkeeping). Python's own `t.data_ptr(); t.dtype`
    per tensor (with its call overhead) is shown for scale."""
    tensors = args[:6]
    no_tensors = tuple([0.5] * 6 + list(args[6:]))
    full = min(timeit(probe.native_keys, [tuple(args)], n // 4) for _ in range(3))
    rest = min(timeit(probe.native_keys, [no_tensors], n // 4) for _ in range(3))
    t = tensors[0]

    def py_reads():
        t.data_ptr()
        t.dtype
    py = min(timeit(py_reads, [], n // 4) for _ in range(3))
    per = (full - rest) / 6
    floor = min(probe.time_tensor_reads(t, n) for _ in range(3))
    print(f"  breakdown of the launch path's key: {full:.3f} us = {rest:.3f} us without the tensors "
          f"+ 6 x {per:.3f} us per tensor; of which the tensor's own data_ptr() and dtype, "
          f"called from a Rust loop: {floor:.3f} us (from Python, t.data_ptr(); t.dtype: {py:.3f} us)")
    if triton_rounds:
        tri = statistics.median(triton_rounds)
        print(f"  of Triton's median {tri:.3f} us: the 6 tensors {6 * per / tri:.3f} (their reads alone "
              f"{6 * floor / tri:.3f}), everything else {rest / tri:.3f}")


if __name__ == "__main__":
    os.environ.setdefault("TRITIUM_INTERPRET", "0")
    main()
