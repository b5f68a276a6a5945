//! Small structural edits that usually make a valid module invalid: the
//! verifier must answer each edited module with Ok or an error, never a panic.
//! Byte-level fuzzing rarely reaches these (an operand removed together with
//! its type in the signature), which is where a verifier rule reading another
//! op's operands before that op's own arity check was found.
use arbitrary::{Result, Unstructured};
use tritium_ir::{Attr, EntityRef, Module, Type, Value};

/// Applies one random edit to one function of `m` (no-op on an empty module).
pub fn apply(u: &mut Unstructured, m: &mut Module) -> Result<()> {
    let funcs: Vec<_> = m.funcs.keys().collect();
    if funcs.is_empty() {
        return Ok(());
    }
    let ntypes = m.types.len();
    let f = &mut m.funcs[*u.choose(&funcs)?];
    let ops: Vec<_> = f.ops.keys().collect();
    let blocks: Vec<_> = f.blocks.keys().collect();
    let nvalues = f.values.len();
    let random_value = |u: &mut Unstructured| -> Result<Value> { Ok(Value::new(u.choose_index(nvalues.max(1))?)) };
    let random_type = |u: &mut Unstructured| -> Result<Type> { Ok(Type::new(u.choose_index(ntypes.max(1))?)) };
    match u.int_in_range(0..=8)? {
        0 if !ops.is_empty() => {
            let od = &mut f.ops[*u.choose(&ops)?];
            if !od.operands.is_empty() {
                let i = u.choose_index(od.operands.len())?;
                od.operands.remove(i);
            }
        }
        1 if !ops.is_empty() && nvalues > 0 => {
            let v = random_value(u)?;
            f.ops[*u.choose(&ops)?].operands.push(v);
        }
        2 if !ops.is_empty() && nvalues > 0 => {
            let v = random_value(u)?;
            let od = &mut f.ops[*u.choose(&ops)?];
            if !od.operands.is_empty() {
                let i = u.choose_index(od.operands.len())?;
                od.operands[i] = v;
            }
        }
        3 if nvalues > 0 && ntypes > 0 => {
            let (v, t) = (random_value(u)?, random_type(u)?);
            f.values[v].ty = t;
        }
        4 => {
            let b = &mut f.blocks[*u.choose(&blocks)?];
            if !b.ops.is_empty() {
                let i = u.choose_index(b.ops.len())?;
                b.ops.remove(i);
            }
        }
        5 => {
            let b = &mut f.blocks[*u.choose(&blocks)?];
            if b.ops.len() >= 2 {
                let (i, j) = (u.choose_index(b.ops.len())?, u.choose_index(b.ops.len())?);
                b.ops.swap(i, j);
            }
        }
        6 if !ops.is_empty() => {
            let od = &mut f.ops[*u.choose(&ops)?];
            let keys: Vec<String> = od.attrs.keys().cloned().collect();
            if !keys.is_empty() {
                let key = u.choose(&keys)?.clone();
                if u.arbitrary()? {
                    od.attrs.remove(&key);
                } else {
                    let value = match u.int_in_range(0..=3)? {
                        0 => Attr::Int(u.arbitrary()?),
                        1 => Attr::Str(u.arbitrary()?),
                        2 => Attr::Bool(u.arbitrary()?),
                        _ => Attr::IntArray(u.arbitrary()?),
                    };
                    od.attrs.insert(key, value);
                }
            }
        }
        7 if !ops.is_empty() && !f.blocks[f.entry_block()].ops.is_empty() => {
            // An op's regions move to a top-level op, so region counts change.
            // Only to a top-level op: one inside the moved region would own
            // its own ancestor, a cycle no decoder or parser can produce.
            let top = f.blocks[f.entry_block()].ops.clone();
            let (a, b) = (*u.choose(&ops)?, *u.choose(&top)?);
            let taken = std::mem::take(&mut f.ops[a].regions);
            f.ops[b].regions.extend(taken);
        }
        _ => {
            // Two functions of one name, or results that no longer match the
            // returns and the call sites.
            let first = m.funcs.values().next().map(|g| g.name.clone());
            if let Some(callee) = first {
                let f = &mut m.funcs[*u.choose(&funcs)?];
                if u.arbitrary()? {
                    f.results.clear();
                } else {
                    f.name = callee;
                }
            }
        }
    }
    Ok(())
}
