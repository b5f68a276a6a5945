"""The visualizer's PNG output (matplotlib, imported only here): one figure
with, per tensor argument, heat maps of how many programs read, wrote and
covered with masked-off lanes each element, and, per `dot`, which program
touched each element of A, B and C."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: colors of the program view, shared by the PNG and the HTML page
COLORS = {"untouched": "#ece8e1", "read": "#2ca02c", "write": "#d62728", "both": "#9467bd",
          "masked": "#9ecae1", "tile": "#ff7f0e"}

UNTOUCHED = tuple(int(COLORS["untouched"][i:i + 2], 16) for i in (1, 3, 5))


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError("the visualizer's PNG output needs matplotlib (pip install matplotlib; "
                          "scripts/setup.sh installs it)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def heat_rgb(counts: np.ndarray, cmap: str = "viridis") -> np.ndarray:
    """(rows, cols, 3) uint8: untouched elements light grey, the others the
    colormap's color for count / max count."""
    plt = _pyplot()
    rgb = np.empty((*counts.shape, 3), np.uint8)
    rgb[...] = UNTOUCHED
    top = counts.max()
    if top > 0:
        colors = (np.asarray(plt.get_cmap(cmap)(counts / top))[..., :3] * 255).round().astype(np.uint8)
        rgb[counts > 0] = colors[counts > 0]
    return rgb


def owner_rgb(owner: np.ndarray) -> np.ndarray:
    """(rows, cols, 3) uint8: each element the color of the (last) program
    that touched it (tab20, cycling), untouched light grey."""
    plt = _pyplot()
    palette = (np.asarray(plt.get_cmap("tab20").colors) * 255).round().astype(np.uint8)
    rgb = np.empty((*owner.shape, 3), np.uint8)
    rgb[...] = UNTOUCHED
    touched = owner >= 0
    rgb[touched] = palette[owner[touched] % len(palette)]
    return rgb


def heatmap_png(counts: np.ndarray, path: Path, scale: int) -> Path:
    plt = _pyplot()
    img = np.repeat(np.repeat(heat_rgb(counts), scale, axis=0), scale, axis=1)
    plt.imsave(path, img)
    return path


def _owner(access: Any, which: str, tensor: Any) -> np.ndarray:
    owner = np.full(tensor.rows * tensor.cols, -1, np.int64)
    for row in sorted(access.per_program):
        owner[access.elements(row, which)] = row
    return owner.reshape(tensor.rows, tensor.cols)


def draw_png(launch: Any, path: Path) -> Path:
    plt = _pyplot()
    panels = []
    for name, t in launch.tensors.items():
        for kind in ("read", "write", "masked"):
            counts = t.heat(kind)
            what = "masked-off lanes" if kind == "masked" else kind
            panels.append((f"{name} {list(t.arg.shape)}: {what}, programs per element (max {counts.max()})",
                           heat_rgb(counts)))
    for dot in launch.dots.values():
        for which in ("a", "b", "c"):
            name = dot.operands.get(which)
            if name is not None:
                panels.append((f"dot at line {dot.loc.line}: {which.upper()} = {name}, color = program",
                               owner_rgb(_owner(dot, which, launch.tensors[name]))))
    cols = 3
    rows = max(1, -(-len(panels) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.reshape(-1):
        ax.axis("off")
    for ax, (title, img) in zip(axes.reshape(-1), panels):
        ax.imshow(img, interpolation="nearest", aspect="auto")
        ax.set_title(title, fontsize=8)
    fig.suptitle(f"{launch.launch.kernel}: grid {launch.launch.grid}, {len(launch.programs)} programs", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
