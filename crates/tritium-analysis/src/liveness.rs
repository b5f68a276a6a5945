//! Liveness of SSA values over one function's structured regions: ops are
//! numbered in program order (an op before the ops of its regions), and each
//! value gets the interval of positions where it must be kept. Shared-memory
//! allocation takes explicit buffers' intervals from here, so buffers of
//! values never live at once share bytes.
use std::collections::HashMap;

use tritium_ir::{Function, Op, Opcode, Region, Value, ValueDef};

use crate::allocation::{BufferKind, BufferRequest};

/// Positions `start..=end` of the function's op numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Per op: its own position and the last position inside its regions.
    pub ops: HashMap<Op, Interval>,
    pub values: HashMap<Value, Interval>,
}

fn is_loop(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::For | Opcode::While)
}

impl Liveness {
    pub fn compute(func: &Function) -> Liveness {
        let mut live = Liveness::default();
        // parent op of each op (None at the function's top level)
        let mut parent: HashMap<Op, Op> = HashMap::new();
        let mut block_owner = HashMap::new();
        let mut next = 0u32;
        number(func, func.body, None, &mut next, &mut live.ops, &mut parent, &mut block_owner);

        // definitions: results at their op's end (after its regions ran), loop
        // block arguments over the whole loop (carried from one iteration to
        // the next), other block arguments from their owner's start
        for (v, data) in func.values.iter() {
            let iv = match data.def {
                ValueDef::OpResult(op, _) => live.ops.get(&op).map(|i| Interval { start: i.end, end: i.end }),
                ValueDef::BlockArg(block, _) => match block_owner.get(&block) {
                    Some(&owner) => {
                        let o = live.ops[&owner];
                        let whole = is_loop(func.ops[owner].opcode);
                        Some(Interval { start: o.start, end: if whole { o.end } else { o.start } })
                    }
                    None => Some(Interval { start: 0, end: 0 }), // function arguments
                },
            };
            if let Some(iv) = iv {
                live.values.insert(v, iv);
            }
        }
        // uses: a use inside a loop that does not contain the definition keeps
        // the value until that loop's end (every iteration reads it)
        for (&op, pos) in &live.ops {
            for &v in &func.ops[op].operands {
                let Some(def) = live.values.get(&v).copied() else { continue };
                let anchor = match func.values[v].def {
                    ValueDef::OpResult(d, _) => Some(d),
                    ValueDef::BlockArg(block, _) => block_owner.get(&block).copied(),
                };
                let mut end = def.end.max(pos.start);
                let mut cur = parent.get(&op).copied();
                while let Some(p) = cur {
                    if anchor.is_some_and(|a| within(a, p, &parent)) {
                        break;
                    }
                    if is_loop(func.ops[p].opcode) {
                        end = end.max(live.ops[&p].end);
                    }
                    cur = parent.get(&p).copied();
                }
                let e = live.values.get_mut(&v).expect("every operand was given an interval above");
                e.end = e.end.max(end);
            }
        }
        live
    }

    pub fn interval(&self, v: Value) -> Option<Interval> {
        self.values.get(&v).copied()
    }

    /// Two values must not share storage when their intervals overlap.
    pub fn interfere(&self, a: Value, b: Value) -> bool {
        match (self.interval(a), self.interval(b)) {
            (Some(x), Some(y)) => x.start <= y.end && y.start <= x.end,
            _ => false,
        }
    }

    /// Explicit buffer requests for values kept in shared memory, each
    /// `(value, bytes, align)`, live over the value's interval.
    pub fn buffer_requests(&self, func: &Function, values: &[(Value, u32, u32)]) -> Result<Vec<BufferRequest>, String> {
        values
            .iter()
            .map(|&(v, bytes, align)| {
                let iv = self.interval(v).ok_or_else(|| format!("value %{} is not in @{}", v.0, func.name))?;
                let op = owner_op(func, v).ok_or_else(|| format!("value %{} of @{} is a function argument, not a buffer", v.0, func.name))?;
                Ok(BufferRequest { op, kind: BufferKind::Explicit, bytes, align, start: iv.start, end: iv.end })
            })
            .collect()
    }
}

/// `x` is `p` or nested in one of `p`'s regions.
fn within(x: Op, p: Op, parent: &HashMap<Op, Op>) -> bool {
    let mut cur = Some(x);
    while let Some(c) = cur {
        if c == p {
            return true;
        }
        cur = parent.get(&c).copied();
    }
    false
}

/// The op defining `v`, or owning the block whose argument `v` is.
fn owner_op(func: &Function, v: Value) -> Option<Op> {
    match func.values[v].def {
        ValueDef::OpResult(op, _) => Some(op),
        ValueDef::BlockArg(block, _) => {
            func.ops.iter().find(|(_, d)| d.regions.iter().any(|&r| func.regions[r].block == block)).map(|(op, _)| op)
        }
    }
}

fn number(
    func: &Function,
    region: Region,
    owner: Option<Op>,
    next: &mut u32,
    ops: &mut HashMap<Op, Interval>,
    parent: &mut HashMap<Op, Op>,
    block_owner: &mut HashMap<tritium_ir::Block, Op>,
) {
    if let Some(o) = owner {
        block_owner.insert(func.regions[region].block, o);
    }
    for &op in &func.region_block(region).ops {
        let start = *next;
        *next += 1;
        if let Some(o) = owner {
            parent.insert(op, o);
        }
        for &r in &func.ops[op].regions {
            number(func, r, Some(op), next, ops, parent, block_owner);
        }
        ops.insert(op, Interval { start, end: *next - 1 });
    }
}
