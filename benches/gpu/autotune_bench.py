"""Autotuning, tritium vs Triton on one GPU in one run: a row softmax and a
layer norm over 16 configs each, and an fp16 matmul (tensor cores) over 16
configs. Per case and library: the wall time from the first call (cold
cache, nothing compiled) to its result, the config chosen, and the chosen
config's kernel time measured afterwards, plus the configs each library
skipped. Each library runs in its own process with an empty cache; rounds
alternate the libraries and the median round is reported. A config or a case
failing in one library is reported in the table, never fatal.

Targets (issue 16): tritium's wall time <= 1/4 of Triton's; its chosen
kernel within 2% of Triton's chosen kernel.

Usage: python benches/gpu/autotune_bench.py [--rounds N] [--only softmax,layernorm,matmul]
       python benches/gpu/autotune_bench.py --compile-only   (no GPU: compiles every config with tritium)"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

LIBS = ("tritium", "triton")
CASES = ("softmax", "layernorm", "matmul")

KERNELS = '''
import {lib} as triton
import {lib}.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_rows, n_cols, stride, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    # ROWS rows per program, each row whole in registers
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    where = rows[:, None] * stride + cols[None, :]
    x = tl.load(in_ptr + where, mask=inside, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + where, e / tl.sum(e, axis=1)[:, None], mask=inside)


@triton.jit
def layer_norm(x_ptr, y_ptr, w_ptr, b_ptr, n_cols, stride, eps, CHUNK: tl.constexpr):
    # one row per program: sums of x and x^2 in one sweep, then a normalizing sweep
    x_row = x_ptr + tl.program_id(0) * stride
    y_row = y_ptr + tl.program_id(0) * stride
    s1 = tl.zeros([CHUNK], dtype=tl.float32)
    s2 = tl.zeros([CHUNK], dtype=tl.float32)
    for start in range(0, n_cols, CHUNK):
        c = start + tl.arange(0, CHUNK)
        v = tl.load(x_row + c, mask=c < n_cols, other=0.0).to(tl.float32)
        s1 += v
        s2 += v * v
    mu = tl.sum(s1, axis=0) / n_cols
    inv = 1.0 / tl.sqrt(tl.sum(s2, axis=0) / n_cols - mu * mu + eps)
    for start in range(0, n_cols, CHUNK):
        c = start + tl.arange(0, CHUNK)
        ok = c < n_cols
        v = tl.load(x_row + c, mask=ok, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + c, mask=ok, other=0.0).to(tl.float32)
        h = tl.load(b_ptr + c, mask=ok, other=0.0).to(tl.float32)
        tl.store(y_row + c, ((v - mu) * inv * g + h).to(y_ptr.dtype.element_ty), mask=ok)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # output tiles visited in column-major groups of GROUP tile-rows (L2 reuse)
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows_here = min(tiles_m - first_m, GROUP)
    tm = first_m + (pid % per_group) % rows_here
    tn = (pid % per_group) // rows_here
    rm = (tm * BM + tl.arange(0, BM)) % M
    rn = (tn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak, mask=(k0 + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn, mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    cm = tm * BM + tl.arange(0, BM)
    cn = tn * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


SOFTMAX_CONFIGS = [triton.Config({{"ROWS": r}}, num_warps=w) for r in (1, 2, 4, 8) for w in (4, 8, 16, 32)]
LAYERNORM_CONFIGS = [triton.Config({{"CHUNK": c}}, num_warps=w) for c in (512, 1024, 2048, 4096) for w in (1, 2, 4, 8)]
MATMUL_CONFIGS = [triton.Config({{"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}}, num_warps=w, num_stages=3)
                  for bm, bn in ((64, 64), (64, 128), (128, 64), (128, 128)) for bk in (32, 64) for w in (4, 8)]

softmax_tuned = triton.autotune(SOFTMAX_CONFIGS, key=["n_rows", "n_cols"])(softmax_rows)
layer_norm_tuned = triton.autotune(LAYERNORM_CONFIGS, key=["n_cols"])(layer_norm)
matmul_tuned = triton.autotune(MATMUL_CONFIGS, key=["M", "N", "K"])(matmul)
'''

SIZES = {"softmax": (16384, 2048), "layernorm": (8192, 8192), "matmul": (4096, 4096, 4096)}


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def prepare(case: str, mod, torch):
    """(first_call, launch_chosen, check): the tuned launch, a launch of the
    chosen config straight through the @jit kernel, and a result check."""
    if case == "softmax":
        m, n = SIZES[case]
        x = torch.randn(m, n, device="cuda")
        y = torch.empty_like(x)
        block = 1 << (n - 1).bit_length()
        args = (y, x, m, n, x.stride(0))
        grid = lambda meta: (cdiv(m, meta["ROWS"]),)  # noqa: E731
        return (lambda: mod.softmax_tuned[grid](*args, BLOCK_N=block),
                lambda cfg: mod.softmax_rows[grid({**cfg.kwargs})](*args, BLOCK_N=block, **cfg.all_kwargs()),
                lambda: (y - torch.softmax(x, dim=1)).abs().max().item() < 1e-5, mod.softmax_tuned)
    if case == "layernorm":
        m, n = SIZES[case]
        x = torch.randn(m, n, device="cuda", dtype=torch.float16)
        w = torch.rand(n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        args = (x, y, w, b, n, x.stride(0), 1e-5)
        ref = lambda: torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)  # noqa: E731
        return (lambda: mod.layer_norm_tuned[(m,)](*args),
                lambda cfg: mod.layer_norm[(m,)](*args, **cfg.all_kwargs()),
                lambda: (y.float() - ref()).abs().max().item() < 2e-2, mod.layer_norm_tuned)
    m, n, k = SIZES[case]
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    bm = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    args = (a, bm, c, m, n, k, a.stride(0), a.stride(1), bm.stride(0), bm.stride(1), c.stride(0), c.stride(1))
    grid = lambda meta: (cdiv(m, meta["BM"]) * cdiv(n, meta["BN"]),)  # noqa: E731

    def check() -> bool:
        ref = a.float() @ bm.float()
        return (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()
    return (lambda: mod.matmul_tuned[grid](*args),
            lambda cfg: mod.matmul[grid(cfg.kwargs)](*args, **cfg.all_kwargs()), check, mod.matmul_tuned)


def describe(cfg) -> str:
    """A config the same way for both libraries (Triton 3.6's Config has no
    readable repr): its meta-parameters and launch options."""
    try:
        return ", ".join(f"{k}: {v}" for k, v in cfg.all_kwargs().items())
    except AttributeError:
        return repr(cfg)


def worker(lib: str, kernels_dir: str, cases: list[str]) -> None:
    """One library, cold cache: prints one JSON line per case."""
    import time
    sys.path.insert(0, kernels_dir)
    import torch
    sys.path.insert(0, str(Path(__file__).parent))
    from bench import kernel_time_ms
    mod = __import__(f"tune_kernels_{lib}")
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    for case in cases:
        row = {"case": case, "lib": lib}
        try:
            first, launch_chosen, check, tuner = prepare(case, mod, torch)
            torch.cuda.synchronize()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                first()
                torch.cuda.synchronize()
                row["wall_s"] = time.perf_counter() - t0
            best = tuner.best_config
            timings = getattr(tuner, "configs_timings", None) or {}
            row["config"] = describe(best)
            row["skipped"] = [describe(c) for c, t in timings.items() if t and float(list(t)[0]) == float("inf")]
            row["notes"] = [str(w.message)[:200] for w in caught if issubclass(w.category, RuntimeWarning)]
            row["correct"] = bool(check())
            row["kernel_ms"] = kernel_time_ms(lambda: launch_chosen(best), torch)
        except Exception as e:  # noqa: BLE001  reported in the table
            row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:160] if str(e).strip() else ''}"
        print(json.dumps(row), flush=True)


def run_worker(lib: str, kernels_dir: Path, cases: list[str]) -> list[dict]:
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k not in ("TRITIUM_AS_TRITON", "TRITON_INTERPRET")}
        env.update(TRITIUM_CACHE_DIR=cache, TRITON_CACHE_DIR=cache, TRITIUM_AUTOTUNE_PROGRESS="0")
        r = subprocess.run([sys.executable, __file__, "--worker", lib, "--kernels-dir", str(kernels_dir),
                            "--only", ",".join(cases)], env=env, capture_output=True, text=True, timeout=900)
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
    if r.returncode != 0 or len(rows) < len(cases):
        tail = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
        done = {row["case"] for row in rows}
        rows += [{"case": c, "lib": lib, "error": f"worker failed: {tail[:160]}"} for c in cases if c not in done]
    return rows


def median_row(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return rows[0]
    ok.sort(key=lambda r: r["wall_s"])
    return ok[len(ok) // 2]


def table(results: dict) -> str:
    out = [f"{'case':<10} {'lib':<8} {'wall s':>8} {'kernel ms':>10} {'ok':>3} {'skipped':>7}  chosen config"]
    for case, by_lib in results.items():
        for lib in LIBS:
            r = by_lib[lib]
            if "error" in r:
                out.append(f"{case:<10} {lib:<8} {'-':>8} {'-':>10} {'-':>3} {'-':>7}  error: {r['error']}")
                continue
            out.append(f"{case:<10} {lib:<8} {r['wall_s']:>8.2f} {r['kernel_ms']:>10.4f} "
                       f"{'yes' if r['correct'] else 'NO':>3} {len(r['skipped']):>7}  {r['config']}")
        a, b = by_lib["tritium"], by_lib["triton"]
        if "error" not in a and "error" not in b:
            wall, kern = a["wall_s"] / b["wall_s"], a["kernel_ms"] / b["kernel_ms"]
            out.append(f"{'':<10} {'ratio':<8} {wall:>8.3f} {kern:>10.3f}      "
                       f"wall {'meets' if wall <= 0.25 else 'MISSES'} <= 0.25; "
                       f"kernel {'meets' if kern <= 1.02 else 'MISSES'} <= 1.02")
    notes = [f"  {case}/{lib}: {n}" for case, by_lib in results.items() for lib in LIBS
             for n in by_lib[lib].get("notes", [])]
    if notes:
        out += ["notes:"] + notes
    return "\n".join(out)


def compile_only(cases: list[str]) -> int:
    """Without a GPU: every config of every case through tritium's batch
    compile (Autotuner.warmup); prints failures, returns their count."""
    import time
    import tritium as triton
    import tritium.language as tl
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "tune_kernels_tritium.py").write_text(KERNELS.format(lib="tritium"))
        sys.path.insert(0, d)
        mod = __import__("tune_kernels_tritium")
        f32, f16 = triton.MockTensor(tl.float32), triton.MockTensor(tl.float16)
        calls = {"softmax": (mod.softmax_tuned, (f32, f32, *SIZES["softmax"], SIZES["softmax"][1]),
                             {"BLOCK_N": SIZES["softmax"][1]}),
                 "layernorm": (mod.layer_norm_tuned, (f16, f16, f16, f16, 8192, 8192, 1e-5), {}),
                 "matmul": (mod.matmul_tuned, (f16, f16, f16, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1), {})}
        failures = 0
        for case in cases:
            tuner, args, kw = calls[case]
            t = time.perf_counter()
            try:
                tuner.warmup(*args, **kw)
                print(f"{case}: {len(tuner.configs)} configs compiled in {time.perf_counter() - t:.2f} s")
            except Exception as e:  # noqa: BLE001
                failures += 1
                print(f"{case}: FAILED {type(e).__name__}: {e}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--worker", choices=LIBS)
    ap.add_argument("--kernels-dir")
    ap.add_argument("--compile-only", action="store_true")
    args = ap.parse_args()
    cases = [c for c in args.only.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        ap.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    if args.worker:
        worker(args.worker, args.kernels_dir, cases)
        return 0
    if args.compile_only:
        return 1 if compile_only(cases) else 0
    with tempfile.TemporaryDirectory() as d:
        for lib in LIBS:
            (Path(d) / f"tune_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))
        rounds: dict = {c: {lib: [] for lib in LIBS} for c in cases}
        for i in range(args.rounds):
            for lib in (LIBS if i % 2 == 0 else LIBS[::-1]):
                for row in run_worker(lib, Path(d), cases):
                    rounds[row["case"]][lib].append(row)
                    # as it comes, so a run cut short still shows what it measured
                    print(f"round {i + 1}: {json.dumps(row)}", file=sys.stderr, flush=True)
    results = {c: {lib: median_row(rows) for lib, rows in by_lib.items()} for c, by_lib in rounds.items()}
    print(f"autotuning, 16 configs per case, median of {args.rounds} rounds (cold cache each round)")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
