"""Triton's compiler entry, `triton.compiler.compile(ASTSource(fn, signature,
constexprs, attrs), target=GPUTarget(...), options={...})`, on top of
`tritium.compile`: an ASTSource in Triton's terms (types by parameter name,
"constexpr" entries, constants keyed by name or by argument path,
`tt.divisibility` attributes by argument path) is translated to tritium's
signature, constexprs and specialization properties. Triton's module path
`triton.compiler.compiler` resolves here."""
from __future__ import annotations

import hashlib
from typing import Any

from . import compiler
from .runtime.compiled import CompiledKernel, KernelMetadata, Target, compile_with_target
from .runtime.jit import JITFunction

# Triton's argument attributes -> tritium's specialization properties
_ATTRIBUTES = {"tt.divisibility": "divisibility"}


class ASTSource:
    """What to compile: a @jit function, its runtime signature by name
    ({"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}), constexpr values
    (by name or by `(index,)`), and Triton-style argument attributes
    ({(0,): [["tt.divisibility", 16]]})."""

    def __init__(self, fn: Any, signature: dict, constexprs: dict | None = None, attrs: dict | None = None):
        if not isinstance(fn, JITFunction):
            fn = getattr(fn, "fn", fn)
            if not isinstance(fn, JITFunction):
                raise TypeError(f"ASTSource expects a @jit function, got {fn!r}")
        self.fn = fn
        self.name = fn.__name__
        self.signature = dict(signature)
        for k in self.signature:
            if not isinstance(k, str):
                raise TypeError("ASTSource: signature keys must be parameter names (strings)")
        self.constants: dict[str, Any] = {}
        for k, v in (constexprs or {}).items():
            self.constants[self._name_of(k, "constexprs")] = v
        self.attrs = dict(attrs or {})

    def _name_of(self, key: Any, what: str) -> str:
        if isinstance(key, str):
            if key not in self.fn.arg_names:
                raise ValueError(f"ASTSource {what}: '{self.name}' has no parameter '{key}'")
            return key
        if isinstance(key, int):
            key = (key,)
        if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], int) \
                and 0 <= key[0] < len(self.fn.arg_names):
            return self.fn.arg_names[key[0]]
        raise ValueError(f"ASTSource {what}: {key!r} is not a parameter of '{self.name}' (tuple arguments are "
                         "not supported)")

    def hash(self) -> str:
        text = f"{self.fn.cache_key}-{sorted(self.signature.items())}-{sorted(self.constants.items(), key=str)}" \
               f"-{sorted(self.attrs.items(), key=str)}"
        return hashlib.sha256(text.encode()).hexdigest()

    def tritium_arguments(self) -> tuple[dict, dict, dict]:
        """(signature, constexprs, attrs) as `tritium.compile` takes them."""
        signature = {k: v for k, v in self.signature.items() if str(v) != "constexpr"}
        constexprs = {k: v for k, v in self.constants.items() if k not in signature}
        attrs: dict[str, list[str]] = {}
        for key, entries in self.attrs.items():
            name = self._name_of(key, "attrs")
            for entry in entries:
                attr, value = entry
                prop = _ATTRIBUTES.get(attr)
                if prop is None:
                    raise ValueError(f"ASTSource attrs: unknown attribute {attr!r} on '{name}' "
                                     f"(known: {', '.join(_ATTRIBUTES)})")
                if prop == "divisibility" and value != 16:
                    raise ValueError(f"ASTSource attrs: tt.divisibility must be 16, got {value!r} on '{name}'")
                attrs.setdefault(prop, []).append(name)
        return signature, constexprs, attrs


def compile(src: Any, target: Any = None, options: dict | None = None, **kwargs: Any) -> CompiledKernel:
    """`triton.compile`: an ASTSource, a target (GPUTarget or "cuda:90"; the
    current device's by default) and options (num_warps, num_stages, debug,
    enable_fp_fusion).
    A @jit function as first argument is `tritium.compile(fn, ...)`."""
    if not isinstance(src, ASTSource):   # a @jit function: tritium.compile's form
        return compile_with_target(src, target=target, **{**(options or {}), **kwargs})
    options = dict(options or {})
    unknown = set(options) - {"num_warps", "num_stages", "debug", "num_ctas", "enable_fp_fusion"}
    if unknown:
        raise ValueError(f"compile: unsupported option(s) {', '.join(sorted(unknown))}")
    signature, constexprs, attrs = src.tritium_arguments()
    return compile_with_target(src.fn, signature, constexprs, target, num_warps=options.get("num_warps", 4),
                               num_stages=options.get("num_stages", 3), attrs=attrs,
                               debug=bool(options.get("debug", False)),
                               enable_fp_fusion=options.get("enable_fp_fusion", True))


__all__ = ["ASTSource", "CompiledKernel", "KernelMetadata", "Target", "compile"]

# Triton's names at triton.compiler
compiler.register_entry({"ASTSource": ASTSource, "CompiledKernel": CompiledKernel, "KernelMetadata": KernelMetadata,
                         "compile": compile})
