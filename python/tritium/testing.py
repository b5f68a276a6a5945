"""`triton.testing`: `assert_close`; kernel timing (`do_bench`,
`do_bench_cudagraph`, from runtime/bench.py); and `perf_report` /
`Benchmark` / `Mark`, which run a benchmark function over a grid of
arguments and write the same table (pandas DataFrame, CSV, printout) and
line plots (matplotlib) as Triton's. NumPy, pandas and matplotlib are
imported only when used."""
from __future__ import annotations

import os
from typing import Any, Callable

from .runtime import driver
from .runtime.bench import do_bench, do_bench_cudagraph


def _to_numpy(x: Any) -> Any:
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) in ("torch.bfloat16",) or "float8" in str(getattr(x, "dtype", "")):
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def assert_close(x: Any, y: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Raises AssertionError unless |x - y| <= atol + rtol * |y| everywhere
    (NaNs in the same places). x and y are scalars, lists, NumPy arrays or
    torch tensors. Defaults follow Triton: atol 1e-2, rtol 0; either may be a
    function of x's dtype."""
    import numpy as np
    x_dtype = getattr(x, "dtype", None)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(x_dtype) if callable(atol) else atol
    rtol = rtol(x_dtype) if callable(rtol) else rtol
    a, b = _to_numpy(x), _to_numpy(y)
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    a = a.astype(np.float64) if a.dtype.kind in "fiu" else a
    b = b.astype(np.float64) if b.dtype.kind in "fiu" else b
    if a.size > 1 or b.size > 1:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True):
        raise AssertionError(f"{err_msg} {a} is not close to {b} (atol={atol}, rtol={rtol})")


class Benchmark:
    """One table/plot for `perf_report`: each value of `x_vals` (a scalar
    given to every name in `x_names`, or a tuple with one value per name) is
    a row; each value of `line_arg` in `line_vals` a column (and a line,
    labelled from `line_names`); `args` are passed to every call. `styles`
    are (color, linestyle) pairs per line."""

    def __init__(self, x_names: list[str], x_vals: list[Any], line_arg: str, line_vals: list[Any],
                 line_names: list[str], plot_name: str, args: dict[str, Any], xlabel: str = "", ylabel: str = "",
                 x_log: bool = False, y_log: bool = False, styles: list[tuple[str, str]] | None = None):
        self.x_names = x_names
        self.x_vals = x_vals
        self.x_log = x_log
        self.line_arg = line_arg
        self.line_vals = line_vals
        self.line_names = line_names
        self.y_log = y_log
        self.styles = styles
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.plot_name = plot_name
        self.args = args


class Mark:
    """A benchmark function bound to its Benchmark(s); `.run()` measures."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | list[Benchmark]):
        self.fn = fn
        self.benchmarks = benchmarks

    def _table(self, bench: Benchmark, **kwargs: Any) -> Any:
        """Every (row, line) measured: a DataFrame with the x columns, then each
        line's value, then its min and max (None when `fn` returns one number)."""
        import pandas as pd
        means = [f"{name} ({bench.ylabel})" for name in bench.line_names]
        mins = [f"{name}-min ({bench.ylabel})" for name in bench.line_names]
        maxs = [f"{name}-max ({bench.ylabel})" for name in bench.line_names]
        x_names = list(bench.x_names)
        df = pd.DataFrame(columns=x_names + means + mins + maxs)
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(x_names)
            if len(xs) != len(x_names):
                raise ValueError(f"Expected {len(x_names)} values, got {x}")
            row_mean, row_min, row_max = [], [], []
            for line in bench.line_vals:
                result = self.fn(**dict(zip(x_names, xs)), **{bench.line_arg: line}, **bench.args, **kwargs)
                try:
                    mean, lo, hi = result
                except TypeError:
                    mean, lo, hi = result, None, None
                row_mean.append(mean)
                row_min.append(lo)
                row_max.append(hi)
            df.loc[len(df)] = xs + row_mean + row_min + row_max
        return df, means, mins, maxs

    @staticmethod
    def _plot(bench: Benchmark, df: Any, means: list[str], mins: list[str], maxs: list[str], show: bool,
              save_path: str) -> None:
        import matplotlib.pyplot as plt
        plt.figure()
        ax = plt.subplot()
        first_x = bench.x_names[0]      # several x names: the first is the axis
        for i, (mean, lo, hi) in enumerate(zip(means, mins, maxs)):
            color = bench.styles[i][0] if bench.styles else None
            style = bench.styles[i][1] if bench.styles else None
            ax.plot(df[first_x], df[mean], label=mean, color=color, ls=style)
            if not df[lo].isnull().all() and not df[hi].isnull().all():
                ax.fill_between(df[first_x], df[lo].astype(float), df[hi].astype(float), alpha=0.15, color=color)
        ax.legend()
        ax.set_xlabel(bench.xlabel or first_x)
        ax.set_ylabel(bench.ylabel)
        ax.set_xscale("log" if bench.x_log else "linear")
        ax.set_yscale("log" if bench.y_log else "linear")
        if show:
            plt.show()
        if save_path:
            plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))

    def _run(self, bench: Benchmark, save_path: str, show_plots: bool, print_data: bool, diff_col: bool = False,
             save_precision: int = 6, **kwargs: Any) -> Any:
        df, means, mins, maxs = self._table(bench, **kwargs)
        if bench.plot_name:
            self._plot(bench, df, means, mins, maxs, show_plots, save_path)
        df = df[list(bench.x_names) + means]
        if diff_col and df.shape[1] == 2:
            first, second = df.columns.tolist()
            df["Diff"] = df[second] - df[first]
        if print_data:
            print(bench.plot_name + ":")
            print(df.to_string())
        if save_path:
            df.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"), float_format=f"%.{save_precision}f",
                      index=False)
        return df

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "", return_df: bool = False,
            **kwargs: Any) -> Any:
        """Measures every benchmark; with `save_path`, writes <plot_name>.csv,
        <plot_name>.png and a results.html showing the plots."""
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else list(self.benchmarks)
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        frames = []
        try:
            for bench in benchmarks:
                frames.append(self._run(bench, save_path, show_plots, print_data, **kwargs))
        finally:
            if save_path:
                with open(os.path.join(save_path, "results.html"), "w") as html:
                    html.write("<html><body>\n")
                    for bench in benchmarks[:len(frames)]:
                        html.write(f"<image src=\"{bench.plot_name}.png\"/>\n")
                    html.write("</body></html>\n")
        if return_df:
            return frames[0] if single else frames
        return None


def perf_report(benchmarks: Benchmark | list[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorator: `@perf_report(Benchmark(...))` turns a function that
    measures one configuration into a Mark; call `.run(...)` on it."""
    return lambda fn: Mark(fn, benchmarks)


def get_dram_gbps(device: int | None = None) -> float:
    """The device's DRAM bandwidth in GB/s, from its memory clock and bus width."""
    active = driver.active
    props = active.utils.get_device_properties(active.get_current_device() if device is None else device)
    return props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8


__all__ = ["Benchmark", "Mark", "assert_close", "do_bench", "do_bench_cudagraph", "get_dram_gbps", "perf_report"]
