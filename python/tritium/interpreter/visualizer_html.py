"""The visualizer's HTML output: one self-contained page (no network, no
external files) drawing each tensor argument on a canvas, with a slider over
the programs: one program's reads, writes and masked-off lanes, or, at the
left end, how many programs touched each element; and each `dot`'s A, B and
C tiles of the chosen program. `#program=K` in the URL selects a program."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .visualizer_png import COLORS


def _runs(indices: np.ndarray) -> list[int]:
    """Sorted unique indices as [start, length, start, length, ...]."""
    if indices.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [indices.size]])
    return np.stack([indices[starts], ends - starts], axis=1).reshape(-1).tolist()


def page_data(launch: Any) -> dict:
    names = list(launch.tensors)
    programs = range(len(launch.programs))
    tensors = [{"name": n, "shape": list(t.arg.shape), "rows": t.rows, "cols": t.cols,
                "programs": [{k: _runs(t.elements(p, k)) for k in ("read", "write", "masked")} for p in programs]}
               for n, t in launch.tensors.items()]
    dots = []
    for dot in launch.dots.values():
        parts = [{"which": which.upper(), "tensor": names.index(dot.operands[which]),
                  "programs": [_runs(dot.elements(p, which)) for p in programs]}
                 for which in ("a", "b", "c") if which in dot.operands]
        dots.append({"title": f"dot at {Path(dot.loc.file).name}:{dot.loc.line}", "parts": parts})
    return {"kernel": launch.launch.kernel, "grid": list(launch.launch.grid),
            "programs": [list(p) for p in launch.programs], "colors": COLORS, "tensors": tensors, "dots": dots}


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%(title)s</title>
<style>
body { margin: 0; padding: 8px; font: 13px sans-serif; background: #ffffff; color: #222222; }
h1 { font-size: 15px; margin: 0 0 6px 0; }
.bar { margin: 0 0 10px 0; }
.panel { display: inline-block; vertical-align: top; margin: 0 16px 14px 0; }
.panel div { margin-bottom: 3px; }
canvas { display: block; image-rendering: pixelated; }
.key span { display: inline-block; width: 10px; height: 10px; margin: 0 3px 0 10px; }
</style></head>
<body>
<h1 id="title"></h1>
<div class="bar"><input id="program" type="range" step="1"> <span id="label"></span></div>
<div class="key" id="key"></div>
<div id="tensors"></div>
<div id="dots"></div>
<script id="data" type="application/json">%(data)s</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const C = D.colors;
function cellSize(t) { return Math.max(1, Math.min(12, Math.floor(480 / t.cols), Math.floor(480 / t.rows))); }
function each(runs, fn) {
  for (let i = 0; i < runs.length; i += 2) for (let k = 0; k < runs[i + 1]; k++) fn(runs[i] + k);
}
function panel(parent, caption, t) {
  const div = document.createElement("div"); div.className = "panel";
  const cap = document.createElement("div"); cap.textContent = caption; div.appendChild(cap);
  const cv = document.createElement("canvas"); const s = cellSize(t);
  cv.width = t.cols * s; cv.height = t.rows * s; div.appendChild(cv); parent.appendChild(div);
  return cv;
}
function paint(cv, t, color) {
  const ctx = cv.getContext("2d"); const s = cellSize(t);
  for (let i = 0; i < t.rows * t.cols; i++) {
    ctx.fillStyle = color(i); ctx.fillRect((i %% t.cols) * s, Math.floor(i / t.cols) * s, s, s);
  }
}
function heat(v) {  // light to dark blue
  const a = [198, 219, 239], b = [8, 48, 107];
  const c = a.map((x, k) => Math.round(x + (b[k] - x) * v));
  return "rgb(" + c.join(",") + ")";
}
document.getElementById("title").textContent =
  D.kernel + ": grid (" + D.grid.join(", ") + "), " + D.programs.length + " programs";
const slider = document.getElementById("program");
slider.min = -1; slider.max = D.programs.length - 1;
document.getElementById("key").innerHTML = ["read", "write", "both", "masked", "tile"].map(
  k => '<span style="background:' + C[k] + '"></span>' + (k === "masked" ? "masked-off lane" : k)).join("");
const tensorCanvases = D.tensors.map(t =>
  panel(document.getElementById("tensors"), t.name + " [" + t.shape.join(" x ") + "]", t));
const dotCanvases = D.dots.map(d => d.parts.map(part => {
  const t = D.tensors[part.tensor];
  return panel(document.getElementById("dots"), d.title + ": " + part.which + " = " + t.name, t);
}));
function draw(p) {
  document.getElementById("label").textContent = p < 0 ? "all programs (programs touching each element)"
      : "program (" + D.programs[p].join(", ") + ")";
  D.tensors.forEach((t, ti) => {
    const n = t.rows * t.cols; const mark = new Uint8Array(n); const count = new Uint32Array(n);
    const progs = p < 0 ? t.programs : [t.programs[p]];
    progs.forEach(q => {
      const seen = new Uint8Array(n);
      each(q.read, i => { mark[i] |= 1; seen[i] = 1; });
      each(q.write, i => { mark[i] |= 2; seen[i] = 1; });
      each(q.masked, i => { if (!mark[i]) mark[i] |= 4; });
      seen.forEach((v, i) => { count[i] += v; });
    });
    const top = Math.max(1, ...count);
    paint(tensorCanvases[ti], t, i => {
      if (p < 0) return count[i] ? heat(count[i] / top) : (mark[i] & 4 ? C.masked : C.untouched);
      const m = mark[i];
      return m & 3 ? (m & 1 && m & 2 ? C.both : (m & 1 ? C.read : C.write)) : (m & 4 ? C.masked : C.untouched);
    });
  });
  D.dots.forEach((d, di) => d.parts.forEach((part, pi) => {
    const t = D.tensors[part.tensor]; const on = new Uint8Array(t.rows * t.cols);
    (p < 0 ? part.programs : [part.programs[p]]).forEach(runs => each(runs, i => { on[i] = 1; }));
    paint(dotCanvases[di][pi], t, i => on[i] ? C.tile : C.untouched);
  }));
}
const m = /program=(-?\\d+)/.exec(location.hash);
slider.value = m ? Math.min(Math.max(-1, +m[1]), D.programs.length - 1) : -1;
slider.oninput = () => { draw(+slider.value); history.replaceState(null, "", "#program=" + slider.value); };
draw(+slider.value);
</script>
</body></html>
"""


def write_html(launch: Any, path: Path) -> Path:
    data = json.dumps(page_data(launch), separators=(",", ":")).replace("</", "<\\/")
    title = f"{launch.launch.kernel} (tritium visualizer)"
    path.write_text(_PAGE % {"title": title.replace("<", "&lt;"), "data": data}, encoding="utf-8")
    return path
