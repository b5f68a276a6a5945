"""The on-disk cache of compiled kernels: one directory per key under
$TRITIUM_CACHE_DIR, written to a temporary directory and renamed so readers
never see half an entry; a manifest of checksums catches corrupt entries.
(The in-memory tables that repeated launches hit first belong to the launcher:
`driver.Launcher.table` and the Rust `_core.FastLauncher`.)"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import tempfile
import types
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

MANIFEST = "manifest.json"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").lower() in ("1", "true", "yes", "on")


def cache_dir() -> Path:
    d = os.environ.get("TRITIUM_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "tritium"


# -- the key ---------------------------------------------------------------

_COMPILER_HASH: str | None = None


def compiler_version() -> str:
    """The package version plus a hash of the compiler's own code (Python
    sources and the Rust extension), so an edited compiler never reuses an
    entry built by an older one."""
    global _COMPILER_HASH
    if _COMPILER_HASH is None:
        import tritium
        root = Path(tritium.__file__).parent
        h = hashlib.sha256(tritium.__version__.encode())
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".so", ".pyd") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes() if p.suffix == ".py" else f"{p.stat().st_size}:{p.stat().st_mtime_ns}".encode())
        _COMPILER_HASH = f"{tritium.__version__}+{h.hexdigest()[:16]}"
    return _COMPILER_HASH


def _is_jit(v: Any) -> bool:
    from .jit import JITFunction
    return isinstance(v, JITFunction)


def reached_functions(jit_fn: Any) -> list:
    """The kernel and every @jit function it can reach through names in its
    body (globals, closure cells, `module.attr` chains), transitively."""
    seen: dict[int, Any] = {}
    todo = [jit_fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen[id(f)] = f
        todo.extend(_direct_callees(f))
    return sorted(seen.values(), key=lambda f: (f.__module__ or "", f.__qualname__))


def _direct_callees(jit_fn: Any) -> Iterable:
    fn = jit_fn.fn
    src = getattr(jit_fn, "src", None)
    if src is None:
        return []
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(src))
    except SyntaxError:
        return []
    scope = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:
                pass
    out = []
    for node in ast.walk(tree):
        v = _resolve(node, scope)
        if v is not None and _is_jit(v):
            out.append(v)
        elif v is not None and hasattr(v, "fn") and _is_jit(getattr(v, "fn", None)):   # autotuner/heuristics wrappers
            out.append(v.fn)
    return out


def _resolve(node: ast.AST, scope: dict) -> Any:
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if isinstance(base, types.ModuleType) or _is_jit(base) or isinstance(base, type):
            return getattr(base, node.attr, None)
    return None


def source_digest(jit_fn: Any) -> str:
    """Hash of the source of the kernel and every @jit function it reaches
    (kept on the JITFunction: sources do not change under a live object)."""
    d = jit_fn.__dict__.get("_source_digest")
    if d is None:
        h = hashlib.sha256()
        for f in reached_functions(jit_fn):
            h.update(f"{f.__module__}.{f.__qualname__}\0".encode())
            h.update((f.src or "").encode())
            h.update(f"\0{sorted(f.do_not_specialize)}{sorted(f.do_not_specialize_on_alignment)}"
                     f"{f.noinline}\0".encode())
        d = jit_fn.__dict__["_source_digest"] = h.hexdigest()
    return d


def _stable(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{k!r}:{_stable(v[k])}" for k in sorted(v, key=repr)) + "}"
    if isinstance(v, (list, tuple)):
        return "(" + ",".join(_stable(x) for x in v) + ")"
    return repr(v)


def kernel_key(jit_fn: Any, target: str, options: dict, spec_text: str) -> str:
    """The disk-cache key: compiler version, target arch (e.g. "cuda:90"),
    compile options, the sources reached, and the specialization key in its
    process-independent text form (`Specializer.key_text`)."""
    parts = [compiler_version(), target, _stable(dict(options)), source_digest(jit_fn),
             f"{jit_fn.__module__}.{jit_fn.__qualname__}", spec_text]
    # debug switches the Rust compiler reads change the binary: a debug run
    # must never leave a kernel that a normal run would load
    parts += [f"{k}={os.environ[k]}" for k in CODEGEN_ENV if os.environ.get(k)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


# environment variables crates/tritium-codegen reads while compiling
CODEGEN_ENV = ("TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER",)


# -- disk entries ----------------------------------------------------------

def _entry(key: str) -> Path:
    if not key or any(c not in "0123456789abcdefABCDEF_-." for c in key) or key.startswith("."):
        raise ValueError(f"invalid cache key {key!r} (expected a hex digest)")
    return cache_dir() / key


def _check_name(name: str) -> None:
    if not name or name == MANIFEST or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"invalid cache file name {name!r}")


def _drop(path: Path, why: str) -> None:
    warnings.warn(f"tritium cache: dropping corrupt entry {path} ({why}); the kernel will be recompiled",
                  RuntimeWarning, stacklevel=3)
    _remove(path)


def _remove(path: Path) -> None:
    # rename first so a concurrent reader sees the entry whole or not at all
    trash = path.with_name(f".trash-{path.name}-{uuid.uuid4().hex}")
    try:
        os.rename(path, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def _read_valid(path: Path) -> dict[str, bytes] | str:
    """The entry's files, or a string saying what is wrong with it."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
        listed = manifest["files"]
    except FileNotFoundError:
        return "no manifest"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"unreadable manifest: {e}"
    out = {}
    for name, meta in listed.items():
        try:
            _check_name(name)
            data = (path / name).read_bytes()
        except (OSError, ValueError) as e:
            return f"file {name!r}: {e}"
        if len(data) != meta.get("size") or hashlib.sha256(data).hexdigest() != meta.get("sha256"):
            return f"file {name!r} does not match its checksum"
        out[name] = data
    return out


def get(key: str) -> dict[str, bytes] | None:
    """The files stored under `key`, or None (absent, bypassed by
    TRITIUM_ALWAYS_COMPILE=1, or corrupt: then dropped with a warning)."""
    if _env_flag("TRITIUM_ALWAYS_COMPILE"):
        return None
    path = _entry(key)
    if not path.is_dir():
        return None
    got = _read_valid(path)
    if isinstance(got, str):
        _drop(path, got)
        return None
    return got


def put(key: str, files: dict[str, bytes], replace: bool | None = None) -> Path:
    """Stores `files` under `key` atomically; safe with concurrent writers
    (the first complete entry wins, later writes are discarded) unless
    `replace` (default: TRITIUM_ALWAYS_COMPILE) asks for this write to win."""
    if replace is None:
        replace = _env_flag("TRITIUM_ALWAYS_COMPILE")
    path = _entry(key)
    for name, data in files.items():
        _check_name(name)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"cache file {name!r}: expected bytes, got {type(data).__name__}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=path.parent))
    try:
        manifest = {"key": key, "files": {}}
        for name, data in files.items():
            data = bytes(data)
            (tmp / name).write_bytes(data)
            manifest["files"][name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        (tmp / MANIFEST).write_text(json.dumps(manifest, sort_keys=True))
        for _ in range(3):
            try:
                os.rename(tmp, path)
                return path
            except OSError:
                if not path.exists():
                    raise
                if not replace and not isinstance(_read_valid(path), str):
                    return path          # another process stored it first
                replace = False
                _remove(path)            # a corrupt (or replaced) entry is in the way
        raise OSError(f"tritium cache: could not store entry {path}")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def get_or_build(key: str, build: Callable[[], dict[str, bytes]]) -> dict[str, bytes]:
    """The entry under `key`, or `build()`'s files, stored for next time
    (this is how a corrupt entry gets recompiled)."""
    got = get(key)
    if got is None:
        got = build()
        put(key, got)
    return got


__all__ = ["cache_dir", "compiler_version", "get", "get_or_build", "kernel_key", "put", "reached_functions",
           "source_digest"]
