"""Writes the fuzzers' starting inputs: binary IR for `decode_verify` and IR
text for `text_parse`, compiled by the frontend from fuzz/seed_kernels.py plus
every IR file test case and bench kernel already in the repository.

    .venv/bin/python fuzz/seed_corpus.py            # fill fuzz/corpus/<target>/ (gitignored)
    .venv/bin/python fuzz/seed_corpus.py --seeds    # also rewrite fuzz/seeds/<target>/ (checked in)

File names are content hashes, as libFuzzer names its own corpus entries, so
re-running adds nothing twice."""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FILETESTS = ROOT / "crates" / "tritium-filetests" / "filetests"
BENCH_KERNELS = ROOT / "benches" / "kernels"
CASE_SEPARATOR = "// -----"
# Inputs past this slow every execution tenfold (the 5,000-op bench kernel is
# 500 KB of text) and find nothing the smaller kernels do not; fuzz_smoke.sh
# passes the same bound to libFuzzer as -max_len.
MAX_INPUT_BYTES = 16384

sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(HERE))


def kernel_inputs() -> list[tuple[str, bytes, str]]:
    """(name, binary IR, IR text) for each seed kernel, verified. Locations name
    the kernel files (fuzz/seed_kernels.py, tests/kernels/) relative to the
    repository, so outputs do not depend on where the checkout lives."""
    from tritium import _core
    import seed_kernels

    out = []
    for seed in seed_kernels.SEEDS:
        data = seed.fn.compile_ir(signature=seed.signature, constexprs=seed.constexprs)
        text = _core.to_text(data).replace(f'loc("{ROOT}/', 'loc("')
        data = bytes(_core.parse_text(text))
        _core.verify(data)
        out.append((seed.name, data, text))
    return out


def repo_texts() -> list[str]:
    """Every file test case (valid and invalid: errors paths deserve mutation
    too) and every checked-in bench kernel."""
    texts = []
    for path in sorted(FILETESTS.rglob("*.tir")):
        texts += [c.strip() + "\n" for c in path.read_text().split(CASE_SEPARATOR) if c.strip()]
    texts += [p.read_text() for p in sorted(BENCH_KERNELS.glob("*.tir"))]
    return [t for t in texts if len(t.encode()) <= MAX_INPUT_BYTES]


def write(dir_: Path, payload: bytes) -> bool:
    dir_.mkdir(parents=True, exist_ok=True)
    path = dir_ / hashlib.sha1(payload).hexdigest()
    if path.exists():
        return False
    path.write_bytes(payload)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", action="store_true", help="also rewrite the checked-in fuzz/seeds/ from the kernels")
    args = ap.parse_args(argv)
    from tritium import _core

    kernels = kernel_inputs()
    if args.seeds:
        for target in ("decode_verify", "text_parse"):
            shutil.rmtree(HERE / "seeds" / target, ignore_errors=True)
        for _, data, text in kernels:
            write(HERE / "seeds" / "decode_verify", data)
            write(HERE / "seeds" / "text_parse", text.encode())

    binaries = [data for _, data, _ in kernels]
    texts = [text for _, _, text in kernels]
    for text in repo_texts():
        texts.append(text)
        try:
            binaries.append(bytes(_core.parse_text(text)))
        except (_core.IRParseError, _core.IRVerifyError):
            pass  # an invalid-text case has no binary form; its text still seeds text_parse
    corpus = HERE / "corpus"
    added_bin = sum(write(corpus / "decode_verify", b) for b in binaries)
    added_txt = sum(write(corpus / "text_parse", t.encode()) for t in texts)
    # The pipeline target reads arbitrary bytes as generator choices: any seed helps.
    added_pipe = sum(write(corpus / "pipeline", b) for b in binaries)
    print(f"seed_corpus: {len(binaries)} binary, {len(texts)} text inputs "
          f"(new: {added_bin} decode_verify, {added_txt} text_parse, {added_pipe} pipeline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
