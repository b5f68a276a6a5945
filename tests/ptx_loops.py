"""Reading loops out of PTX for the codegen tests: each loop's body text,
and its instructions by kind (for per-iteration cost bounds)."""
from __future__ import annotations

import re
from collections import Counter

# integer and predicate work: what a loop spends beside its copies, tensor-core
# instructions and synchronization
INTEGER_OPS = frozenset("add sub mul mad shl shr and or xor not rem div min max neg abs bfe bfi prmt lop3 "
                        "setp selp cvt mov".split())


def loop_bodies(ptx: str) -> list[str]:
    """The text of each loop: from a label to the branch that jumps back to it."""
    bodies = []
    for m in re.finditer(r"^(\$L__BB\d+_\d+):", ptx, re.M):
        back = re.search(r"bra(\.uni)?\s+" + re.escape(m.group(1)) + ";", ptx[m.end():])
        if back:
            bodies.append(ptx[m.end():m.end() + back.start()])
    return bodies


def instructions(body: str) -> list[str]:
    """The opcodes (`add.s32`, `cp.async.cg.shared.global`, ...) of a loop
    body, one per instruction; an inline-asm block `{ ... }` counts as the
    instructions it holds, less its local declarations."""
    out = []
    for line in body.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.endswith(":") or line.startswith("."):
            continue
        parts = line.strip("{} ").split(";") if line.startswith("{") else [line]
        for p in parts:
            p = re.sub(r"^@!?%\w+\s*", "", p.strip())
            if p and not p.startswith("."):
                out.append(p.split()[0])
    return out


def integer_work(body: str) -> int:
    """How many integer, predicate and move instructions the body runs."""
    return sum(1 for op in instructions(body) if op.split(".")[0] in INTEGER_OPS)


def opcode_counts(body: str) -> Counter:
    return Counter(op.split(".")[0] for op in instructions(body))
