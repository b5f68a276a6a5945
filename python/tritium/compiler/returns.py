"""Early-return rewriting. Structured IR has no jumps, so `if c: return x`
followed by more statements becomes `if c: return x else: <the rest>`; after
this pass every `return` is the last statement of its list (dead code after a
return is dropped), and if-merging turns the returned values into if results."""
from __future__ import annotations

import ast


def ends_with_return(stmts: list[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return ends_with_return(last.body) and ends_with_return(last.orelse)
    return False


def rewrite_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Returns a new statement list; the input nodes are not mutated."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Return):
            out.append(stmt)
            return out
        if not isinstance(stmt, ast.If) or not _contains_return(stmt):
            out.append(stmt)
            continue
        rest = stmts[i + 1:]
        # every branch that can fall through continues with the rest; a branch
        # whose return is nested deeper (`if a: if b: return`) falls through on
        # some paths, so it gets the rest too (duplicated into both branches
        # when neither ends in a return)
        body = rewrite_returns(stmt.body + ([] if ends_with_return(stmt.body) else rest))
        orelse = rewrite_returns(stmt.orelse + ([] if ends_with_return(stmt.orelse) else rest))
        out.append(ast.copy_location(ast.If(test=stmt.test, body=body, orelse=orelse), stmt))
        return out
    return out


def _contains_return(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if isinstance(child, ast.Return):
            return True
    return False
