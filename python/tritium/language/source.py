"""Parsed source of a @jit function: the dedented AST plus what is needed to
map its nodes back to real file lines/columns (decorators and indentation
included), so every location the compiler reports is the user's own."""
from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass


@dataclass
class FunctionSource:
    fn_name: str
    filename: str
    tree: ast.FunctionDef
    line_offset: int   # add to an AST lineno to get the file line
    col_offset: int    # add to an AST col_offset to get the file column
    text: str

    def file_pos(self, node: ast.AST) -> tuple[int, int]:
        return (getattr(node, "lineno", 1) + self.line_offset,
                getattr(node, "col_offset", 0) + self.col_offset)

    def file_line(self, lineno: int) -> str | None:
        line = linecache.getline(self.filename, lineno)
        if line:
            return line.rstrip("\n")
        lines = self.text.splitlines()
        i = lineno - self.line_offset - 1
        return " " * self.col_offset + lines[i] if 0 <= i < len(lines) else None


def parse_function(fn) -> FunctionSource:
    """Finds and parses `fn`'s source; raises OSError if it has none."""
    lines, first = inspect.getsourcelines(fn)
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = _indent_of(raw) - _indent_of(text)
    module = ast.parse(text)
    defs = [n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs or isinstance(defs[0], ast.AsyncFunctionDef):
        raise ValueError(f"@jit needs a plain 'def' function, could not parse {fn!r}")
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    return FunctionSource(fn.__name__, filename, defs[0], first - 1, indent, text)


def _indent_of(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
