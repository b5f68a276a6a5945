"""tritium under the name `triton`, for code that cannot be edited.

`install_as_triton()` puts a finder first on `sys.meta_path`: from then on
`import triton` gives a small facade module (tritium's names, plus Triton's
`__version__`, the API level tritium implements) and `import triton.X.Y`
gives the module `tritium.X.Y` itself, so `triton.language is
tritium.language` and kernels written against either are the same objects.
The finder also answers `importlib.metadata` for the distribution `triton`.
`uninstall_as_triton()` undoes all of it. `TRITIUM_AS_TRITON=1` in the
environment does it for a whole program: the package installs a `.pth` file
that calls `install_from_environment()` at interpreter start-up.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import sys
import types
from pathlib import Path
from typing import Any

from .settings import is_true

#: The Triton release whose API tritium implements; what `triton.__version__`
#: and `importlib.metadata.version("triton")` report while installed.
TRITON_API_VERSION = "3.6.0"

ENV_VAR = "TRITIUM_AS_TRITON"

# Triton module paths whose tritium module has another name
_RENAMED = {
    "triton.runtime.interpreter": "tritium.interpreter",
    "triton.compiler.compiler": "tritium.ast_source",
    "triton.backends.compiler": "tritium.runtime.device_api",
    "triton.backends.driver": "tritium.runtime.device_api",
}


def _package() -> types.ModuleType:
    # the tritium package: it imports this module, so it is complete in
    # sys.modules before any function here runs (an import here would be a cycle)
    return sys.modules[__name__.rpartition(".")[0]]


def _tritium_name(triton_name: str) -> str:
    return _RENAMED.get(triton_name) or "tritium" + triton_name[len("triton"):]


def _ours(name: str) -> bool:
    return name == "triton" or name.startswith("triton.")


class _TritonFacade(types.ModuleType):
    """`sys.modules["triton"]`: tritium's top level with Triton's version.
    Attributes are read from tritium on each access, so names tritium adds
    later (and submodules imported since) are visible."""

    def __getattr__(self, name: str) -> Any:
        tritium = _package()
        try:
            return getattr(tritium, name)
        except AttributeError:
            raise AttributeError(f"module 'triton' (tritium {tritium.__version__}) has no attribute '{name}'") \
                from None

    def __dir__(self) -> list[str]:
        tritium = _package()
        return sorted(set(dir(tritium)) | set(self.__dict__))


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system a module that already exists, then gives it its
    own `__spec__` back (the import system overwrites it with the alias's)."""

    def __init__(self, module: types.ModuleType):
        self.module = module
        self.own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        if self.own_spec is not None:
            module.__spec__ = self.own_spec


class _TritonDistribution(importlib.metadata.Distribution):
    """The metadata of a `triton` distribution at TRITON_API_VERSION, so
    version checks through importlib.metadata see the API tritium implements."""

    def read_text(self, filename: str) -> str | None:
        if filename == "METADATA":
            tritium = _package()
            return (f"Metadata-Version: 2.1\nName: triton\nVersion: {TRITON_API_VERSION}\n"
                    f"Summary: tritium {tritium.__version__} installed as triton\n")
        return None

    def locate_file(self, path: Any) -> Path:
        tritium = _package()
        return Path(tritium.__file__).parent / str(path)


class TritonFinder(importlib.abc.MetaPathFinder):
    """Resolves `triton` and `triton.*` to tritium while installed."""

    def __init__(self) -> None:
        self.facade: _TritonFacade | None = None

    def _facade(self) -> _TritonFacade:
        if self.facade is None:
            tritium = _package()
            facade = _TritonFacade("triton", tritium.__doc__)
            facade.__version__ = TRITON_API_VERSION
            facade.__file__ = tritium.__file__
            facade.__path__ = []    # submodules come from this finder only, never from a real triton
            facade.__spec__ = importlib.machinery.ModuleSpec("triton", _AliasLoader(facade), is_package=True)
            facade.__spec__.submodule_search_locations = []
            self.facade = facade
        return self.facade

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not _ours(fullname):
            return None
        if fullname == "triton":
            module: types.ModuleType = self._facade()
        else:
            name = _tritium_name(fullname)
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as e:
                if e.name != name:
                    raise
                raise ModuleNotFoundError(f"No module named '{fullname}' (tritium, installed as triton, has no "
                                          f"module '{name}')", name=fullname) from None
        is_pkg = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_pkg)

    def find_distributions(self, context: Any = importlib.metadata.DistributionFinder.Context()) -> Any:
        name = getattr(context, "name", None)
        if name is None or name.replace("-", "_").replace(".", "_").lower() == "triton":
            yield _TritonDistribution()


_finder: TritonFinder | None = None


def is_installed() -> bool:
    return _finder is not None and _finder in sys.meta_path


def install_as_triton() -> None:
    """From now on `import triton` (and every `triton.*`) resolves to tritium.
    Call it before the library you run imports triton; calling it again is a
    no-op. Raises RuntimeError if a real `triton` is already imported, since
    kernels made with it would then mix with tritium's."""
    global _finder
    if is_installed():
        return
    real = sorted(k for k, m in sys.modules.items() if _ours(k) and m is not None)
    if real:
        where = getattr(sys.modules[real[0]], "__file__", None) or "?"
        raise RuntimeError(f"install_as_triton(): '{real[0]}' is already imported (from {where}); call it before "
                           f"anything imports triton, or set {ENV_VAR}=1 for the whole program")
    _finder = TritonFinder()
    sys.meta_path.insert(0, _finder)
    importlib.invalidate_caches()


def uninstall_as_triton() -> None:
    """Undoes install_as_triton(): `import triton` finds the real Triton (if
    any) again. Modules that already imported `triton` keep what they got."""
    global _finder
    if _finder is None:
        return
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [k for k in sys.modules if _ours(k)]:
        del sys.modules[name]
    _finder = None
    importlib.invalidate_caches()


def install_from_environment() -> bool:
    """install_as_triton() when TRITIUM_AS_TRITON is 1/true/yes/on; called at
    start-up by the package's .pth file. Returns whether it installed."""
    if not is_true(os.environ.get(ENV_VAR, "").strip()):
        return False
    install_as_triton()
    return True


__all__ = ["ENV_VAR", "TRITON_API_VERSION", "TritonFinder", "install_as_triton", "install_from_environment",
           "is_installed", "uninstall_as_triton"]
