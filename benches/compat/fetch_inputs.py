"""Fetches the acceptance harness's inputs, as pinned in inputs.json, into
benches/compat/inputs/ (ignored by git: other projects' files, used only as
test inputs):

- triton/python/tutorials/: Triton's tutorials 01-09 as published for
  Triton 3.6 (inputs.json names the commit and each file's git blob id,
  which is checked), laid out as in a Triton checkout, with
  triton/third_party/nvidia/backend/lib/libdevice.10.bc where tutorial 07
  looks for it;
- suites/<name>/: each kernel library's source and test suite (a PyPI
  source distribution or a GitHub commit), cut to the paths in `keep`;
- wheels/: the suites' test dependencies for the GPU machine's Python
  (`pip install --no-index --no-deps --target DIR inputs/wheels/*.whl`).

    python benches/compat/fetch_inputs.py [--only tutorials,suites,wheels] [--dest DIR]
        [--git triton-lang/triton=PATH] [--git BobMcDear/attorch=PATH] [--libdevice PATH]

Files come from GitHub, or from a local git directory holding the pinned
commit (`--git OWNER/NAME=PATH`, e.g. a clone or mirror of that repository
or of a fork with its history); sdists and wheels come from PyPI through pip.
Copy DIR to the GPU machine when it has no network.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "inputs.json").read_text())


def git_blob_id(data: bytes) -> str:
    """The id git gives a file's content (what inputs.json pins)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def from_github(repo: str, commit: str, path: str) -> bytes:
    url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def from_git(git_dir: str, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def git_dir_of(path: str) -> str:
    p = Path(path)
    return str(p / ".git") if (p / ".git").exists() else str(p)


def fetch_tutorials(dest: Path, gits: dict[str, str], libdevice: str) -> int:
    spec = MANIFEST["tutorials"]
    out = dest / "triton" / "python" / "tutorials"
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, pin in spec["files"].items():
        path = f"{spec['path']}/{name}"
        try:
            if spec["repo"] in gits:
                data = from_git(gits[spec["repo"]], spec["commit"], path)
            else:
                data = from_github(spec["repo"], spec["commit"], path)
        except (OSError, subprocess.CalledProcessError) as e:
            failed += 1
            print(f"fetch_inputs: {name}: {e}", file=sys.stderr)
            continue
        if git_blob_id(data) != pin["blob"]:
            failed += 1
            print(f"fetch_inputs: {name}: blob {git_blob_id(data)} is not the pinned {pin['blob']}", file=sys.stderr)
            continue
        (out / name).write_bytes(data)
        print(f"fetch_inputs: {(out / name).relative_to(dest)} (blob {pin['blob'][:10]})")
    return failed + place_libdevice(dest, Path(libdevice) if libdevice else find_libdevice())


def find_libdevice() -> Path | None:
    """The libdevice of the local Triton install (a Triton checkout's
    third_party/nvidia/backend/lib holds the same file), else the one
    tritium finds in the CUDA toolkit."""
    try:
        import importlib.util
        spec = importlib.util.find_spec("triton")
        if spec and spec.origin:
            cand = Path(spec.origin).parent / "backends" / "nvidia" / "lib" / "libdevice.10.bc"
            if cand.is_file():
                return cand
    except (ImportError, ValueError):
        pass
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    try:
        from tritium.backends.libdevice import libdevice_path
    except ImportError:
        return None
    found = libdevice_path()
    return Path(found) if found else None


def place_libdevice(dest: Path, found: Path | None) -> int:
    if found is None or not found.is_file():
        print("fetch_inputs: no libdevice.10.bc here (pip install nvidia-cuda-nvcc-cu12, or triton)", file=sys.stderr)
        return 1
    target = dest / MANIFEST["libdevice"]["dest"]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found, target)
    print(f"fetch_inputs: {target.relative_to(dest)} (from {found})")
    return 0


def unpack_kept(tar: tarfile.TarFile, keep: list[str], target: Path) -> None:
    """Extracts the archive's single top folder's `keep` paths into target."""
    members = tar.getmembers()
    top = members[0].name.split("/")[0]
    chosen = []
    for m in members:
        rel = m.name[len(top) + 1:] if m.name.startswith(top + "/") else ""
        if rel and any(rel == k or rel.startswith(k + "/") for k in keep) and (m.isfile() or m.isdir()):
            m.name = rel
            chosen.append(m)
    tar.extractall(target, members=chosen, filter="data")


def fetch_suite(name: str, spec: dict, dest: Path, gits: dict[str, str]) -> int:
    target = dest / "suites" / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    src = spec["source"]
    try:
        if "pypi_sdist" in src:
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                                "-d", tmp, src["pypi_sdist"]], check=True)
                archive = next(Path(tmp).glob("*.tar.gz"))
                with tarfile.open(archive) as tar:
                    unpack_kept(tar, spec["keep"], target)
        elif src["github"] in gits:
            data = subprocess.run(["git", "--git-dir", gits[src["github"]], "archive", "--prefix=top/", src["commit"]],
                                  check=True, capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                unpack_kept(tar, spec["keep"], target)
        else:
            url = f"https://github.com/{src['github']}/archive/{src['commit']}.tar.gz"
            with urllib.request.urlopen(url, timeout=120) as r:
                data = r.read()
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                unpack_kept(tar, spec["keep"], target)
    except (OSError, subprocess.CalledProcessError, StopIteration) as e:
        print(f"fetch_inputs: suites/{name}: {e}", file=sys.stderr)
        return 1
    print(f"fetch_inputs: suites/{name} ({json.dumps(src)})")
    return 0


def fetch_wheels(dest: Path) -> int:
    spec = MANIFEST["wheels"]
    out = dest / "wheels"
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "--python-version",
           spec["python"], "--implementation", "cp", "-d", str(out)]
    for p in spec["platforms"]:
        cmd += ["--platform", p]
    r = subprocess.run(cmd + spec["requirements"])
    print(f"fetch_inputs: wheels/ ({len(list(out.glob('*.whl')))} wheels)")
    return r.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="tutorials,suites,wheels")
    ap.add_argument("--dest", default=str(HERE / "inputs"))
    ap.add_argument("--git", action="append", default=[], help="OWNER/NAME=PATH of a local git directory")
    ap.add_argument("--libdevice", default="", help="the libdevice.10.bc for tutorial 07 (default: Triton's, else tritium's)")
    opts = ap.parse_args()
    gits = {}
    for g in opts.git:
        repo, _, path = g.partition("=")
        gits[repo] = git_dir_of(path)
    dest = Path(opts.dest)
    parts = set(opts.only.split(","))
    failed = 0
    if "tutorials" in parts:
        failed += fetch_tutorials(dest, gits, opts.libdevice)
    if "suites" in parts:
        for name, spec in MANIFEST["suites"].items():
            if "source" in spec:  # (the others are files fetched with the tutorials)
                failed += fetch_suite(name, spec, dest, gits)
    if "wheels" in parts:
        failed += fetch_wheels(dest)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
