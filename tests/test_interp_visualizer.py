"""The visualizer client (issue #15 item 4): per tensor argument, which
elements each program read and wrote, masked-off lanes apart, and a dot's A,
B and C tiles per program; checked as data, as PNG pixels, and as the HTML
page rendered by headless Chromium (scripts/setup.sh installs it)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import Visualizer, run_grid

import matplotlib  # scripts/setup.sh installs it
from matplotlib import image as mpimg

interp = triton.jit(interpret=True)


@interp
def _stencil(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # each program reads its block and one element either side: the edges are read twice
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    left = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs < n), other=0.0)
    mid = tl.load(x_ptr + offs, mask=offs < n)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(y_ptr + offs, left + mid + right, mask=offs < n)


def _stencil_run(n=28, block=8, width=64):
    viz = Visualizer(width=width)
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    run_grid(_stencil, (triton.cdiv(n, block),), (x, y, n), kwargs={"BLOCK": block}, clients=[viz])
    return viz, x, y


def test_heat_maps_count_the_programs_touching_each_element():
    viz, x, y = _stencil_run()
    reads = viz.heatmap("x_ptr", "read")[0]
    # 28 elements in one row of 28; block edges 7|8, 15|16, 23|24 are read by two programs
    expected = np.ones(28, np.int64)
    expected[[7, 8, 15, 16, 23, 24]] = 2
    assert reads.tolist() == expected.tolist()
    assert viz.heatmap("y_ptr", "write")[0].tolist() == [1] * 28
    assert viz.heatmap("y_ptr", "read").sum() == 0
    # the last program's lanes 28..31 are masked off: they point past the end, drawn apart
    access = viz.launch().tensors["x_ptr"]
    assert access.rows * access.cols == 28
    wide = Visualizer(width=8)
    run_grid(_stencil, (4,), (x, np.zeros_like(y), 28), kwargs={"BLOCK": 8}, clients=[wide])
    masked = wide.heatmap("y_ptr", "masked")
    assert masked.shape == (4, 8) and masked[3, 4:].tolist() == [1, 1, 1, 1] and masked.sum() == 4
    assert np.array_equal(y[1:-1], x[:-2] + x[1:-1] + x[2:])


def _rgb(color: str) -> tuple:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def test_heat_map_png_pixels(tmp_path):
    viz, _, _ = _stencil_run()
    path = viz.save_heatmap_png(tmp_path / "reads.png", "x_ptr", "read", scale=4)
    img = (mpimg.imread(path)[..., :3] * 255).round().astype(int)
    assert img.shape == (4, 28 * 4, 3)
    once = tuple((np.asarray(matplotlib.colormaps["viridis"](0.5))[:3] * 255).round().astype(int))
    twice = tuple((np.asarray(matplotlib.colormaps["viridis"](1.0))[:3] * 255).round().astype(int))
    cell = lambda i: tuple(img[2, i * 4 + 2])  # noqa: E731
    assert cell(0) == once and cell(7) == twice and cell(8) == twice and cell(9) == once
    untouched = viz.save_heatmap_png(tmp_path / "writes_x.png", "x_ptr", "write", scale=2)
    assert (mpimg.imread(untouched)[..., :3] * 255).round().astype(int).reshape(-1, 3).tolist() == \
        [[236, 232, 225]] * (2 * 28 * 2)


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, N: tl.constexpr, B: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * B + tl.arange(0, B)
    rn = pn * B + tl.arange(0, B)
    rk = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * N + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, tl.zeros((B, B), tl.float32))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c.to(tl.float16))


def _mm_run():
    n, b = 32, 16
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    bm = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float16)
    viz = Visualizer()
    run_grid(_mm, (2, 2), (a, bm, c), kwargs={"N": n, "B": b}, clients=[viz])
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ bm.astype(np.float32), rtol=1e-2,
                               atol=1e-1)
    return viz


def test_dot_tiles_of_a_b_and_c_per_program():
    viz = _mm_run()
    launch = viz.launch()
    (dot,) = launch.dots.values()
    assert dot.operands == {"a": "a_ptr", "b": "b_ptr", "c": "c_ptr"}
    idx = np.arange(32 * 32).reshape(32, 32)
    for row, (pm, pn, _) in enumerate(launch.programs):
        assert dot.elements(row, "a").tolist() == idx[pm * 16:(pm + 1) * 16, :].reshape(-1).tolist()
        assert dot.elements(row, "b").tolist() == sorted(idx[:, pn * 16:(pn + 1) * 16].reshape(-1).tolist())
        assert dot.elements(row, "c").tolist() == sorted(idx[pm * 16:(pm + 1) * 16, pn * 16:(pn + 1) * 16]
                                                         .reshape(-1).tolist())


def test_composed_png(tmp_path):
    viz = _mm_run()
    path = viz.save_png(tmp_path / "mm.png")
    img = mpimg.imread(path)
    assert img.shape[0] > 300 and img.shape[1] > 600
    # the dot row shows every program's color in C (tab20's first four)
    pixels = {tuple(p) for p in (img[..., :3] * 255).round().astype(int).reshape(-1, 3).tolist()}
    for color in np.asarray(matplotlib.colormaps["tab20"].colors[:4]):
        assert tuple((color * 255).round().astype(int)) in pixels


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is missing: scripts/setup.sh installs it")
    pytest.skip("chromium not installed (scripts/setup.sh installs it)")


def _screenshot(html, tmp_path, fragment: str, size: str = "900,700"):
    shot = tmp_path / f"shot{fragment.replace('#', '_').replace('=', '_')}.png"
    subprocess.run([_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", f"--window-size={size}", "--virtual-time-budget=3000",
                    f"--screenshot={shot}", html.resolve().as_uri() + fragment],
                   check=True, capture_output=True, timeout=120)
    return (mpimg.imread(shot)[..., :3] * 255).round().astype(int)


SWATCH = 10 * 10   # the legend's sample of each program-view color


def _count(img, color: str) -> int:
    return int((img == np.array(_rgb(color))).all(-1).sum())


def test_html_page_is_self_contained_and_renders_in_chromium(tmp_path):
    viz, _, _ = _stencil_run()
    html = viz.save_html(tmp_path / "stencil.html")
    text = html.read_text()
    assert not re.search(r"(src|href)\s*=|https?://|@import", text), "the page must load nothing"
    from tritium.interpreter.visualizer import COLORS
    # 28 elements in one row: 12 px cells (480 / 28 = 17, capped at 12)
    cell = 12
    one = _screenshot(html, tmp_path, "#program=1")
    # program 1 reads x[7..16] (10 cells) and writes y[8..15] (8 cells)
    assert _count(one, COLORS["read"]) == 10 * cell * cell + SWATCH
    assert _count(one, COLORS["write"]) == 8 * cell * cell + SWATCH
    assert _count(one, COLORS["untouched"]) == (18 + 20) * cell * cell
    # the last program: 4 lanes masked off past the end, drawn on no cell (28 cells, no padding)
    last = _screenshot(html, tmp_path, "#program=3")
    assert _count(last, COLORS["read"]) == 5 * cell * cell + SWATCH
    assert _count(last, COLORS["write"]) == 4 * cell * cell + SWATCH
    # all programs: a heat map, no program colors
    everyone = _screenshot(html, tmp_path, "")
    assert _count(everyone, COLORS["read"]) == SWATCH and _count(everyone, COLORS["untouched"]) == 0


def test_html_dot_tiles_render(tmp_path):
    viz = _mm_run()
    html = viz.save_html(tmp_path / "mm.html")
    from tritium.interpreter.visualizer import COLORS
    img = _screenshot(html, tmp_path, "#program=2", size="1600,2000")
    # 32 x 32 tensors at 12 px cells; program 2's tiles: 16x32 of A, 32x16 of B, 16x16 of C
    assert _count(img, COLORS["tile"]) == (16 * 32 + 32 * 16 + 16 * 16) * 12 * 12 + SWATCH
