"""Row softmax written in NKI's style, run by tritium's interpreter: 128 rows
per program (the partition dimension), the last block masked.

    .venv/bin/python examples/nki_softmax.py [out_dir]
"""
import sys
from pathlib import Path

import numpy as np

import tritium.nki as nki
import tritium.nki.language as nl
from tritium.interpreter import Profiler, Sanitizer, Visualizer, clients


@nki.jit
def nki_softmax(x, y):
    rows, cols = x.shape
    i_p = nl.program_id(0) * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
    i_f = nl.arange(cols)[None, :]
    tile = nl.load(x[i_p, i_f], mask=i_p < rows)
    e = nl.exp(nl.subtract(tile, nl.max(tile, axis=1, keepdims=True)))
    nl.store(y[i_p, i_f], value=nl.divide(e, nl.sum(e, axis=1, keepdims=True)), mask=i_p < rows)


def run(rows: int = 300, cols: int = 256, seed: int = 0):
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    y = np.zeros_like(x)
    nki_softmax[(-(-rows // 128),)](x, y)
    return x, y


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    with clients(Visualizer(), Profiler(), Sanitizer(races=True)) as (viz, prof, san):
        x, y = run()
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert not san.reports and not san.race_reports
    print("softmax matches NumPy;", viz.save_png(out / "softmax.png"), viz.save_html(out / "softmax.html"))
    print(prof.table())


if __name__ == "__main__":
    main()
