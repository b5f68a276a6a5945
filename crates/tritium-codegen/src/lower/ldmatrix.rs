//! `ldmatrix`: one warp instruction loads up to four 8x8 matrices of 16-bit
//! elements from shared memory, each lane supplying the address of one
//! 16-byte row, and hands every lane 32 bits of each matrix. mma.sync's
//! operand fragments are that arrangement wherever the shared layout keeps a
//! fragment's 16-byte rows whole and aligned; `LdmatrixPlan::new` checks it
//! from the two linear maps (operand registers to tile elements, elements
//! to shared offsets), and the dot falls back to `ld.shared` where it fails.
use std::collections::HashMap;

use inkwell::values::{BasicValueEnum, IntValue};
use tritium_transforms::layout::linear::combine;
use tritium_transforms::LinearLayout;

use super::shared::{SharedBuffer, ThreadOffset};
use super::Lowering;
use crate::error::{CodegenError, Result};

/// How groups of a dot operand's registers load with one `ldmatrix` each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LdmatrixPlan {
    /// `.trans`: a lane's 32 bits are two elements of one column of the
    /// stored rows (16-bit B kept N-contiguous).
    pub trans: bool,
    /// Which tile element each lane's row address points at, as a layout of
    /// the operand's shape: lane bits 0..3 pick the row of a matrix, bits 3
    /// and 4 the matrix (0 past the matrices loaded), warps as the operand's.
    pub addr: LinearLayout,
    /// Register-index masks: matrix j holds the word at register
    /// `first ^ combine(selectors, j)` of the group starting at `first`.
    pub selectors: Vec<u32>,
    /// Elements one 32-bit word holds (the operand's k_width).
    pub k_width: u32,
}

impl LdmatrixPlan {
    /// The plan for reading registers of operand layout `lin` stored at
    /// element offsets `bases` (per row-major index bit) with `elem_bytes`
    /// elements, 1, 2 or 4 matrices per instruction (`selectors` picks the
    /// words beside the first); None where ldmatrix cannot give the
    /// registers `ld.shared` would. A lane holds k_width = 4 / elem_bytes
    /// elements per word, the first in the low bits (`pack_b32`'s order).
    pub fn new(lin: &LinearLayout, bases: &[u32], elem_bytes: u32, selectors: &[u32]) -> Option<LdmatrixPlan> {
        if !matches!(elem_bytes, 1 | 2 | 4) || lin.lane.len() != 5 || selectors.len() > 2 {
            return None;
        }
        let k_width = 4 / elem_bytes;
        let e = k_width.trailing_zeros() as usize;
        if lin.reg.len() < e || selectors.iter().any(|&s| s == 0 || s % k_width != 0 || s >> lin.reg.len() != 0) {
            return None;
        }
        let offset = |basis: u32| combine(bases, basis);
        let powers = |v: &[u32]| v.iter().enumerate().all(|(i, &b)| offset(b) == 1 << i);
        // a lane's 32 bits: without .trans, k_width elements then lanes 0-1
        // walk one 16-byte row; with it (16-bit only) lanes 2-4 walk the row
        // and the word's two elements, then lanes 0-1, step through rows
        let mut within: Vec<u32> = lin.reg[..e].to_vec();
        within.extend_from_slice(&lin.lane[..2]);
        let (trans, rows) = if powers(&within) {
            (false, lin.lane[2..].to_vec())
        } else if elem_bytes == 2 && powers(&lin.lane[2..]) {
            (true, vec![lin.reg[0], lin.lane[0], lin.lane[1]])
        } else {
            return None;
        };
        // every row starts on a 16-byte boundary: no other basis moves
        // inside a row (the buffer itself is 16-byte aligned)
        let row_elems = 16 / elem_bytes;
        let aligned = |b: &u32| offset(*b) % row_elems == 0;
        let rest = if trans { &lin.reg[1..] } else { &lin.reg[e..] };
        if !(rows.iter().all(aligned) && rest.iter().all(aligned) && lin.warp.iter().all(aligned)) {
            return None;
        }
        let mut lane = rows;
        lane.extend(selectors.iter().map(|&s| combine(&lin.reg, s)));
        lane.resize(5, 0);
        let addr = LinearLayout { shape: lin.shape.clone(), reg: Vec::new(), lane, warp: lin.warp.clone() };
        Some(LdmatrixPlan { trans, addr, selectors: selectors.to_vec(), k_width })
    }

    /// The registers (element indices of the operand layout) of matrix `j`'s
    /// word in the group starting at register `first`.
    #[cfg(test)]
    pub fn word(&self, first: u32, j: u32) -> u32 {
        first ^ combine(&self.selectors, j)
    }

    pub fn matrices(&self) -> u32 {
        1 << self.selectors.len()
    }
}

/// One operand's ldmatrix reads in one op: the plan, the thread's part of
/// its row addresses, and the row address per distinct part of a group's
/// constant that overlaps the thread's bits (see `shared_access`).
pub(super) struct LdmatrixReader<'c> {
    plan: LdmatrixPlan,
    thread: ThreadOffset<'c>,
    base: IntValue<'c>,
    at: HashMap<u32, IntValue<'c>>,
}

impl LdmatrixReader<'_> {
    pub fn matrices(&self) -> u32 {
        self.plan.matrices()
    }
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// A reader of `buf` with `plan` (operand registers of layout `lin`).
    pub(super) fn ldmatrix_reader(&self, buf: &SharedBuffer<'c>, plan: LdmatrixPlan) -> Result<LdmatrixReader<'c>> {
        let thread = self.shared_thread_offset(&plan.addr, &buf.bases)?;
        let base = self.llvm.builder.build_ptr_to_int(buf.ptr, self.llvm.context.i32_type(), "")?;
        Ok(LdmatrixReader { plan, thread, base, at: HashMap::new() })
    }

    /// The words of registers `plan.word(first, j)` for every matrix j,
    /// with one `ldmatrix` (`lin` is the operand's register layout).
    pub(super) fn ldmatrix(&self, r: &mut LdmatrixReader<'c>, buf: &SharedBuffer<'c>, lin: &LinearLayout, first: u32) -> Result<Vec<IntValue<'c>>> {
        let b = &self.llvm.builder;
        let c = combine(&buf.bases, combine(&lin.reg, first));
        let over = c & r.thread.bits;
        let at = match r.at.get(&over) {
            Some(&v) => v,
            None => {
                let idx = b.build_xor(r.thread.value, self.i32_const(over as u64), "")?;
                let v = b.build_int_add(r.base, b.build_int_mul(idx, self.i32_const(buf.elem_bytes as u64), "")?, "")?;
                r.at.insert(over, v);
                v
            }
        };
        // the rest of the constant is an immediate of the address operand
        let imm = (c & !r.thread.bits) * buf.elem_bytes;
        let n = r.plan.matrices() as usize;
        let outs: Vec<String> = (0..n).map(|i| format!("${i}")).collect();
        let asm = format!(
            "ldmatrix.sync.aligned.m8n8.x{n}{}.shared.b16 {{{}}}, [${n}{}];",
            if r.plan.trans { ".trans" } else { "" },
            outs.join(", "),
            if imm == 0 { String::new() } else { format!("+{imm}") }
        );
        // it reads shared memory: without the clobber LLVM takes the asm for
        // a pure function of its address and hoists a loop-invariant one out
        // of the loop, above the stores and bar.sync it must follow
        let cons = format!("{},r,~{{memory}}", vec!["=r"; n].join(","));
        let i32t = self.llvm.context.i32_type();
        let ret = if n == 1 { i32t.into() } else { self.llvm.context.struct_type(&vec![i32t.into(); n], false).into() };
        let args: [BasicValueEnum<'c>; 1] = [at.into()];
        let out = self.llvm.inline_asm(&asm, &cons, Some(ret), &args, false)?.ok_or_else(|| CodegenError::Llvm("ldmatrix returned nothing".into()))?;
        if n == 1 {
            return Ok(vec![out.into_int_value()]);
        }
        let s = out.into_struct_value();
        (0..n as u32).map(|j| Ok(b.build_extract_value(s, j, "")?.into_int_value())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tritium_transforms::layout::{DotOperand, Mma, Operand, SharedLayout};

    /// What ldmatrix hands lane `t` in word `j` (element offsets, first
    /// element in the low bits), modelled from the PTX ISA: lane l's address
    /// is row l % 8 of matrix l / 8.
    fn hardware(plan: &LdmatrixPlan, row: &dyn Fn(u32) -> u32, t: u32, j: u32) -> Vec<u32> {
        let kw = plan.k_width;
        if plan.trans {
            (0..2).map(|i| row(8 * j + 2 * (t % 4) + i) + t / 4).collect()
        } else {
            (0..kw).map(|i| row(8 * j + t / 4) + (t % 4) * kw + i).collect()
        }
    }

    /// Every register ldmatrix fills holds the element `ld.shared` would
    /// load for it, every row address is 16-byte aligned, and the 8 rows of
    /// each matrix fall in 8 different 16-byte bank groups.
    fn check(lin: &LinearLayout, smem: &SharedLayout, elem_bytes: u32, selectors: &[u32], trans: bool) {
        let bases = smem.bases(&lin.shape);
        let plan = LdmatrixPlan::new(lin, &bases, elem_bytes, selectors).unwrap_or_else(|| panic!("no ldmatrix for {lin:?} in {smem:?}"));
        assert_eq!(plan.trans, trans);
        let kw = plan.k_width;
        let words = lin.num_regs() / kw;
        let groups: Vec<u32> = (0..words).map(|w| w * kw).filter(|&r| (0..plan.matrices()).all(|j| plan.word(r, j) >= r)).collect();
        let mut covered = std::collections::HashSet::new();
        for warp in 0..lin.num_warps() {
            for &first in &groups {
                let row = |l: u32| combine(&bases, combine(&plan.addr.lane, l) ^ combine(&plan.addr.warp, warp) ^ combine(&lin.reg, first));
                for j in 0..plan.matrices() {
                    let starts: std::collections::BTreeSet<u32> = (0..8).map(|r| row(8 * j + r)).collect();
                    assert!(starts.iter().all(|s| s * elem_bytes % 16 == 0), "unaligned row");
                    let groups: std::collections::HashSet<u32> = starts.iter().map(|s| s * elem_bytes / 16 % 8).collect();
                    assert_eq!(groups.len(), starts.len(), "bank conflict: rows {starts:?} of {smem:?}");
                }
                for t in 0..32 {
                    for j in 0..plan.matrices() {
                        let reg = plan.word(first, j);
                        covered.insert(reg);
                        let want: Vec<u32> = (0..kw).map(|i| combine(&bases, lin.index(reg + i, t, warp))).collect();
                        assert_eq!(hardware(&plan, &row, t, j), want, "warp {warp} lane {t} register {reg}");
                    }
                }
            }
        }
        assert_eq!(covered.len() as u32, words, "some words never loaded");
    }

    /// A and B of a dot of `m x n x k` with `warps`, staged as layout
    /// assignment stages them for mma.sync (`dot_layouts`).
    fn operands(warps: &[u32], shape: [u32; 3], batch: Option<u32>, elem_bytes: u32, b_k_major: bool) -> [(LinearLayout, SharedLayout); 2] {
        let [m, n, k] = shape;
        let mma = Mma { version: 2, warps_per_cta: warps.to_vec(), instr_shape: vec![16, 8] };
        let kw = 4 / elem_bytes;
        let lead: Vec<u32> = batch.into_iter().collect();
        let (a_shape, b_shape) = ([lead.clone(), vec![m, k]].concat(), [lead, vec![k, n]].concat());
        let rank = a_shape.len();
        let order: Vec<usize> = (0..rank).rev().collect();
        let mut b_order = order.clone();
        if b_k_major {
            b_order.swap(0, 1);
        }
        let op = |which| DotOperand { parent: mma.clone(), operand: which, k_width: kw };
        [
            (op(Operand::A).linear(&a_shape), SharedLayout::for_ldmatrix(&a_shape, elem_bytes, order)),
            (op(Operand::B).linear(&b_shape), SharedLayout::for_ldmatrix(&b_shape, elem_bytes, b_order)),
        ]
    }

    #[test]
    fn fragments_match_the_scalar_loads() {
        for (warps, shape, batch) in [
            (vec![2u32, 2], [128u32, 128, 32], None),
            (vec![4, 1], [64, 16, 64], None),
            (vec![1, 4], [16, 128, 16], None),
            (vec![2, 2, 1], [16, 32, 32], Some(4)),
        ] {
            let rn = (shape[1] / (8 * warps[warps.len() - 1])).max(1);
            for eb in [1u32, 2, 4] {
                let kw = 4 / eb;
                let k = (shape[2] / 16 * 8 * kw).max(8 * kw);
                let shape = [shape[0], shape[1], k];
                let rk = k / (8 * kw);
                let b_sel = if rn >= 2 { vec![kw, 2 * kw * rk] } else { vec![kw] };
                for b_k_major in [false, true] {
                    let [(a, sa), (b, sb)] = operands(&warps, shape, batch, eb, b_k_major);
                    check(&a, &sa, eb, &[kw, 2 * kw], false);
                    if eb == 2 || b_k_major {
                        check(&b, &sb, eb, &b_sel, !b_k_major);
                    } else {
                        // 8- and 32-bit B kept N-contiguous: ldmatrix only transposes 16-bit elements
                        assert!(LdmatrixPlan::new(&b, &sb.bases(&b.shape), eb, &b_sel).is_none());
                    }
                }
            }
        }
    }

    #[test]
    fn unswizzled_rows_are_refused_where_they_split() {
        // A 16-bit tile stored N-contiguous (the wrong dim) cannot be read without .trans,
        // and one whose rows are not 16-byte aligned not at all
        let mma = Mma { version: 2, warps_per_cta: vec![1, 1], instr_shape: vec![16, 8] };
        let a = DotOperand { parent: mma, operand: Operand::A, k_width: 2 }.linear(&[16, 16]);
        let col_major = SharedLayout::Swizzled { vec: 1, per_phase: 1, max_phase: 1, order: vec![0, 1] };
        let plan = LdmatrixPlan::new(&a, &col_major.bases(&[16, 16]), 2, &[2, 4]).expect("A stored M-contiguous reads with .trans");
        assert!(plan.trans);
        let odd = SharedLayout::Swizzled { vec: 4, per_phase: 1, max_phase: 4, order: vec![1, 0] };
        assert!(LdmatrixPlan::new(&a, &odd.bases(&[16, 16]), 2, &[2, 4]).is_none());
    }
}
