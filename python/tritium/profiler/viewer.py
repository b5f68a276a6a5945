"""`triton.profiler.viewer`: reads a profile written as Proton's hatchet JSON
(data.py) and prints its tree with chosen metric columns, in plain Python
(Proton's viewer needs llnl-hatchet and pandas; this one needs neither).

    tree, metrics = parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    print_tree(tree, metrics)

    python -m tritium.profiler.viewer -m tflop16/s,time/ms matmul.hatchet

Every column is inclusive: a frame's value covers its subtree (a scope's
time is the sum of its kernels'). Metrics are matched case-insensitively,
with or without their unit (`time` is `time (ns)`); derived ones:

- `time/s`, `time/ms`, `time/us`, `time/ns`; `avg_time/<unit>` (time / count);
- `flop/s`, `gflop/s`, `tflop/s` from `flops`, and `flop<W>/s`, `gflop<W>/s`,
  `tflop<W>/s` from `flops<W>` (W = 8, 16, 32, 64), divided by the time;
- `byte/s`, `gbyte/s`, `tbyte/s` from `bytes`;
- `<metric>/%`: the frame's share of the root's value.

A rate over a frame with no time is inf (nan when its numerator is 0 too),
as in Proton's viewer. `parse` returns tritium's own tree (`Node`: `name`,
`metrics` (the frame's own numbers), `values` (the columns), `children`),
not a hatchet GraphFrame. Proton's `util` column (needs each GPU's peak
rates) is not derived."""
from __future__ import annotations

import argparse
import json
import math
import re
from typing import Any

FLOPS_WIDTHS = (8, 16, 32, 64)
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
# frames Proton records while computing launch metadata; never shown
METADATA_FRAME = "__proton_launch_metadata"

# derived rate -> (the metric it divides by time, the unit's size)
RATES: dict[str, tuple[str, float]] = {}
for _prefix, _size in (("", 1.0), ("g", 1e9), ("t", 1e12)):
    RATES[f"{_prefix}byte/s"] = ("bytes", _size)
    RATES[f"{_prefix}flop/s"] = ("flops", _size)
    for _w in FLOPS_WIDTHS:
        RATES[f"{_prefix}flop{_w}/s"] = (f"flops{_w}", _size)


class Node:
    """A frame of the profile: its own numeric metrics, its string labels
    (device_id, device_type), and after parse the printed columns."""
    __slots__ = ("name", "metrics", "labels", "values", "children")

    def __init__(self, name: str, metrics: dict[str, float], labels: dict[str, str], children: list["Node"]):
        self.name = name
        self.metrics = metrics
        self.labels = labels
        self.values: dict[str, float] = {}
        self.children = children

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {len(self.children)} children)"


def _node(obj: Any, where: str) -> Node | None:
    """A Node from one JSON frame; None for frames Proton's viewer drops
    (launch-metadata frames, and frames left with no metrics and no children)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("frame"), dict):
        raise ValueError(f"{where}: not a hatchet profile (a frame needs 'frame', 'metrics', 'children')")
    name = str(obj["frame"].get("name", ""))
    if name == METADATA_FRAME:
        return None
    raw = obj.get("metrics") or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: not a hatchet profile (frame '{name}' has metrics {type(raw).__name__}, "
                         "not an object)")
    metrics = {k: float(v) for k, v in raw.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    labels = {k: str(v) for k, v in raw.items() if isinstance(v, str)}
    given = obj.get("children") or []
    children = [c for c in (_node(c, where) for c in given) if c is not None]
    if given and not children:
        return None
    if not given and not raw:
        return None
    return Node(name, metrics, labels, children)


def read(filename: str) -> tuple[Node, dict]:
    """The profile's root frame and its device information."""
    with open(filename) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{filename}: not a hatchet profile (not JSON: {e})") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"{filename}: not a hatchet profile (expected a JSON list: root frame, devices)")
    root = _node(data[0], filename)
    if root is None:
        root = Node(str(data[0]["frame"].get("name", "ROOT")), {}, {}, [])
    devices = data[1] if len(data) > 1 and isinstance(data[1], dict) else {}
    return root, devices


def metric_names(root: Node) -> list[str]:
    """The profile's numeric metrics, in the order first seen."""
    seen: dict[str, None] = {}
    for n in root.walk():
        for k in n.metrics:
            seen.setdefault(k, None)
    return list(seen)


def _match(metric: str, raw: list[str]) -> str:
    """The recorded metric `metric` names: its full name or its name
    without the unit, any case."""
    want = metric.lower()
    for r in raw:
        if want in (r.lower(), r.split("(")[0].strip().lower()):
            return r
    raise RuntimeError(f"Metric {metric} is not found. Use the --list flag to list available metrics")


def _div(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def _inclusive(root: Node, raw: list[str]) -> None:
    def visit(n: Node) -> dict[str, float]:
        total = {m: n.metrics.get(m, 0.0) for m in raw}
        for c in n.children:
            for m, v in visit(c).items():
                total[m] += v
        n.values = {f"{m} (inc)": v for m, v in total.items()}
        return total
    visit(root)


def derive(root: Node, metrics: list[str]) -> list[str]:
    """Computes the columns for `metrics` on every frame; returns their names
    (`time/ms (inc)`, `tflop16/s (inc)`, `bytes (inc)`, ...)."""
    raw = metric_names(root)
    _inclusive(root, raw)
    nodes = list(root.walk())
    time_col = None

    def seconds(n: Node) -> float:
        nonlocal time_col
        if time_col is None:
            name = _match("time", raw)
            unit = name.split("(")[1].split(")")[0].strip() if "(" in name else "s"
            if unit not in TIME_UNITS:
                raise ValueError(f"metric '{name}': unknown time unit '{unit}'")
            time_col = (f"{name} (inc)", TIME_UNITS[unit])
        col, factor = time_col
        return n.values[col] * factor

    columns = []
    for metric in metrics:
        m = metric.strip()
        key = m.lower()
        if key == "util":
            raise ValueError("metric 'util' needs each GPU's peak rates; tritium's viewer does not derive it")
        if key in RATES:
            base, size = RATES[key]
            num = f"{_match(base, raw)} (inc)"
            col = f"{m} (inc)"
            for n in nodes:
                n.values[col] = _div(n.values[num], seconds(n)) / size
        elif key.startswith(("time/", "avg_time/")) and key.split("/", 1)[1] in TIME_UNITS:
            unit = TIME_UNITS[key.split("/", 1)[1]]
            count = f"{_match('count', raw)} (inc)" if key.startswith("avg_") else None
            col = f"{m} (inc)"
            for n in nodes:
                t = seconds(n)
                n.values[col] = (_div(t, n.values[count]) if count else t) / unit
        elif key.endswith("/%"):
            source = f"{_match(m[:-2], raw)} (inc)"
            col = f"{m} (inc)"
            total = root.values[source]
            for n in nodes:
                n.values[col] = _div(n.values[source], total) * 100.0
        elif "/" in key:
            raise ValueError(f"metric '{m}': unsupported unit '{m.split('/', 1)[1]}'")
        else:
            col = f"{_match(m, raw)} (inc)"
        columns.append(col)
    return columns


def _filtered(node: Node, keep) -> Node | None:
    """The tree without the subtrees of frames `keep` refuses (never the root's)."""
    node.children = [c for c in (_filtered(c, keep) for c in node.children if keep(c)) if c is not None]
    return node


def _including(node: Node, pattern: re.Pattern) -> Node | None:
    """Only the paths through a frame whose name matches (with that frame's subtree)."""
    if pattern.fullmatch(node.name):
        return node
    node.children = [c for c in (_including(c, pattern) for c in node.children) if c is not None]
    return node if node.children else None


def parse(metrics: list[str] | str, filename: str, include: str | None = None, exclude: str | None = None,
          threshold: float | None = None) -> tuple[Node, list[str]]:
    """Reads `filename` and computes the columns `metrics` name; returns
    (the root frame, the column names) for print_tree. `include` keeps only
    paths through frames whose name matches that regular expression,
    `exclude` drops matching frames with their subtrees, `threshold` drops
    frames whose first column is below it; the columns are computed on what
    remains."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise ValueError("parse: name at least one metric (e.g. 'time/ms')")
    root, _devices = read(filename)
    if include and exclude:
        raise ValueError("parse: give include or exclude, not both")
    if include:
        pattern = re.compile(include)
        root.children = [c for c in (_including(c, pattern) for c in root.children) if c is not None]
    if exclude:
        pattern = re.compile(exclude)
        root = _filtered(root, lambda n: not pattern.fullmatch(n.name))
    columns = derive(root, metrics)
    if threshold is not None:
        first = columns[0]
        root = _filtered(root, lambda n: not (n.values.get(first, math.nan) < threshold))
        columns = derive(root, metrics)
    return root, columns


def _fmt(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.3f}"


def tree_lines(root: Node, metrics: list[str], depth: int = 100) -> list[str]:
    """The tree as text: each frame's columns, then its name."""
    lines = []

    def visit(n: Node, prefix: str, branch: str, child_prefix: str, level: int) -> None:
        lines.append(f"{prefix}{branch}{' '.join(_fmt(n.values.get(m)) for m in metrics)} {n.name}")
        if level >= depth:
            return
        for i, c in enumerate(n.children):
            last = i == len(n.children) - 1
            visit(c, child_prefix, "└─ " if last else "├─ ", child_prefix + ("   " if last else "│  "), level + 1)

    visit(root, "", "", "", 0)
    return lines


def print_tree(tree: Node, metrics: list[str], depth: int = 100, format: str | None = None,
               print_sorted: bool = False) -> None:
    """Prints the tree parse returned, one frame a line; with `print_sorted`,
    then every frame but the root by its first column, largest first."""
    if format not in (None, "full"):
        raise ValueError(f"print_tree: format {format!r} shortens Python call-path frames, which tritium does "
                         "not record; use 'full'")
    print("\n".join(tree_lines(tree, metrics, depth)))
    if print_sorted:
        first = metrics[0]
        print("Sorted kernels by metric " + first)
        def order(n: Node) -> tuple[bool, float]:
            v = n.values.get(first, math.nan)
            return (math.isnan(v), 0.0 if math.isnan(v) else -v)
        frames = sorted((n for n in tree.walk() if n is not tree), key=order)
        for n in frames:
            name = n.name if len(n.name) <= 100 else n.name[:100] + "..."
            print(f"{name:105} {n.values.get(first, math.nan):.4}")
    if any(n.values.get("bytes (inc)", 0.0) < 0 for n in tree.walk()):
        print("Warning: Negative byte values detected, this is usually the result of a datatype overflow\n")


def show_metrics(filename: str) -> None:
    root, _ = read(filename)
    print("Available metrics:")
    for m in metric_names(root):
        print(f"- {m.split('(')[0].strip().lower()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Prints a profile written by triton.profiler (hatchet JSON).")
    ap.add_argument("-l", "--list", action="store_true", help="list the recorded metrics")
    ap.add_argument("-m", "--metrics", default="time/s", help="comma-separated metrics (default time/s)")
    ap.add_argument("-i", "--include", default=None, help="keep paths through frames matching this regex")
    ap.add_argument("-e", "--exclude", default=None, help="drop frames matching this regex, with their subtrees")
    ap.add_argument("-t", "--threshold", type=float, default=None, help="drop frames whose first metric is below")
    ap.add_argument("-d", "--depth", type=int, default=100, help="deepest level printed")
    ap.add_argument("--print_sorted", action="store_true", help="also list frames by their first metric")
    ap.add_argument("file")
    opts = ap.parse_args(argv)
    if opts.list:
        show_metrics(opts.file)
        return 0
    tree, metrics = parse(opts.metrics.split(","), opts.file, opts.include, opts.exclude, opts.threshold)
    print_tree(tree, metrics, opts.depth, print_sorted=opts.print_sorted)
    return 0


__all__ = ["Node", "derive", "main", "metric_names", "parse", "print_tree", "read", "show_metrics", "tree_lines"]

if __name__ == "__main__":
    raise SystemExit(main())
