//! `claim_tma`: the sm_90a lowering of tensor descriptors. A
//! `block_load` / `block_store` on a kernel's host `TensorDescriptor`
//! argument becomes `tma_load` / `tma_store` through a CUDA tensor map that
//! the launcher encodes on the host and passes by value; the rest of the
//! block ops stay for `expand_block_memory`.
//!
//! The frontend marks a host descriptor's base argument with
//! `host_descriptor = [block shape]` (its shape, strides and padding flag
//! are the arguments after it: `python/tritium/language/blocks.py`). An
//! access is claimed when it is that descriptor's own (its shape and stride
//! operands are those arguments, the last stride the constant 1, the block
//! the descriptor's, offsets scalars) and the box fits a tensor map
//! (`tma_box`) and its last-dimension offset is known to be a multiple of
//! 16 bytes. The hardware needs that last one: a box whose first column is
//! not on a 16-byte boundary of global memory faults the whole kernel with
//! an illegal instruction (Triton's interpreter asserts the same rule; the
//! masked expansion has no such limit, so such accesses keep it). What is
//! known comes from axis info, which the caller computes (`Divisibility`).
//! Each claimed descriptor gets one new i64 kernel argument,
//! appended after the others, marked `tensormap` with the box and swizzle
//! it must be encoded with: the launcher reads those from the compiled
//! kernel, so the two sides cannot disagree.
//!
//! Device-side descriptors (`tl.make_tensor_descriptor`; with `device`):
//! the kernel builds the map itself (`tensormap_create`) in a 128-byte slot
//! of the launch's global scratch, when axis info proves the map legal
//! (`device_sites`); docs/architecture.md, "Device-side descriptors".
use tritium_ir::ops::{GLOBAL_SCRATCH_ATTR, TENSORMAP_ATTR};
use tritium_ir::{Attr, Attrs, Function, Module, Op, Opcode, ScalarKind, TypeData, Value, ValueData, ValueDef};

use crate::layout::SharedLayout;

/// The frontend's mark on a host descriptor's base argument: its block shape.
pub const HOST_DESCRIPTOR_ATTR: &str = "host_descriptor";

/// How a block is fetched by TMA: the box the tensor map describes
/// (outermost dimension first) and its swizzle. A box narrower than the
/// block (rows wider than the 128-byte swizzle span) is issued `copies`
/// times along the last dimension, each landing one NVMMA column block
/// (`SharedLayout::Nvmma`) after the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaBox {
    pub box_dims: Vec<u32>,
    pub swizzle_bytes: u32,
    pub copies: u32,
}

impl TmaBox {
    /// The shared layout the box lands in, as `SharedLayout::nvmma` spells it.
    pub fn layout(&self, elem_bytes: u32) -> SharedLayout {
        SharedLayout::Nvmma { swizzle_bytes: self.swizzle_bytes, transposed: false, elem_bytes }
    }
}

/// The TMA box for a block of `block` elements of `elem_bytes` each, or why
/// there is none. 2-D blocks only (the NVMMA layout is 2-D); rows of at
/// least 16 bytes (TMA moves 16-byte units); at most 256 rows; the swizzle
/// is the NVMMA layout's for that row width, so wgmma can read the tile.
pub fn tma_box(elem_bytes: u32, block: &[u32]) -> Result<TmaBox, String> {
    let [rows, cols] = block else {
        return Err(format!("TMA here takes 2-D blocks, got rank {}", block.len()));
    };
    if !matches!(elem_bytes, 1 | 2 | 4 | 8) {
        return Err(format!("{elem_bytes}-byte elements"));
    }
    let row_bytes = cols * elem_bytes;
    if row_bytes < 16 || row_bytes % 16 != 0 {
        return Err(format!("rows of {row_bytes} bytes (TMA moves whole 16-byte units)"));
    }
    if *rows > 256 {
        return Err(format!("{rows} rows (a TMA box has at most 256)"));
    }
    let SharedLayout::Nvmma { swizzle_bytes, .. } = SharedLayout::nvmma(*cols, elem_bytes, false) else {
        unreachable!("nvmma() makes an Nvmma layout")
    };
    let box_cols = if swizzle_bytes == 0 { *cols } else { (swizzle_bytes / elem_bytes).min(*cols) };
    let copies = cols / box_cols;
    // each copy's column block must start on a swizzle atom (8 rows) for the
    // hardware's address-based swizzle to agree with the layout's row-based one
    if copies > 1 && rows % 8 != 0 {
        return Err(format!("{rows} rows of a block split into {copies} boxes (needs a multiple of 8)"));
    }
    if box_cols > 256 {
        return Err(format!("a box {box_cols} elements wide (at most 256)"));
    }
    Ok(TmaBox { box_dims: vec![*rows, box_cols], swizzle_bytes, copies })
}

/// The divisibility (elements, a power of two) known for each of `values`,
/// scalars of kernel `func` of the module: axis info's, which lives in
/// `tritium-analysis` (codegen's `claim_accesses` passes it).
pub type Divisibility<'a> = &'a dyn Fn(&Module, &Function, &[Value]) -> Vec<u64>;

/// Bytes a TMA box's first column must be aligned to in global memory.
pub const TMA_INNER_ALIGN_BYTES: u64 = 16;

/// Claims every TMA-able host-descriptor access of every kernel of `m`,
/// and with `device` every TMA-able device-side descriptor access
/// (`claim_device`); returns how many it claimed. A descriptor used in a
/// loop reaches it as a loop-carried value the loop never changes (the
/// frontend carries every field of an object a loop could change):
/// canonicalize runs first when the module has descriptor accesses, so
/// such uses see the values the descriptor was made of.
pub fn claim_tma(m: &mut Module, divisibility: Divisibility<'_>, device: bool) -> usize {
    let has_host = m.funcs.iter().any(|(_, f)| f.kernel && f.arg_attrs.iter().any(|a| a.contains_key(HOST_DESCRIPTOR_ATTR)));
    let has_device = device && m.funcs.iter().any(|(_, f)| f.kernel && f.ops_preorder().iter().any(|&(_, op)| is_descriptor_access(f, op)));
    if !has_host && !has_device {
        return 0;
    }
    // to a fixed point: a loop nested in another sees its carried values
    // as the outer loop's arguments until that loop's are resolved
    for _ in 0..8 {
        if crate::canonicalize(m) == 0 {
            break;
        }
    }
    let mut claimed = 0;
    for id in m.funcs.keys().collect::<Vec<_>>() {
        if !m.funcs[id].kernel {
            continue;
        }
        let module: &Module = m;
        let sites = aligned_sites(module, &module.funcs[id], divisibility);
        let Module { types, funcs, .. } = m;
        claimed += claim_sites(types, &mut funcs[id], &sites);
        if has_device {
            let module: &Module = m;
            let sites = device_sites(module, &module.funcs[id], divisibility);
            let Module { types, funcs, .. } = m;
            claimed += claim_device(types, &mut funcs[id], sites);
        }
    }
    claimed
}

/// A `block_load` / `block_store` of a tensor descriptor (host or device).
fn is_descriptor_access(f: &Function, op: Op) -> bool {
    let d = &f.ops[op];
    matches!(d.opcode, Opcode::BlockLoad | Opcode::BlockStore) && d.attrs.get("descriptor").and_then(Attr::as_bool) == Some(true)
}

/// The claimable accesses of kernel `f` (op, the descriptor's base argument)
/// whose last-dimension offset is known to start on a 16-byte boundary.
fn aligned_sites(m: &Module, f: &Function, divisibility: Divisibility<'_>) -> Vec<(Op, usize)> {
    let candidates: Vec<(Op, Site)> =
        f.ops_preorder().into_iter().filter_map(|(_, op)| claimable(&m.types, f, op).map(|s| (op, s))).collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let inner: Vec<Value> = candidates.iter().map(|(_, s)| s.inner_offset).collect();
    let known = divisibility(m, f, &inner);
    candidates
        .into_iter()
        .zip(known)
        .filter(|((_, s), div)| div.saturating_mul(s.elem_bytes as u64) % TMA_INNER_ALIGN_BYTES == 0)
        .map(|((op, s), _)| (op, s.arg))
        .collect()
}

fn claim_sites(types: &mut tritium_ir::TypeTable, f: &mut Function, sites: &[(Op, usize)]) -> usize {
    let mut maps: Vec<(usize, Value)> = Vec::new();
    for &(op, arg) in sites {
        let map = match maps.iter().find(|(a, _)| *a == arg) {
            Some(&(_, v)) => v,
            None => {
                let v = add_tensormap_arg(types, f, arg);
                maps.push((arg, v));
                v
            }
        };
        let d = &mut f.ops[op];
        d.opcode = if d.opcode == Opcode::BlockLoad { Opcode::TmaLoad } else { Opcode::TmaStore };
        d.operands.insert(0, map);
    }
    sites.len()
}

/// A TMA-able access: the descriptor's base argument, the offset of its
/// last dimension and its element size.
struct Site {
    arg: usize,
    inner_offset: Value,
    elem_bytes: u32,
}

/// The block shape a host descriptor's base argument was marked with.
fn descriptor_block(f: &Function, arg: usize) -> Option<Vec<u32>> {
    let list = f.arg_attrs.get(arg)?.get(HOST_DESCRIPTOR_ATTR)?.as_int_array()?;
    list.iter().map(|&d| u32::try_from(d).ok()).collect()
}

/// The site when `op` is a TMA-able access of a host descriptor (its
/// offsets' alignment aside).
fn claimable(types: &tritium_ir::TypeTable, f: &Function, op: Op) -> Option<Site> {
    let d = &f.ops[op];
    let block_ty = match d.opcode {
        Opcode::BlockLoad => f.value_type(d.results[0]),
        Opcode::BlockStore => f.value_type(*d.operands.last()?),
        _ => return None,
    };
    if d.attrs.get("descriptor").and_then(Attr::as_bool) != Some(true) {
        return None;
    }
    let ValueDef::BlockArg(b, arg) = f.values[d.operands[0]].def else { return None };
    let arg = arg as usize;
    if b != f.entry_block() {
        return None;
    }
    let block = descriptor_block(f, arg)?;
    let dims = types.dims(block_ty);
    if dims != block.as_slice() {
        return None;
    }
    let r = dims.len();
    let args = f.args();
    // shape, strides (the last the constant 1), scalar offsets
    let shapes = &d.operands[1..1 + r];
    let strides = &d.operands[1 + r..1 + 2 * r];
    let offsets = &d.operands[1 + 2 * r..1 + 3 * r];
    if args.get(arg + 1..arg + 1 + r)? != shapes || args.get(arg + 1 + r..arg + 2 * r)? != &strides[..r - 1] {
        return None;
    }
    if !is_const_one(f, strides[r - 1]) || offsets.iter().any(|&o| types.is_tensor(f.value_type(o))) {
        return None;
    }
    let elem = types.elem(block_ty);
    let eb = match types.data(elem) {
        TypeData::Scalar(k) if *k != ScalarKind::I1 => k.bits() / 8,
        _ => return None,
    };
    tma_box(eb, dims).ok()?;
    Some(Site { arg, inner_offset: offsets[r - 1], elem_bytes: eb })
}

/// A device-side descriptor's access TMA can do: the array (base, shapes,
/// leading strides) it reads, its block, its fill, its element size and
/// its last-dimension offset (whose alignment decides the claim).
struct DeviceSite {
    op: Op,
    array: Vec<Value>,
    block: Vec<u32>,
    nan: bool,
    elem_bytes: u32,
    inner_offset: Value,
}

/// The device-side descriptor accesses of kernel `f` that TMA can do, as
/// far as their values are known at compile time: a 2-D block fitting a
/// box (`tma_box`), the last stride the constant 1, scalar offsets, a
/// constant zero or NaN padding, the array's values defined at the
/// kernel's top level (so one map built there serves every access, in
/// loops and branches too), and axis info proving the base 16-byte
/// aligned, each leading stride a multiple of 16 bytes and the
/// last-dimension offset a multiple of 16 bytes. What cannot be proven keeps
/// the masked expansion: a map the hardware rejects faults the kernel.
fn device_sites(m: &Module, f: &Function, divisibility: Divisibility<'_>) -> Vec<DeviceSite> {
    let types = &m.types;
    let top: std::collections::HashSet<Op> = f.region_block(f.body).ops.iter().copied().collect();
    let at_top = |v: Value| match f.values[v].def {
        ValueDef::BlockArg(b, _) => b == f.entry_block(),
        ValueDef::OpResult(d, _) => top.contains(&d),
    };
    let mut sites = Vec::new();
    for (_, op) in f.ops_preorder() {
        if !is_descriptor_access(f, op) {
            continue;
        }
        let d = &f.ops[op];
        let base = d.operands[0];
        if let ValueDef::BlockArg(b, i) = f.values[base].def {
            if b == f.entry_block() && f.arg_attrs.get(i as usize).is_some_and(|a| a.contains_key(HOST_DESCRIPTOR_ATTR)) {
                continue; // a host descriptor's: claimed above or left to the expansion
            }
        }
        let load = d.opcode == Opcode::BlockLoad;
        let block_ty = if load { f.value_type(d.results[0]) } else { f.value_type(*d.operands.last().expect("a value")) };
        let dims = types.dims(block_ty).to_vec();
        let r = dims.len();
        let eb = match types.data(types.elem(block_ty)) {
            TypeData::Scalar(k) if *k != ScalarKind::I1 => k.bits() / 8,
            _ => continue,
        };
        if tma_box(eb, &dims).is_err() || d.operands.len() < 1 + 3 * r {
            continue;
        }
        let (shapes, strides, offsets) = (&d.operands[1..1 + r], &d.operands[1 + r..1 + 2 * r], &d.operands[1 + 2 * r..1 + 3 * r]);
        if !is_const_one(f, strides[r - 1]) || offsets.iter().any(|&o| types.is_tensor(f.value_type(o))) {
            continue;
        }
        let nan = match d.operands.get(1 + 3 * r).filter(|_| load) {
            None => false,
            Some(&other) => match const_value(f, other) {
                Some(Attr::Int(0)) | Some(Attr::Bool(false)) => false,
                Some(Attr::Float(x)) if *x == 0.0 => false,
                Some(Attr::Float(x)) if x.is_nan() => true,
                _ => continue,
            },
        };
        let array: Vec<Value> = std::iter::once(base).chain(shapes.iter().copied()).chain(strides[..r - 1].iter().copied()).collect();
        if !array.iter().all(|&v| at_top(v)) {
            continue;
        }
        sites.push(DeviceSite { op, array, block: dims, nan, elem_bytes: eb, inner_offset: offsets[r - 1] });
    }
    if sites.is_empty() {
        return sites;
    }
    // base (bytes), leading strides and the inner offset (elements)
    let mut asked = Vec::new();
    for s in &sites {
        let r = s.block.len();
        asked.push(s.array[0]);
        asked.extend_from_slice(&s.array[1 + r..]);
        asked.push(s.inner_offset);
    }
    let known = divisibility(m, f, &asked);
    let mut at = 0;
    let mut out = Vec::new();
    for s in sites {
        // the base, r - 1 leading strides and the inner offset
        let n = s.block.len() + 1;
        let k = &known[at..at + n];
        at += n;
        let bytes = |div: u64| div.saturating_mul(s.elem_bytes as u64) % TMA_INNER_ALIGN_BYTES == 0;
        if k[0] % TMA_INNER_ALIGN_BYTES == 0 && k[1..].iter().all(|&div| bytes(div)) {
            out.push(s);
        }
    }
    out
}

/// Builds one tensor map per distinct (array, block, fill) of `sites` at
/// the kernel's top level (`tensormap_create`, into a slot of the global
/// scratch argument it appends) and turns each site into `tma_load` /
/// `tma_store` through its map.
fn claim_device(types: &mut tritium_ir::TypeTable, f: &mut Function, sites: Vec<DeviceSite>) -> usize {
    if sites.is_empty() {
        return 0;
    }
    let i64t = types.scalar(ScalarKind::I64);
    let entry = f.entry_block();
    let index = f.blocks[entry].args.len() as u32;
    let scratch = f.values.push(ValueData { ty: i64t, def: ValueDef::BlockArg(entry, index) });
    f.blocks[entry].args.push(scratch);
    let mut maps: Vec<(Vec<Value>, Vec<u32>, bool, Value)> = Vec::new();
    for s in &sites {
        let found = maps.iter().find(|(a, b, n, _)| *a == s.array && *b == s.block && *n == s.nan).map(|m| m.3);
        let map = match found {
            Some(v) => v,
            None => {
                let tb = tma_box(s.elem_bytes, &s.block).expect("device_sites checked the box");
                let mut attrs = Attrs::new();
                attrs.insert("slot".to_string(), Attr::Int(maps.len() as i64));
                attrs.insert("box".to_string(), Attr::IntArray(tb.box_dims.iter().map(|&d| d as i64).collect()));
                attrs.insert("swizzle".to_string(), Attr::Int(tb.swizzle_bytes as i64));
                attrs.insert("nan".to_string(), Attr::Bool(s.nan));
                let mut operands = vec![scratch];
                operands.extend_from_slice(&s.array);
                let loc = f.ops[s.op].loc;
                let create = f.create_op(Opcode::TensormapCreate, &operands, &[i64t], attrs, Vec::new(), loc);
                // after the last definition among its operands at the top
                // level, and after the maps already built there (slot order)
                let body = f.entry_block();
                let ops = &f.blocks[body].ops;
                let mut at = operands
                    .iter()
                    .filter_map(|&v| f.defining_op(v))
                    .filter_map(|d| ops.iter().position(|&o| o == d))
                    .max()
                    .map_or(0, |i| i + 1);
                while ops.get(at).is_some_and(|&o| f.ops[o].opcode == Opcode::TensormapCreate) {
                    at += 1;
                }
                f.insert_op(body, at, create);
                let v = f.ops[create].results[0];
                maps.push((s.array.clone(), s.block.clone(), s.nan, v));
                v
            }
        };
        let d = &mut f.ops[s.op];
        d.opcode = if d.opcode == Opcode::BlockLoad { Opcode::TmaLoad } else { Opcode::TmaStore };
        d.operands.insert(0, map);
    }
    let mut attrs = Attrs::new();
    attrs.insert(GLOBAL_SCRATCH_ATTR.to_string(), Attr::Int(maps.len() as i64 * TENSORMAP_BYTES as i64));
    f.arg_attrs.push(attrs);
    sites.len()
}

/// Bytes of a CUDA tensor map (CUtensorMap): a host map passed by value,
/// and one device-built map's slot in the global scratch.
pub const TENSORMAP_BYTES: u32 = 128;

fn const_value(f: &Function, v: Value) -> Option<&Attr> {
    let op = f.defining_op(v)?;
    let d = &f.ops[op];
    if d.opcode == Opcode::Const { d.attrs.get("value") } else { None }
}

fn is_const_one(f: &Function, v: Value) -> bool {
    const_value(f, v).and_then(Attr::as_int) == Some(1)
}

/// Appends the i64 `tensormap` argument for the descriptor based at `arg`.
fn add_tensormap_arg(types: &mut tritium_ir::TypeTable, f: &mut Function, arg: usize) -> Value {
    let block = descriptor_block(f, arg).unwrap_or_default();
    let base_ty = f.value_type(f.args()[arg]);
    let eb = types.pointee_bytes(base_ty).unwrap_or(1);
    let tb = tma_box(eb, &block).expect("claimable() checked the box");
    let i64t = types.scalar(ScalarKind::I64);
    let entry = f.entry_block();
    let index = f.blocks[entry].args.len() as u32;
    let v = f.values.push(ValueData { ty: i64t, def: ValueDef::BlockArg(entry, index) });
    f.blocks[entry].args.push(v);
    let mut attrs = Attrs::new();
    attrs.insert(TENSORMAP_ATTR.to_string(), Attr::Bool(true));
    attrs.insert("tensormap_of".to_string(), Attr::Int(arg as i64));
    attrs.insert("tensormap_box".to_string(), Attr::IntArray(tb.box_dims.iter().map(|&d| d as i64).collect()));
    attrs.insert("tensormap_swizzle".to_string(), Attr::Int(tb.swizzle_bytes as i64));
    f.arg_attrs.push(attrs);
    v
}

/// The tensor map arguments of a kernel: (argument index, the base argument
/// it describes, box, swizzle bytes), in argument order.
pub fn tensormap_args(f: &Function) -> Vec<(usize, usize, Vec<u32>, u32)> {
    f.arg_attrs
        .iter()
        .enumerate()
        .filter(|(_, a)| a.get(TENSORMAP_ATTR).and_then(Attr::as_bool) == Some(true))
        .map(|(i, a)| {
            let of = a.get("tensormap_of").and_then(Attr::as_int).unwrap_or(0) as usize;
            let bx = a.get("tensormap_box").and_then(Attr::as_int_array).unwrap_or(&[]).iter().map(|&d| d as u32).collect();
            let sw = a.get("tensormap_swizzle").and_then(Attr::as_int).unwrap_or(0) as u32;
            (i, of, bx, sw)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_follow_the_nvmma_swizzle() {
        // fp16 64 columns: one 128-byte row, one box
        assert_eq!(tma_box(2, &[128, 64]).unwrap(), TmaBox { box_dims: vec![128, 64], swizzle_bytes: 128, copies: 1 });
        // fp16 128 columns: two 64-column boxes
        assert_eq!(tma_box(2, &[64, 128]).unwrap(), TmaBox { box_dims: vec![64, 64], swizzle_bytes: 128, copies: 2 });
        // fp32 8 columns: 32-byte rows
        assert_eq!(tma_box(4, &[16, 8]).unwrap().swizzle_bytes, 32);
        // 16-byte rows: no swizzle
        assert_eq!(tma_box(2, &[32, 8]).unwrap().swizzle_bytes, 0);
        assert!(tma_box(4, &[16, 2]).unwrap_err().contains("8 bytes"));
        assert!(tma_box(2, &[512, 64]).unwrap_err().contains("512 rows"));
        assert!(tma_box(2, &[4, 256]).unwrap_err().contains("multiple of 8"));
        assert!(tma_box(2, &[4, 4, 64]).is_err());
    }
}
