//! Shared memory, planned on the IR before lowering: which ops need scratch
//! (and how much), and which values live in shared memory (a `Shared`
//! layout: dot operands staged for tensor-core loads), so the module's
//! allocation gives every buffer its real offset before any LLVM is built.
//! The sizes are computed here once; lowering asks the same functions for
//! the arrangement of its scratch and addresses it at the planned offset.
use std::collections::HashMap;

use tritium_analysis::allocation::op_positions;
use tritium_analysis::{BufferKind, BufferRequest, Liveness};
use tritium_ir::{Attr, Function, Module, Op, Opcode, ScalarKind, Value};
use tritium_transforms::layout::{Layout, SharedLayout};
use tritium_transforms::LayoutMap;

use crate::error::{CodegenError, Result};
use crate::layout::{dim_mask, TensorLayout};

/// Bytes one element of a tensor of `kind` takes in shared memory (`i1` a
/// byte, pointers 8).
pub fn smem_elem_bytes(kind: Option<ScalarKind>) -> u32 {
    match kind {
        Some(ScalarKind::I1) => 1,
        Some(k) => k.bits().div_ceil(8),
        None => 8,
    }
}

/// A scratch area split into one 16-byte-aligned slot per operand.
#[derive(Clone, Debug)]
pub struct Slots {
    pub starts: Vec<u32>,
    pub total: u32,
}

impl Slots {
    pub fn new(sizes: impl IntoIterator<Item = u32>) -> Slots {
        let mut starts = Vec::new();
        let mut total = 0u32;
        for s in sizes {
            starts.push(total);
            total += s.next_multiple_of(16);
        }
        Slots { starts, total }
    }
}

/// A reduction's cross-warp partials: one slot per operand of
/// `out_numel * warps` elements; None when no warp bits move along the axis.
pub fn reduce_slots(tl: &TensorLayout, axis: usize, elem_bytes: &[u32]) -> Option<(u32, Slots)> {
    let along = dim_mask(tl.shape(), axis);
    let warps = 1u32 << tl.lin.warp.iter().filter(|&&b| b & along != 0).count();
    if warps == 1 {
        return None;
    }
    let out_numel = (tl.numel() / tl.shape()[axis]).max(1);
    Some((warps, Slots::new(elem_bytes.iter().map(|&eb| out_numel * warps * eb))))
}

/// A scan's per-warp totals: one slot per operand of `rows * reps * warps`
/// elements (blocked view); None within one warp.
pub fn scan_slots(tl: &TensorLayout, axis: usize, elem_bytes: &[u32]) -> Option<Slots> {
    let b = tl.blocked()?;
    let ra = *b.layout.logical_dims().get(axis)?;
    let (warps, reps) = (b.useful_warps(ra), b.regs[ra] / b.spt[ra]);
    if warps <= 1 {
        return None;
    }
    let rows = (b.numel / b.shape[axis]).max(1);
    Some(Slots::new(elem_bytes.iter().map(|&eb| rows * reps * warps * eb)))
}

/// Whether a register-to-register conversion moves data between threads.
pub fn convert_needs_scratch(from: &TensorLayout, to: &TensorLayout) -> bool {
    from.lin != to.lin && from.lin.register_permutation_to(&to.lin).is_none()
}

/// Elements a layout conversion's scratch leaves after each row (its last
/// dim): 16 bytes where rows are whole multiples of 128 bytes, so that rows
/// written at once start on different banks. A tensor-core accumulator's
/// warp writes 8 rows by 4 column pairs per store: 8-way bank conflicts
/// unpadded, none padded; 16 contiguous bytes per thread stay contiguous.
pub fn convert_row_pad(shape: &[u32], elem_bytes: u32) -> u32 {
    let Some((&cols, lead)) = shape.split_last() else { return 0 };
    if lead.iter().product::<u32>() < 2 || (cols * elem_bytes) % 128 != 0 {
        return 0;
    }
    (16 / elem_bytes).max(1)
}

/// Scratch bytes of a layout conversion: its rows, padded where the target
/// pads them (`Target::pads_conversion_rows`).
pub fn convert_scratch_bytes(shape: &[u32], elem_bytes: u32, pad_rows: bool) -> u32 {
    let numel: u32 = shape.iter().product();
    let rows = shape.split_last().map_or(1, |(_, lead)| lead.iter().product::<u32>());
    let pad = if pad_rows { convert_row_pad(shape, elem_bytes) } else { 0 };
    (numel + rows * pad) * elem_bytes
}

/// Alignment a shared layout needs: the NVMMA swizzles XOR address bits up
/// to 8 rows of `swizzle_bytes`, so their tiles start on that boundary.
pub fn shared_align(l: &SharedLayout) -> u32 {
    match l {
        // TMA copies land on (and leave from) 128-byte boundaries
        SharedLayout::Nvmma { swizzle_bytes, .. } => (8 * swizzle_bytes).max(128),
        _ => 16,
    }
}

/// One function's shared-memory needs.
#[derive(Clone, Debug, Default)]
pub struct FuncSmem {
    /// Scratch bytes per op that needs any.
    pub scratch: HashMap<Op, u32>,
    /// Explicit buffers: values held in shared memory, (value, bytes, align).
    pub buffers: Vec<(Value, u32, u32)>,
}

impl FuncSmem {
    /// The function's own allocation requests (calls' virtual buffers are
    /// added by `ModuleAllocation`).
    pub fn requests(&self, func: &Function) -> std::result::Result<Vec<BufferRequest>, String> {
        let pos = op_positions(func);
        let mut out: Vec<BufferRequest> = self
            .scratch
            .iter()
            .map(|(&op, &bytes)| BufferRequest { op, kind: BufferKind::Scratch, bytes, align: 16, start: pos[&op], end: pos[&op] })
            .collect();
        out.extend(Liveness::compute(func).buffer_requests(func, &self.buffers)?);
        Ok(out)
    }
}

/// The shared memory every op and value of `func` needs, from its layouts;
/// `pad_rows`: the target pads conversion rows (`Target::pads_conversion_rows`).
pub fn plan_function(module: &Module, func: &Function, layouts: &LayoutMap, pad_rows: bool) -> Result<FuncSmem> {
    let mut plan = FuncSmem::default();
    let tl = |v: Value| -> Option<TensorLayout> {
        let dims = module.types.dims(func.value_type(v));
        if dims.is_empty() {
            return None;
        }
        TensorLayout::new(layouts.of(v)?, dims)
    };
    let eb = |v: Value| smem_elem_bytes(module.types.scalar_kind(func.value_type(v)));
    let missing = |op: Op| CodegenError::Internal(format!("smem plan: `{}` has an operand without a layout", func.ops[op].opcode));
    for (_, op) in func.ops_preorder() {
        let d = &func.ops[op];
        let bytes = match d.opcode {
            Opcode::ConvertLayout => {
                let (src, res) = (d.operands[0], d.results[0]);
                match layouts.of(res) {
                    Some(Layout::Shared(s)) => {
                        let numel: u32 = module.types.dims(func.value_type(res)).iter().product();
                        plan.buffers.push((res, numel * eb(res), shared_align(s)));
                        0
                    }
                    // read straight out of the source's buffer
                    _ if layouts.of(src).is_some_and(Layout::is_shared) => 0,
                    _ => {
                        let (from, to) = (tl(src).ok_or_else(|| missing(op))?, tl(res).ok_or_else(|| missing(op))?);
                        if convert_needs_scratch(&from, &to) {
                            convert_scratch_bytes(to.shape(), eb(src), pad_rows)
                        } else {
                            0
                        }
                    }
                }
            }
            // a multi-stage buffer lives from its allocation to its last use
            Opcode::LocalAlloc => {
                let res = d.results[0];
                if let Some(Layout::Shared(s)) = layouts.of(res) {
                    let numel: u32 = module.types.dims(func.value_type(res)).iter().product();
                    plan.buffers.push((res, numel * eb(res), shared_align(s)));
                }
                0
            }
            // the tile the TMA copies land in, then its mbarrier
            Opcode::TmaLoad => {
                let res = d.results[0];
                if let Some(Layout::Shared(s)) = layouts.of(res) {
                    let numel: u32 = module.types.dims(func.value_type(res)).iter().product();
                    plan.buffers.push((res, numel * eb(res) + crate::lower::MBARRIER_BYTES, shared_align(s)));
                }
                0
            }
            Opcode::Reduce => {
                let axis = d.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
                let t = tl(d.operands[0]).ok_or_else(|| missing(op))?;
                let sizes: Vec<u32> = d.operands.iter().map(|&v| eb(v)).collect();
                reduce_slots(&t, axis, &sizes).map_or(0, |(_, s)| s.total)
            }
            Opcode::Scan => {
                let axis = d.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
                let t = tl(d.operands[0]).ok_or_else(|| missing(op))?;
                let sizes: Vec<u32> = d.operands.iter().map(|&v| eb(v)).collect();
                scan_slots(&t, axis, &sizes).map_or(0, |s| s.total)
            }
            Opcode::Reshape | Opcode::Join | Opcode::Split | Opcode::Cat => {
                d.operands.iter().map(|&v| module.types.dims(func.value_type(v)).iter().product::<u32>() * eb(v)).sum()
            }
            Opcode::Gather => module.types.dims(func.value_type(d.operands[0])).iter().product::<u32>() * eb(d.operands[0]),
            Opcode::Histogram => d.attrs.get("num_bins").and_then(Attr::as_int).unwrap_or(0) as u32 * 4,
            // a dot without tensor cores stages both operands in scratch
            Opcode::Dot if !matches!(layouts.of(d.results[0]), Some(Layout::Mma(_))) => {
                let size = |v: Value| module.types.dims(func.value_type(v)).iter().product::<u32>() * eb(v);
                Slots::new([size(d.operands[0]), size(d.operands[1])]).total
            }
            _ => 0,
        };
        if bytes > 0 {
            plan.scratch.insert(op, bytes);
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tritium_transforms::layout::{Blocked, LinearLayout, Mma};

    /// The most distinct 4-byte words of one bank that one access of a warp
    /// touches (1: conflict-free), over every access a thread of `l` makes:
    /// `vec` consecutive registers at once, stored row-major with rows of
    /// `stored_cols` elements. A warp's accesses of 8 and 16 bytes go in
    /// phases of 16 and 8 lanes (128 bytes each).
    fn bank_ways(l: &LinearLayout, vec: u32, stored_cols: u32, eb: u32) -> u32 {
        let bytes = vec * eb;
        let phase = 32 / (bytes / 4).max(1);
        let mut worst = 0;
        for warp in 0..l.num_warps() {
            for r in (0..l.num_regs()).step_by(vec as usize) {
                for lanes in (0..32).collect::<Vec<u32>>().chunks(phase as usize) {
                    let mut words: HashMap<u32, Vec<u32>> = HashMap::new();
                    for &lane in lanes {
                        let c = l.coord(r, lane, warp);
                        let at = (c[0] * stored_cols + c[1]) * eb;
                        for w in (at / 4)..(at + bytes).div_ceil(4) {
                            let bank = words.entry(w % 32).or_default();
                            if !bank.contains(&w) {
                                bank.push(w);
                            }
                        }
                    }
                    worst = worst.max(words.values().map(|w| w.len() as u32).max().unwrap_or(0));
                }
            }
        }
        worst
    }

    #[test]
    fn accumulator_rows_are_padded_onto_different_banks() {
        // the epilogue of a 128x128 fp16 matmul: the wgmma (or mma.sync)
        // accumulator, converted to f16, goes to the blocked layout of its
        // 16-byte global stores through scratch
        let shape = [128u32, 128];
        let pad = convert_row_pad(&shape, 2);
        assert_eq!(pad, 8);
        assert_eq!(convert_scratch_bytes(&shape, 2, true), 128 * 136 * 2);
        assert_eq!(convert_scratch_bytes(&shape, 2, false), 128 * 128 * 2);
        for mma in [Mma { version: 3, warps_per_cta: vec![4, 1], instr_shape: vec![64, 128] },
                    Mma { version: 2, warps_per_cta: vec![2, 2], instr_shape: vec![16, 8] }] {
            let acc = Layout::Mma(mma).linear(&shape).unwrap();
            // a thread's two adjacent columns are one 4-byte store
            assert_eq!(bank_ways(&acc, 2, 128, 2), 8);
            assert_eq!(bank_ways(&acc, 2, 128 + pad, 2), 1);
        }
        let out = Layout::Blocked(Blocked::for_shape(&shape, 2, 4, 32, 16)).linear(&shape).unwrap();
        assert_eq!(out.contiguous_regs(1), 8);
        assert_eq!(bank_ways(&out, 8, 128 + pad, 2), 1);
    }

    #[test]
    fn short_rows_and_vectors_are_not_padded() {
        assert_eq!(convert_row_pad(&[1024], 4), 0);
        assert_eq!(convert_row_pad(&[1, 256], 2), 0);
        assert_eq!(convert_row_pad(&[64, 48], 2), 0);
        assert_eq!(convert_row_pad(&[64, 32], 4), 4);
        assert_eq!(convert_row_pad(&[2, 4, 16], 8), 2);
        assert_eq!(convert_scratch_bytes(&[64, 48], 2, true), 64 * 48 * 2);
    }
}
