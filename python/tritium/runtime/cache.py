"""The on-disk cache of compiled kernels: one directory per key under
$TRITIUM_CACHE_DIR, written to a temporary directory and renamed so readers
never see half an entry; a manifest of checksums catches corrupt entries.
`load_or_build_many` stacks it with the remote cache (runtime/remote_cache.py,
Redis or a user's backend) and builds what neither has, all at once.
(The in-memory tables that repeated launches hit first belong to the launcher:
`driver.Launcher.table` and the Rust `_core.FastLauncher`.)"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable

from ..settings import always_compile, cache_dir, remote_cache_wait
from ..version import __version__
from .dependencies import dependencies_digest, reached_functions, source_digest
from .remote_cache import remote_backend

MANIFEST = "manifest.json"


# -- the key ---------------------------------------------------------------

_COMPILER_HASH: str | None = None


def compiler_version() -> str:
    """The package version plus a hash of the compiler's own code (Python
    sources and the Rust extension), so an edited compiler never reuses an
    entry built by an older one. Made once per process."""
    global _COMPILER_HASH
    if _COMPILER_HASH is None:
        _COMPILER_HASH = f"{__version__}+{_code_digest(Path(__file__).parent.parent)}"
    return _COMPILER_HASH


def _code_digest(root: Path) -> str:
    """A hash of the package under `root`: every .py file's relative path and
    bytes, and each extension's (.so, .pyd) size and modification time (its
    bytes are tens of megabytes). os.walk and plain strings, not pathlib:
    this runs on each process's first compile, and pathlib made it 10 times
    slower (25 ms of a cold launch)."""
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root)
        files += [(os.path.normpath(os.path.join(rel, n)), os.path.join(folder, n))
                  for n in names if n.endswith((".py", ".so", ".pyd"))]
    h = hashlib.sha256(__version__.encode())
    for rel, path in sorted(files):
        h.update(rel.encode() + b"\0")
        if path.endswith(".py"):
            with open(path, "rb") as f:
                h.update(f.read())
        else:
            st = os.stat(path)
            h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _stable(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{k!r}:{_stable(v[k])}" for k in sorted(v, key=repr)) + "}"
    if isinstance(v, (list, tuple)):
        return "(" + ",".join(_stable(x) for x in v) + ")"
    return repr(v)


def kernel_key(jit_fn: Any, target: str, options: dict, spec_text: str) -> str:
    """The disk-cache key: compiler version, target arch (e.g. "cuda:90"),
    compile options, the sources reached and the globals and closure values
    they read (runtime/dependencies.py), and the specialization key in its
    process-independent text form (`Specializer.key_text`)."""
    parts = [compiler_version(), target, _stable(dict(options)), dependencies_digest(jit_fn),
             f"{jit_fn.__module__}.{jit_fn.__qualname__}", spec_text]
    # debug switches the Rust compiler reads change the binary: a debug run
    # must never leave a kernel that a normal run would load
    parts += [f"{k}={os.environ[k]}" for k in CODEGEN_ENV if os.environ.get(k)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


# environment variables crates/tritium-codegen reads while compiling
CODEGEN_ENV = ("TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER", "TRITIUM_DEBUG_NO_PROXY_FENCE", "TRITIUM_DEBUG_NO_LDMATRIX",
               "TRITIUM_DEBUG_COMMIT_PER_LOAD", "TRITIUM_TMA", "TRITIUM_TMA_DEVICE")


# -- disk entries ----------------------------------------------------------
#
# Every fault of the file system or of an entry degrades, never fails a
# launch: a corrupt entry is dropped and rebuilt (one warning per entry), and a
# cache directory that cannot be used (read-only, a file, under a file, no
# permission) means compiling without a cache (one warning per directory).

_warned_dirs: set[tuple[str, str]] = set()


def _dir_unusable(directory: Path, err: OSError) -> None:
    what = "TRITIUM_CACHE_DIR" if os.environ.get("TRITIUM_CACHE_DIR") else "the default cache directory"
    reason = err.strerror or type(err).__name__
    if (str(directory), reason) in _warned_dirs:
        return
    _warned_dirs.add((str(directory), reason))
    warnings.warn(f"tritium cache: cannot use {what} {str(directory)!r} ({reason}); kernels are compiled "
                  "without the disk cache in this process", RuntimeWarning, stacklevel=4)


def _entry(key: str) -> Path:
    if not key or any(c not in "0123456789abcdefABCDEF_-." for c in key) or key.startswith("."):
        raise ValueError(f"invalid cache key {key!r} (expected a hex digest)")
    return cache_dir() / key


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or name == MANIFEST or "/" in name or "\\" in name \
            or name.startswith("."):
        raise ValueError(f"invalid cache file name {name!r}")


def _drop(path: Path, why: str) -> None:
    warnings.warn(f"tritium cache: dropping corrupt entry {path} ({why}); the kernel will be recompiled",
                  RuntimeWarning, stacklevel=4)
    _remove(path)


def _remove(path: Path) -> None:
    """Removes an entry (a directory, or a file where one should be): renamed
    first so a concurrent reader sees it whole or not at all. Failing to
    remove (a read-only directory) leaves it; readers keep rejecting it."""
    trash = path.with_name(f".trash-{path.name}-{uuid.uuid4().hex}")
    try:
        os.rename(path, trash)
    except OSError:
        return
    try:
        if trash.is_dir() and not trash.is_symlink():
            shutil.rmtree(trash)
        else:
            trash.unlink()
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)


def _manifest_files(manifest: Any) -> dict[str, tuple[int, str]]:
    """The manifest's {name: (size, sha256)}; ValueError when it is not one."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ValueError("the manifest has no file table")
    out = {}
    for name, meta in manifest["files"].items():
        _check_name(name)
        if not isinstance(meta, dict) or type(meta.get("size")) is not int or not isinstance(meta.get("sha256"), str):
            raise ValueError(f"the manifest's entry for {name!r} is not {{size, sha256}}")
        out[name] = (meta["size"], meta["sha256"])
    return out


def _read_valid(path: Path) -> dict[str, bytes] | str:
    """The entry's files, or a string saying what is wrong with it."""
    try:
        listed = _manifest_files(json.loads((path / MANIFEST).read_text()))
    except FileNotFoundError:
        return "no manifest"
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:
        return f"unreadable manifest: {e}"
    out = {}
    for name, (size, digest) in listed.items():
        try:
            data = (path / name).read_bytes()
        except OSError as e:
            return f"file {name!r}: {e}"
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            return f"file {name!r} does not match its checksum"
        out[name] = data
    return out


def get(key: str) -> dict[str, bytes] | None:
    """The files stored under `key`, or None (absent, bypassed by
    TRITIUM_ALWAYS_COMPILE=1, or corrupt: then dropped with a warning)."""
    if always_compile():
        return None
    path = _entry(key)
    try:
        if not path.exists() and not path.is_symlink():
            return None
    except OSError:
        return None
    if not path.is_dir():
        _drop(path, "not a directory")
        return None
    got = _read_valid(path)
    if isinstance(got, str):
        _drop(path, got)
        return None
    return got


def put(key: str, files: dict[str, bytes], replace: bool | None = None) -> Path | None:
    """Stores `files` under `key` atomically; safe with concurrent writers
    (the first complete entry wins, later writes are discarded) unless
    `replace` (default: TRITIUM_ALWAYS_COMPILE) asks for this write to win.
    Returns the entry, or None when the cache directory cannot be written
    (warned once; the caller goes on uncached)."""
    if replace is None:
        replace = always_compile()
    path = _entry(key)
    for name, data in files.items():
        _check_name(name)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"cache file {name!r}: expected bytes, got {type(data).__name__}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=path.parent))
    except OSError as e:
        _dir_unusable(path.parent, e)
        return None
    try:
        manifest: dict[str, Any] = {"key": key, "files": {}}
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
                if not path.exists() and not path.is_symlink():
                    raise
                if not replace and path.is_dir() and not isinstance(_read_valid(path), str):
                    return path          # another process stored it first
                replace = False
                _remove(path)            # a corrupt (or replaced) entry is in the way
        raise OSError(f"an entry at {path} is in the way and cannot be removed")
    except OSError as e:
        _dir_unusable(path.parent, e)
        return None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


# -- the stack: disk, then the remote backend, then a build ---------------

# what the stack did in this process (tests and TRITIUM_PRINT_AUTOTUNING read it)
stats = {"disk_hits": 0, "remote_hits": 0, "builds": 0, "waited": 0}

WAIT_POLL_S = 0.02


def load_or_build(key: str, build: Callable[[], dict[str, bytes]], decode: Callable[[dict[str, bytes]], Any]) -> Any:
    """`decode` of the entry under `key` (disk, else the remote cache), or of
    `build()`'s files, stored in both for next time; `build`'s exceptions
    propagate. See `load_or_build_many`."""
    return load_or_build_many([key], lambda _todo: [build()], decode, raise_errors=True)[0]


def load_or_build_many(keys: list[str], build_many: Callable[[list[int]], list[Any]],
                       decode: Callable[[dict[str, bytes]], Any], raise_errors: bool = False) -> list[Any]:
    """Per key: `decode` of its entry from the disk cache, else from the
    remote cache (runtime/cache_backend.py; copied to disk), else of what
    `build_many(indices)` returns for it (files, or an exception instance,
    which is returned in its place and not stored). All missing keys are
    built in one call, so the caller can compile them at once.

    With a remote backend a key is built by one process at a time: the
    others wait for its entry while its build lock is held (the lock expires
    if the builder dies; after TRITIUM_REMOTE_CACHE_WAIT seconds, default
    60, a waiter builds for itself). An entry that passes its checksums but
    does not decode is dropped and rebuilt once, not on every launch."""
    remote = None if always_compile() else remote_backend()
    out: list[Any] = [None] * len(keys)
    todo = []
    for i, key in enumerate(keys):
        files = get(key)
        if files is not None:
            try:
                out[i] = decode(files)
                stats["disk_hits"] += 1
                continue
            except _DECODE_ERRORS as e:
                _drop(_entry(key), f"its files do not decode: {type(e).__name__}: {e}")
        todo.append(i)
    todo = [i for i in todo if not (remote is not None and _from_remote(remote, keys[i], decode, out, i))]
    deadline = time.monotonic() + remote_cache_wait()
    while todo:
        mine, theirs, tokens = [], [], {}
        for i in todo:
            ok, token = remote.acquire(keys[i]) if remote is not None else (True, None)
            if ok and token is not None and _from_remote(remote, keys[i], decode, out, i):
                remote.release(keys[i], token)     # built by another process since our first look
                continue
            if ok or time.monotonic() > deadline:
                mine.append(i)
                tokens[i] = token
            else:
                theirs.append(i)
        try:
            if mine:
                _build(keys, mine, build_many, decode, out, remote, raise_errors)
        finally:
            for i, token in tokens.items():
                if token is not None:
                    remote.release(keys[i], token)
        todo = _wait_for(remote, keys, theirs, decode, out, deadline) if theirs else []
    return out


_DECODE_ERRORS = (KeyError, ValueError, TypeError, UnicodeDecodeError, RecursionError)


def _from_remote(remote: Any, key: str, decode: Callable, out: list, i: int) -> bool:
    files = remote.get(key)
    if files is None:
        return False
    try:
        out[i] = decode(files)
    except _DECODE_ERRORS as e:
        warnings.warn(f"tritium cache: dropping remote entry {key} ({remote.name}): its files do not decode "
                      f"({type(e).__name__}: {e}); the kernel will be recompiled", RuntimeWarning, stacklevel=4)
        remote.drop(key)
        return False
    stats["remote_hits"] += 1
    put(key, files)
    return True


def _build(keys: list[str], mine: list[int], build_many: Callable, decode: Callable, out: list, remote: Any,
           raise_errors: bool) -> None:
    built = build_many(mine)
    for i, files in zip(mine, built):
        if isinstance(files, BaseException):
            if raise_errors:
                raise files
            out[i] = files
            continue
        stats["builds"] += 1
        out[i] = decode(files)
        put(keys[i], files)
        if remote is not None:
            remote.put(keys[i], files)


def _wait_for(remote: Any, keys: list[str], theirs: list[int], decode: Callable, out: list,
              deadline: float) -> list[int]:
    """Polls until each key another process is building has its entry;
    returns the keys to build here after all (the builder gave up or died,
    or the deadline passed)."""
    stats["waited"] += len(theirs)
    again = []
    while theirs:
        time.sleep(WAIT_POLL_S)
        still = []
        for i in theirs:
            if _from_remote(remote, keys[i], decode, out, i):
                continue
            if not remote.locked(keys[i]) or time.monotonic() > deadline:
                again.append(i)
            else:
                still.append(i)
        theirs = still
    return again


def get_or_build(key: str, build: Callable[[], dict[str, bytes]]) -> dict[str, bytes]:
    """The entry under `key`, or `build()`'s files, stored for next time
    (this is how a corrupt entry gets recompiled)."""
    return load_or_build(key, build, lambda files: files)


__all__ = ["cache_dir", "compiler_version", "get", "get_or_build", "kernel_key", "load_or_build",
           "load_or_build_many", "put", "reached_functions", "source_digest", "stats"]
