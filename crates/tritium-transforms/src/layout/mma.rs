//! Tensor-core layouts: the accumulators of `mma.sync` (version 2, sm_80+)
//! and `wgmma` (version 3, sm_90a), and the register layouts of their A and B
//! operands (dot operands), each as a `LinearLayout` for a given shape.
//!
//! Per warp, an m16n8 accumulator tile puts element (g + 8i, 2t + j) in
//! register 2i + j of lane 4g + t (g = lane / 4, t = lane % 4); A and B
//! fragments follow the PTX ISA's fragment tables for each element width
//! (`k_width` elements of one row share a 32-bit register: 1 for tf32, 2 for
//! 16-bit, 4 for 8-bit types). Warps are numbered along M first, so the four
//! warps of a wgmma warpgroup are consecutive and stack 16-row slices.
//! Repetitions (a tile larger than the warps cover) are register bits above
//! the instruction's own: along N first, then M (and K for operands), then
//! the batch dim of 3-D dots.
use super::linear::{dim_mask, flatten, LinearLayout};

/// `Mma::version` of AMD's matrix instructions (the NVIDIA ones are 2 and 3).
pub const MFMA: u32 = 4;
pub const WMMA: u32 = 5;

/// A tensor-core accumulator layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mma {
    /// 2: mma.sync m16n8kK; 3: wgmma m64nNkK (per warpgroup); 4: AMD MFMA
    /// 16x16x16 (CDNA, wave64); 5: AMD WMMA 16x16x16 (RDNA 3, wave32).
    pub version: u32,
    /// Warps along each dim of the (2-D or batched 3-D) result.
    pub warps_per_cta: Vec<u32>,
    /// The instruction's result tile [m, n] per warp (v2: [16, 8]) or per
    /// warpgroup (v3: [64, n]).
    pub instr_shape: Vec<u32>,
}

/// Which operand of a dot a register layout feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    A,
    B,
}

/// The register layout of a dot operand for an `Mma` parent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DotOperand {
    pub parent: Mma,
    pub operand: Operand,
    /// Consecutive K elements one register holds (32 bits / element bits, 1 for tf32).
    pub k_width: u32,
}

/// A single-bit basis: coordinate `2^k` along `dim`, or 0 when it wraps past the shape.
fn unit(shape: &[u32], dim: usize, value: u32) -> u32 {
    if value >= shape[dim] {
        return 0;
    }
    let mut c = vec![0; shape.len()];
    c[dim] = value;
    flatten(shape, &c)
}

/// Bases for `count` doublings of `step` along `dim` (the bits that
/// repeat a tile of `step` elements until the dim is covered).
fn doublings(shape: &[u32], dim: usize, step: u32, until: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut v = step;
    while v < until {
        out.push(unit(shape, dim, v));
        v *= 2;
    }
    out
}

impl Mma {
    /// Rows (M) and columns (N) one CTA-wide repetition covers.
    fn cover(&self) -> (u32, u32) {
        let r = self.warps_per_cta.len();
        let (wm, wn) = (self.warps_per_cta[r - 2], self.warps_per_cta[r - 1]);
        match self.version {
            3 => (16 * wm, self.instr_shape[1] * wn),
            MFMA | WMMA => (16 * wm, 16 * wn),
            _ => (16 * wm, 8 * wn),
        }
    }

    /// The warp-id bits: along M (16 rows each), then N, then the batch dim.
    fn warp_bases(&self, shape: &[u32], n_step: u32, m_zero: bool, n_zero: bool) -> Vec<u32> {
        let r = shape.len();
        let (m, n) = (r - 2, r - 1);
        let w = &self.warps_per_cta;
        let mut out = Vec::new();
        for i in 0..w[r - 2].trailing_zeros() {
            out.push(if m_zero { 0 } else { unit(shape, m, 16 << i) });
        }
        for i in 0..w[r - 1].trailing_zeros() {
            out.push(if n_zero { 0 } else { unit(shape, n, n_step << i) });
        }
        if r == 3 {
            for i in 0..w[0].trailing_zeros() {
                out.push(unit(shape, 0, 1 << i));
            }
        }
        out
    }

    /// The accumulator layout for a result of `shape` ([.., M, N]).
    pub fn linear(&self, shape: &[u32]) -> LinearLayout {
        if matches!(self.version, MFMA | WMMA) {
            return self.amd_linear(shape);
        }
        let r = shape.len();
        let (m, n) = (r - 2, r - 1);
        let (cover_m, cover_n) = self.cover();
        let mut reg = vec![unit(shape, n, 1), unit(shape, m, 8)];
        if self.version == 3 {
            // the n8 chunks of one wgmma instruction
            reg.extend(doublings(shape, n, 8, self.instr_shape[1].min(shape[n])));
        }
        reg.extend(doublings(shape, n, cover_n, shape[n]));
        reg.extend(doublings(shape, m, cover_m, shape[m]));
        if r == 3 {
            reg.extend(doublings(shape, 0, self.warps_per_cta[0], shape[0]));
        }
        let lane = vec![unit(shape, n, 2), unit(shape, n, 4), unit(shape, m, 1), unit(shape, m, 2), unit(shape, m, 4)];
        let n_step = if self.version == 3 { self.instr_shape[1] } else { 8 };
        LinearLayout { shape: shape.to_vec(), reg, lane, warp: self.warp_bases(shape, n_step, false, false) }
    }

    /// The 16x16 accumulator tile of MFMA (wave64: lane l, register j hold
    /// (4 * (l / 16) + j, l % 16)) or WMMA (wave32: lane l, register j hold
    /// (2j + l / 16, l % 16)), then N, M and batch repetitions.
    fn amd_linear(&self, shape: &[u32]) -> LinearLayout {
        let r = shape.len();
        let (m, n) = (r - 2, r - 1);
        let (cover_m, cover_n) = self.cover();
        let columns = [unit(shape, n, 1), unit(shape, n, 2), unit(shape, n, 4), unit(shape, n, 8)];
        let (mut reg, mut lane) = if self.version == MFMA {
            (vec![unit(shape, m, 1), unit(shape, m, 2)], columns.to_vec())
        } else {
            (vec![unit(shape, m, 2), unit(shape, m, 4), unit(shape, m, 8)], columns.to_vec())
        };
        if self.version == MFMA {
            lane.extend([unit(shape, m, 4), unit(shape, m, 8)]);
        } else {
            lane.push(unit(shape, m, 1));
        }
        reg.extend(doublings(shape, n, cover_n, shape[n]));
        reg.extend(doublings(shape, m, cover_m, shape[m]));
        if r == 3 {
            reg.extend(doublings(shape, 0, self.warps_per_cta[0], shape[0]));
        }
        LinearLayout { shape: shape.to_vec(), reg, lane, warp: self.warp_bases(shape, 16, false, false) }
    }
}

impl DotOperand {
    /// K elements one instruction consumes.
    pub fn k_instr(&self) -> u32 {
        match self.parent.version {
            // MFMA: four groups of 16 lanes, k_width each; WMMA: one lane holds all of K
            MFMA => 4 * self.k_width,
            WMMA => self.k_width,
            _ => 8 * self.k_width,
        }
    }

    /// The operand's register layout for `shape` ([.., M, K] for A, [.., K, N] for B).
    pub fn linear(&self, shape: &[u32]) -> LinearLayout {
        if matches!(self.parent.version, MFMA | WMMA) {
            return self.amd_linear(shape);
        }
        let r = shape.len();
        let (cover_m, cover_n) = self.parent.cover();
        let kw = self.k_width;
        let (k, other, other_step, other_cover) = match self.operand {
            Operand::A => (r - 1, r - 2, 8, cover_m),
            Operand::B => (r - 2, r - 1, 0, cover_n),
        };
        // within one instruction's fragment: the k_width elements of a register,
        // then (A only) rows +8, then the second half of K
        let mut reg = doublings(shape, k, 1, kw);
        if other_step != 0 {
            reg.push(unit(shape, other, other_step));
        }
        reg.push(unit(shape, k, 4 * kw));
        reg.extend(doublings(shape, k, self.k_instr(), shape[k]));
        reg.extend(doublings(shape, other, other_cover, shape[other]));
        if r == 3 {
            reg.extend(doublings(shape, 0, self.parent.warps_per_cta[0], shape[0]));
        }
        let lane = vec![unit(shape, k, kw), unit(shape, k, 2 * kw), unit(shape, other, 1), unit(shape, other, 2), unit(shape, other, 4)];
        // A is shared by the warps along N, B by those along M
        let (n_step, m_zero, n_zero) = match self.operand {
            Operand::A => (8, false, true),
            Operand::B => (8, true, false),
        };
        let mut l = LinearLayout { shape: shape.to_vec(), reg, lane, warp: self.parent.warp_bases(shape, n_step, m_zero, n_zero) };
        if self.operand == Operand::B && self.parent.version == 3 {
            l.warp = self.parent.warp_bases(shape, self.parent.instr_shape[1], true, false);
        }
        l
    }

    /// MFMA/WMMA operand fragments: lane l holds row (A) or column (B) l % 16
    /// and, on MFMA, the k_width consecutive K elements from k_width * (l / 16);
    /// on WMMA all 16 K elements (lanes 16..31 repeat lanes 0..15). Then K,
    /// then M (A) or N (B) repetitions; A is shared by the warps along N, B
    /// by those along M.
    fn amd_linear(&self, shape: &[u32]) -> LinearLayout {
        let r = shape.len();
        let (cover_m, cover_n) = self.parent.cover();
        let kw = self.k_width;
        let (k, other, other_cover) = match self.operand {
            Operand::A => (r - 1, r - 2, cover_m),
            Operand::B => (r - 2, r - 1, cover_n),
        };
        let mut reg = doublings(shape, k, 1, kw);
        reg.extend(doublings(shape, k, self.k_instr(), shape[k]));
        reg.extend(doublings(shape, other, other_cover, shape[other]));
        if r == 3 {
            reg.extend(doublings(shape, 0, self.parent.warps_per_cta[0], shape[0]));
        }
        let mut lane = vec![unit(shape, other, 1), unit(shape, other, 2), unit(shape, other, 4), unit(shape, other, 8)];
        if self.parent.version == MFMA {
            lane.extend([unit(shape, k, kw), unit(shape, k, 2 * kw)]);
        } else {
            lane.push(0);
        }
        let (m_zero, n_zero) = match self.operand {
            Operand::A => (false, true),
            Operand::B => (true, false),
        };
        LinearLayout { shape: shape.to_vec(), reg, lane, warp: self.parent.warp_bases(shape, 16, m_zero, n_zero) }
    }
}

/// The accumulator, A and B layouts of a dot on AMD matrix cores (`version`
/// MFMA or WMMA): f16/bf16 operands into f32, tiles of at least 16x16x16;
/// None otherwise (the dot runs as FMAs). Warps go where the tile has the
/// most 16x16 instruction tiles left; operands are staged in shared memory
/// with K contiguous (A row-major, B column-major): a lane's k_width K
/// elements of a fragment are then one `ds_read_b64` (MFMA) or two
/// `ds_read_b128` (WMMA) where B row-major took one `ds_read_u16` each.
pub fn amd_dot_layouts(version: u32, kinds: [tritium_ir::ScalarKind; 3], a_shape: &[u32], b_shape: &[u32], res_shape: &[u32], num_warps: u32) -> Option<(super::Layout, super::Layout, super::Layout)> {
    use tritium_ir::ScalarKind::{BF16, F16, F32};
    let [a, b, acc] = kinds;
    if a != b || !matches!(a, F16 | BF16) || acc != F32 {
        return None;
    }
    let rank = res_shape.len();
    let (m, n, k) = (res_shape[rank - 2], res_shape[rank - 1], a_shape[rank - 1]);
    if m < 16 || n < 16 || k < 16 || b_shape[rank - 2] != k {
        return None;
    }
    let warps = spread_warps(res_shape, num_warps, [16, 16]);
    let mma = Mma { version, warps_per_cta: warps, instr_shape: vec![16, 16] };
    let staged_a = super::SharedLayout::row_major(rank);
    // B [.., K, N]: K fastest, then N, then the batch
    let mut b_order = vec![rank - 2, rank - 1];
    b_order.extend((0..rank - 2).rev());
    let staged_b = super::SharedLayout::Swizzled { vec: 1, per_phase: 1, max_phase: 1, order: b_order };
    Some((super::Layout::Mma(mma), super::Layout::Shared(staged_a), super::Layout::Shared(staged_b)))
}

/// Whether every basis of `l` moves along at most one of `dims` only.
pub fn axis_pure(l: &LinearLayout) -> bool {
    let masks: Vec<u32> = (0..l.rank()).map(|d| dim_mask(&l.shape, d)).collect();
    l.reg.iter().chain(&l.lane).chain(&l.warp).all(|&b| masks.iter().filter(|&&m| b & m != 0).count() <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_once(l: &LinearLayout) {
        assert!(l.is_surjective_once(), "{l:?}");
        assert!(l.is_disjoint() && axis_pure(l));
    }

    #[test]
    fn mma_v2_accumulator_matches_the_ptx_fragment() {
        let mma = Mma { version: 2, warps_per_cta: vec![2, 2], instr_shape: vec![16, 8] };
        let l = mma.linear(&[64, 32]);
        check_once(&l);
        assert_eq!(l.num_regs() * 32 * 4, 64 * 32);
        // lane 4g + t, register 2i + j holds (g + 8i, 2t + j)
        for lane in 0..32 {
            for reg in 0..4 {
                let (g, t, i, j) = (lane / 4, lane % 4, reg / 2, reg % 2);
                assert_eq!(l.coord(reg, lane, 0), vec![g + 8 * i, 2 * t + j]);
            }
        }
        // warp 1 is 16 rows down, warp 2 eight columns right; register 4 is the next n tile
        assert_eq!(l.coord(0, 0, 1), vec![16, 0]);
        assert_eq!(l.coord(0, 0, 2), vec![0, 8]);
        assert_eq!(l.coord(4, 0, 0), vec![0, 16]);
    }

    #[test]
    fn wgmma_accumulator_stacks_warps_of_a_warpgroup() {
        let mma = Mma { version: 3, warps_per_cta: vec![8, 1], instr_shape: vec![64, 256] };
        let l = mma.linear(&[128, 256]);
        check_once(&l);
        assert_eq!(l.num_regs(), 128);
        assert_eq!(l.coord(0, 0, 1), vec![16, 0]);
        assert_eq!(l.coord(0, 0, 4), vec![64, 0]);
        // registers 4n .. 4n+3 are the n-th 8-column chunk
        assert_eq!(l.coord(4 * 5 + 3, 4 * 2 + 1, 0), vec![2 + 8, 40 + 2 + 1]);
    }

    #[test]
    fn operand_a_and_b_fragments() {
        let mma = Mma { version: 2, warps_per_cta: vec![2, 2], instr_shape: vec![16, 8] };
        for (kw, k) in [(1u32, 8u32), (2, 16), (4, 32)] {
            let a = DotOperand { parent: mma.clone(), operand: Operand::A, k_width: kw }.linear(&[32, 2 * k]);
            let b = DotOperand { parent: mma.clone(), operand: Operand::B, k_width: kw }.linear(&[2 * k, 16]);
            assert!(axis_pure(&a) && axis_pure(&b));
            // fragment registers: (row, k) of element e of register pair
            for lane in 0..32u32 {
                let (g, t) = (lane / 4, lane % 4);
                // A: first register holds row g, k = t*kw .. t*kw + kw
                for e in 0..kw {
                    assert_eq!(a.coord(e, lane, 0), vec![g, t * kw + e]);
                    assert_eq!(b.coord(e, lane, 0), vec![t * kw + e, g]);
                }
                // A: the next register is row g + 8, the one after k + 4*kw
                assert_eq!(a.coord(kw, lane, 0), vec![g + 8, t * kw]);
                assert_eq!(a.coord(2 * kw, lane, 0), vec![g, t * kw + 4 * kw]);
                assert_eq!(b.coord(kw, lane, 0), vec![t * kw + 4 * kw, g]);
            }
            // A is replicated over the warps along N, B over those along M
            assert_eq!(a.copy_mask(crate::layout::linear::HwDim::Warp), 0b10);
            assert_eq!(b.copy_mask(crate::layout::linear::HwDim::Warp), 0b01);
        }
    }

    #[test]
    fn mfma_accumulator_and_operands_match_the_cdna_tables() {
        let mma = Mma { version: MFMA, warps_per_cta: vec![2, 2], instr_shape: vec![16, 16] };
        let c = mma.linear(&[64, 64]);
        check_once(&c);
        assert_eq!(c.lane.len(), 6);
        let a = DotOperand { parent: mma.clone(), operand: Operand::A, k_width: 4 }.linear(&[64, 32]);
        let b = DotOperand { parent: mma.clone(), operand: Operand::B, k_width: 4 }.linear(&[32, 64]);
        for lane in 0..64u32 {
            for j in 0..4u32 {
                assert_eq!(c.coord(j, lane, 0), vec![4 * (lane / 16) + j, lane % 16]);
                assert_eq!(a.coord(j, lane, 0), vec![lane % 16, 4 * (lane / 16) + j]);
                assert_eq!(b.coord(j, lane, 0), vec![4 * (lane / 16) + j, lane % 16]);
            }
        }
        // register 4 of A is the next K step (16), of C the next N tile (32: two warps along N)
        assert_eq!(a.coord(4, 0, 0), vec![0, 16]);
        assert_eq!(c.coord(4, 0, 0), vec![0, 32]);
        assert_eq!(c.coord(0, 0, 1), vec![16, 0]);
        assert_eq!(a.copy_mask(crate::layout::linear::HwDim::Warp), 0b10);
    }

    #[test]
    fn amd_operands_are_staged_with_each_lanes_k_elements_contiguous() {
        use tritium_ir::ScalarKind::{F16, F32};
        for (version, kw, rank) in [(MFMA, 4, 2), (WMMA, 16, 2), (MFMA, 4, 3), (WMMA, 16, 3)] {
            let lead: Vec<u32> = if rank == 3 { vec![2] } else { vec![] };
            let dims = |x: u32, y: u32| [lead.clone(), vec![x, y]].concat();
            let (a_shape, b_shape, c_shape) = (dims(64, 32), dims(32, 64), dims(64, 64));
            let Some((crate::layout::Layout::Mma(mma), crate::layout::Layout::Shared(sa), crate::layout::Layout::Shared(sb))) =
                amd_dot_layouts(version, [F16, F16, F32], &a_shape, &b_shape, &c_shape, 4)
            else {
                panic!("no matrix-core layouts for version {version}")
            };
            for (operand, shape, staged) in [(Operand::A, &a_shape, &sa), (Operand::B, &b_shape, &sb)] {
                let lin = DotOperand { parent: mma.clone(), operand, k_width: kw }.linear(shape);
                let bases = staged.bases(shape);
                let offset = |c: &[u32]| -> u32 {
                    let flat = c.iter().zip(shape.iter()).fold(0, |acc, (&x, &d)| acc * d + x);
                    crate::layout::linear::combine(&bases, flat)
                };
                for warp in 0..lin.num_warps() {
                    for lane in 0..lin.num_lanes() {
                        for first in (0..lin.num_regs()).step_by(kw as usize) {
                            let at = offset(&lin.coord(first, lane, warp));
                            for j in 1..kw {
                                assert_eq!(offset(&lin.coord(first + j, lane, warp)), at + j, "{version} {operand:?} rank {rank}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn wmma_operands_repeat_in_the_upper_half_wave() {
        let mma = Mma { version: WMMA, warps_per_cta: vec![1, 1], instr_shape: vec![16, 16] };
        let c = mma.linear(&[16, 16]);
        check_once(&c);
        let a = DotOperand { parent: mma.clone(), operand: Operand::A, k_width: 16 }.linear(&[16, 16]);
        for lane in 0..32u32 {
            for j in 0..8u32 {
                assert_eq!(c.coord(j, lane, 0), vec![2 * j + lane / 16, lane % 16]);
            }
            for e in 0..16u32 {
                assert_eq!(a.coord(e, lane, 0), vec![lane % 16, e]);
            }
        }
        assert_eq!(a.copy_mask(crate::layout::linear::HwDim::Lane), 0b10000);
    }

    /// Every matrix-core instruction of a dot, as `lower/dot_amd.rs` tiles it
    /// (fragment registers at ((m * rk + k) * kw) for A, ((n * rk + k) * kw)
    /// for B, ((m * rn + n) * acc) for C), computes on the right elements: the
    /// hardware's row i, column j and k of each call map through our layouts
    /// to one global (row, column, k), and every product of the dot is made
    /// exactly once per copy.
    fn check_tiling(version: u32, warps: [u32; 2], m: u32, n: u32, k: u32) {
        let mma = Mma { version, warps_per_cta: warps.to_vec(), instr_shape: vec![16, 16] };
        let mfma = version == MFMA;
        let (kw, acc) = if mfma { (4, 4) } else { (16, 8) };
        let c = mma.linear(&[m, n]);
        let a = DotOperand { parent: mma.clone(), operand: Operand::A, k_width: kw }.linear(&[m, k]);
        let b = DotOperand { parent: mma.clone(), operand: Operand::B, k_width: kw }.linear(&[k, n]);
        let (rm, rn, rk) = ((m / (16 * warps[0])).max(1), (n / (16 * warps[1])).max(1), k / 16);
        let mut seen = std::collections::HashMap::new();
        for w in 0..warps[0] * warps[1] {
            for (mi, ni, ki) in (0..rm).flat_map(|x| (0..rn).flat_map(move |y| (0..rk).map(move |z| (x, y, z)))) {
                let (a0, b0, c0) = ((mi * rk + ki) * kw, (ni * rk + ki) * kw, (mi * rn + ni) * acc);
                for i in 0..16u32 {
                    for j in 0..16u32 {
                        let (dl, de) = if mfma { (j + 16 * (i / 4), i % 4) } else { (j + 16 * (i % 2), i / 2) };
                        let d = c.coord(c0 + de, dl, w);
                        for kk in 0..16u32 {
                            let (al, ae) = if mfma { (i + 16 * (kk / 4), kk % 4) } else { (i, kk) };
                            let (bl, be) = if mfma { (j + 16 * (kk / 4), kk % 4) } else { (j, kk) };
                            let (x, y) = (a.coord(a0 + ae, al, w), b.coord(b0 + be, bl, w));
                            assert_eq!((x[0], y[1]), (d[0], d[1]), "wave {w} tile ({mi},{ni},{ki}) i={i} j={j} k={kk}");
                            assert_eq!(x[1], y[0], "k of A and B differ");
                            *seen.entry((d[0], d[1], x[1])).or_insert(0u32) += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(seen.len() as u32, m * n * k, "some products are never made");
        let copies = *seen.values().next().unwrap();
        assert!(seen.values().all(|&v| v == copies));
    }

    #[test]
    fn mfma_and_wmma_tilings_compute_the_whole_product() {
        check_tiling(MFMA, [2, 2], 64, 64, 32);
        check_tiling(MFMA, [4, 1], 64, 32, 64);
        check_tiling(MFMA, [1, 4], 16, 128, 16);
        check_tiling(WMMA, [2, 2], 32, 64, 32);
        check_tiling(WMMA, [4, 1], 64, 16, 16);
        // more waves than tiles: the extra waves compute copies
        check_tiling(MFMA, [4, 1], 16, 16, 16);
        check_tiling(WMMA, [2, 2], 16, 16, 32);
    }

    #[test]
    fn small_tiles_replicate_instead_of_failing() {
        let mma = Mma { version: 2, warps_per_cta: vec![4, 1], instr_shape: vec![16, 8] };
        let l = mma.linear(&[16, 16]);
        assert_eq!(l.copy_mask(crate::layout::linear::HwDim::Warp), 0b11);
        assert_eq!(l.num_regs(), 8);
    }
}

/// Warps per dim of a dot result tile `res_shape` (batch first if rank 3):
/// batches take warps first, then each doubling goes where the most
/// `instr`-sized instruction tiles are left per warp (M on ties).
pub(super) fn spread_warps(res_shape: &[u32], num_warps: u32, instr: [u32; 2]) -> Vec<u32> {
    let rank = res_shape.len();
    let (m, n) = (res_shape[rank - 2], res_shape[rank - 1]);
    let mut warps = vec![1u32; rank];
    let mut left = num_warps;
    if rank == 3 {
        warps[0] = left.min(res_shape[0]).max(1);
        left /= warps[0];
    }
    while left > 1 {
        let (tm, tn) = (m / (instr[0] * warps[rank - 2]), n / (instr[1] * warps[rank - 1]));
        if tm >= tn && tm > 1 {
            warps[rank - 2] *= 2;
        } else if tn > 1 {
            warps[rank - 1] *= 2;
        } else {
            warps[rank - 2] *= 2;
        }
        left /= 2;
    }
    warps
}
