//! Layouts as linear maps over GF(2). For a tensor whose dims are powers of
//! two, the row-major index of an element is the concatenation of its
//! coordinates' bits; every layout tritium uses (blocked, sliced, MMA
//! accumulators, dot operands, swizzled shared memory) maps each bit of the
//! hardware index (register, lane, warp; or the offset in shared memory) to a
//! fixed element index, and an index with several bits set holds the XOR of
//! theirs. A zero basis is a bit that only selects copies (broadcast).
//!
//! One representation for every layout is what lets lowering stay generic:
//! which element register `r` of a thread holds, which bits of the lane id
//! move along a reduced dim, where an element goes in shared memory, and
//! whether a conversion needs data movement at all are the same questions
//! for every pair of layouts.

/// Which hardware index an input bit belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HwDim {
    Register,
    Lane,
    Warp,
}

/// A distributed layout applied to one shape: for each bit of the register
/// index, the lane id and the warp id, the row-major element index it
/// contributes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinearLayout {
    pub shape: Vec<u32>,
    pub reg: Vec<u32>,
    pub lane: Vec<u32>,
    pub warp: Vec<u32>,
}

/// XOR of `bases[i]` for every set bit `i` of `index`.
pub fn combine(bases: &[u32], index: u32) -> u32 {
    bases.iter().enumerate().filter(|(i, _)| index >> i & 1 == 1).fold(0, |acc, (_, &b)| acc ^ b)
}

/// log2 of each dim, and where each dim's bits start in the row-major index.
fn dim_bits(shape: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let logs: Vec<u32> = shape.iter().map(|d| d.trailing_zeros()).collect();
    let mut starts = vec![0; shape.len()];
    let mut at = 0;
    for d in (0..shape.len()).rev() {
        starts[d] = at;
        at += logs[d];
    }
    (logs, starts)
}

/// Row-major index of `coord` in `shape` (coordinates wrap: a power-of-two
/// dim keeps only its own bits, as broadcast layouts expect).
pub fn flatten(shape: &[u32], coord: &[u32]) -> u32 {
    let (logs, starts) = dim_bits(shape);
    coord.iter().enumerate().fold(0, |acc, (d, &c)| acc | ((c & ((1 << logs[d]) - 1)) << starts[d]))
}

/// The coordinates of row-major `index` in `shape`.
pub fn unflatten(shape: &[u32], index: u32) -> Vec<u32> {
    let (logs, starts) = dim_bits(shape);
    (0..shape.len()).map(|d| (index >> starts[d]) & ((1 << logs[d]) - 1)).collect()
}

/// The bits of the row-major index that belong to dim `d`.
pub fn dim_mask(shape: &[u32], d: usize) -> u32 {
    let (logs, starts) = dim_bits(shape);
    ((1u32 << logs[d]) - 1) << starts[d]
}

impl LinearLayout {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    pub fn numel(&self) -> u32 {
        self.shape.iter().product()
    }
    pub fn num_regs(&self) -> u32 {
        1 << self.reg.len()
    }
    pub fn num_lanes(&self) -> u32 {
        1 << self.lane.len()
    }
    pub fn num_warps(&self) -> u32 {
        1 << self.warp.len()
    }
    pub fn bases(&self, d: HwDim) -> &[u32] {
        match d {
            HwDim::Register => &self.reg,
            HwDim::Lane => &self.lane,
            HwDim::Warp => &self.warp,
        }
    }

    /// Row-major index of the element register `r` of thread (`lane`, `warp`) holds.
    pub fn index(&self, r: u32, lane: u32, warp: u32) -> u32 {
        combine(&self.reg, r) ^ combine(&self.lane, lane) ^ combine(&self.warp, warp)
    }
    pub fn coord(&self, r: u32, lane: u32, warp: u32) -> Vec<u32> {
        unflatten(&self.shape, self.index(r, lane, warp))
    }

    /// Bits of the lane id (or warp id) that only select copies.
    pub fn copy_mask(&self, d: HwDim) -> u32 {
        self.bases(d).iter().enumerate().filter(|(_, &b)| b == 0).fold(0, |m, (i, _)| m | 1 << i)
    }

    /// Whether every element is held by exactly one (register, owner thread)
    /// pair, owners being the threads whose copy bits are zero: the non-zero
    /// bases are linearly independent and span the whole tensor.
    pub fn is_surjective_once(&self) -> bool {
        let nonzero: Vec<u32> = self.reg.iter().chain(&self.lane).chain(&self.warp).copied().filter(|&b| b != 0).collect();
        rank_of(&nonzero) == nonzero.len() && nonzero.len() as u32 == self.numel().trailing_zeros()
    }

    /// Whether every non-zero basis is a single bit and no two share one:
    /// then XOR, OR and ADD of contributions agree (cheap address math).
    pub fn is_disjoint(&self) -> bool {
        let mut seen = 0u32;
        for &b in self.reg.iter().chain(&self.lane).chain(&self.warp) {
            if b == 0 {
                continue;
            }
            if !b.is_power_of_two() || seen & b != 0 {
                return false;
            }
            seen |= b;
        }
        true
    }

    /// 2^k where registers 0..2^k hold consecutive elements along dim `d`
    /// starting at the register-0 element (the widest vector access).
    pub fn contiguous_regs(&self, d: usize) -> u32 {
        let (_, starts) = dim_bits(&self.shape);
        let mut k = 0;
        while k < self.reg.len() && self.reg[k] == 1 << (starts[d] + k as u32) && self.shape[d] > 1 << k {
            k += 1;
        }
        1 << k
    }

    /// The register-index bits that move a thread's element only inside
    /// aligned blocks of `block[d]` elements along each dim d (powers of
    /// two): a value constant over such blocks (axis info's constancy) is
    /// the same in registers differing only in these bits, as the thread
    /// part XORs the same into both.
    pub fn regs_within_blocks(&self, block: &[u64]) -> u32 {
        let (logs, starts) = dim_bits(&self.shape);
        let inside = (0..self.rank()).fold(0u32, |acc, d| {
            let bits = block.get(d).map_or(0, |&b| b.max(1).ilog2()).min(logs[d]);
            acc | ((1u32 << bits) - 1) << starts[d]
        });
        self.reg.iter().enumerate().filter(|&(_, &b)| b & !inside == 0).fold(0, |acc, (j, _)| acc | 1 << j)
    }

    /// The layout of this tensor reduced along `dim`: the dim disappears;
    /// register bits along it go (a thread keeps one partial), lane and warp
    /// bits along it become copies (every thread of a group holds the result).
    pub fn slice(&self, dim: usize) -> LinearLayout {
        let mut shape = self.shape.clone();
        shape.remove(dim);
        let project = |b: u32| -> u32 {
            let mut c = unflatten(&self.shape, b);
            c.remove(dim);
            flatten(&shape, &c)
        };
        let along = dim_mask(&self.shape, dim);
        LinearLayout {
            reg: self.reg.iter().filter(|&&b| b & !along != 0).map(|&b| project(b)).collect(),
            lane: self.lane.iter().map(|&b| project(b)).collect(),
            warp: self.warp.iter().map(|&b| project(b)).collect(),
            shape,
        }
    }

    /// Inserts a size-1 dim at `axis` (bases keep their elements).
    pub fn expand_dims(&self, axis: usize) -> LinearLayout {
        let mut shape = self.shape.clone();
        shape.insert(axis, 1);
        let lift = |b: u32| -> u32 {
            let mut c = unflatten(&self.shape, b);
            c.insert(axis, 0);
            flatten(&shape, &c)
        };
        LinearLayout {
            reg: self.reg.iter().map(|&b| lift(b)).collect(),
            lane: self.lane.iter().map(|&b| lift(b)).collect(),
            warp: self.warp.iter().map(|&b| lift(b)).collect(),
            shape,
        }
    }

    /// Dims permuted: result dim `i` is dim `perm[i]` of this layout.
    pub fn permute(&self, perm: &[usize]) -> LinearLayout {
        let shape: Vec<u32> = perm.iter().map(|&p| self.shape[p]).collect();
        let move_ = |b: u32| -> u32 {
            let c = unflatten(&self.shape, b);
            flatten(&shape, &perm.iter().map(|&p| c[p]).collect::<Vec<_>>())
        };
        LinearLayout {
            reg: self.reg.iter().map(|&b| move_(b)).collect(),
            lane: self.lane.iter().map(|&b| move_(b)).collect(),
            warp: self.warp.iter().map(|&b| move_(b)).collect(),
            shape,
        }
    }

    /// Whether `other` puts every element in the same thread as this layout
    /// does (possibly in another register): a conversion is then a register
    /// permutation. Both must cover the same shape.
    pub fn same_threads(&self, other: &LinearLayout) -> bool {
        self.shape == other.shape && self.lane == other.lane && self.warp == other.warp
    }

    /// For each register of `other`, the register of `self` holding the same
    /// element in the same thread; None when some element is not in the same
    /// thread (the conversion moves data between threads).
    pub fn register_permutation_to(&self, other: &LinearLayout) -> Option<Vec<u32>> {
        if !self.same_threads(other) {
            return None;
        }
        let solver = Solver::new(&self.reg);
        (0..other.num_regs()).map(|r| solver.solve(combine(&other.reg, r))).collect()
    }
}

/// A blocked layout applied to `shape` (dims of a sliced layout's root that
/// were reduced away are 1 here; `LinearLayout::slice` drops them after).
/// Registers are numbered along `order` (fastest dim first), within a dim as
/// `rep * size_per_thread + e`; lanes and warps likewise fastest dim first;
/// coordinates wrap at the shape (the bits above it select copies).
pub fn blocked(b: &super::Blocked, shape: &[u32]) -> LinearLayout {
    let bit = |d: usize, v: u32| -> u32 {
        if v >= shape[d] {
            return 0;
        }
        let mut c = vec![0; shape.len()];
        c[d] = v;
        flatten(shape, &c)
    };
    let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
    for &d in &b.order {
        let spt = b.size_per_thread[d].min(shape[d]);
        for k in 0..spt.trailing_zeros() {
            reg.push(bit(d, 1 << k));
        }
        let reps = (shape[d] / b.cover(d)).max(1);
        for j in 0..reps.trailing_zeros() {
            reg.push(bit(d, b.cover(d) << j));
        }
    }
    for &d in &b.order {
        for k in 0..b.threads_per_warp[d].trailing_zeros() {
            lane.push(bit(d, b.size_per_thread[d] << k));
        }
    }
    for &d in &b.order {
        for k in 0..b.warps_per_cta[d].trailing_zeros() {
            warp.push(bit(d, (b.size_per_thread[d] * b.threads_per_warp[d]) << k));
        }
    }
    LinearLayout { shape: shape.to_vec(), reg, lane, warp }
}

/// The number of linearly independent vectors among `v` (over GF(2)).
pub fn rank_of(v: &[u32]) -> usize {
    Solver::new(v).pivots.len()
}

/// Gaussian elimination over GF(2): which combination of `bases` gives a vector.
pub struct Solver {
    /// (reduced vector, its pivot bit, the combination of input bases it is)
    pivots: Vec<(u32, u32, u32)>,
}

impl Solver {
    pub fn new(bases: &[u32]) -> Solver {
        let mut pivots: Vec<(u32, u32, u32)> = Vec::new();
        for (i, &b) in bases.iter().enumerate() {
            let (mut v, mut combo) = (b, 1u32 << i);
            for &(pv, bit, pc) in &pivots {
                if v & bit != 0 {
                    v ^= pv;
                    combo ^= pc;
                }
            }
            if v != 0 {
                let bit = 1 << (31 - v.leading_zeros());
                // keep earlier pivots reduced against the new one
                for p in pivots.iter_mut() {
                    if p.0 & bit != 0 {
                        p.0 ^= v;
                        p.2 ^= combo;
                    }
                }
                pivots.push((v, bit, combo));
            }
        }
        Solver { pivots }
    }

    /// An index whose set bits select bases XOR-ing to `target`, or None.
    pub fn solve(&self, target: u32) -> Option<u32> {
        let (mut v, mut combo) = (target, 0u32);
        for &(pv, bit, pc) in &self.pivots {
            if v & bit != 0 {
                v ^= pv;
                combo ^= pc;
            }
        }
        (v == 0).then_some(combo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_is_row_major() {
        let shape = [4, 8];
        assert_eq!(flatten(&shape, &[1, 3]), 11);
        assert_eq!(unflatten(&shape, 11), vec![1, 3]);
        assert_eq!(dim_mask(&shape, 0), 0b11000);
        assert_eq!(flatten(&shape, &[5, 3]), 11); // wraps
    }

    #[test]
    fn solver_finds_combinations() {
        let s = Solver::new(&[0b011, 0b110, 0b100]);
        for t in 0..8 {
            let c = s.solve(t).unwrap();
            assert_eq!(combine(&[0b011, 0b110, 0b100], c), t);
        }
        assert_eq!(Solver::new(&[1, 1]).solve(2), None);
        assert_eq!(rank_of(&[1, 2, 3]), 2);
    }

    #[test]
    fn slice_drops_register_bits_and_copies_lanes() {
        // 4x8: reg bit -> col 1, lanes: col 2, col 4, row 1, row 2; warp: none
        let l = LinearLayout { shape: vec![4, 8], reg: vec![1], lane: vec![2, 4, 8, 16], warp: vec![] };
        assert!(l.is_surjective_once() && l.is_disjoint());
        let s = l.slice(1);
        assert_eq!(s.shape, vec![4]);
        assert!(s.reg.is_empty());
        assert_eq!(s.lane, vec![0, 0, 1, 2]);
        assert_eq!(s.copy_mask(HwDim::Lane), 0b0011);
        let e = s.expand_dims(1);
        assert_eq!(e.shape, vec![4, 1]);
        assert_eq!(e.lane, vec![0, 0, 1, 2]);
    }

    #[test]
    fn registers_within_constant_blocks() {
        // B's 64x128 tile copied 16 bytes a thread: registers 0..8 along
        // the row, then rows 8, 16 and 32 apart (lanes and warps fill the rest)
        let b = super::super::Blocked {
            size_per_thread: vec![1, 8],
            threads_per_warp: vec![2, 16],
            warps_per_cta: vec![4, 1],
            order: vec![1, 0],
        };
        let l = blocked(&b, &[64, 128]);
        assert_eq!(l.reg.len(), 6);
        // constant over 16 rows and 8 columns: the vector bits and the 8-row step
        assert_eq!(l.regs_within_blocks(&[16, 8]), 0b001111);
        // constant along whole rows only: the vector bits
        assert_eq!(l.regs_within_blocks(&[1, 128]), 0b000111);
        assert_eq!(l.regs_within_blocks(&[1, 1]), 0);
        assert_eq!(l.regs_within_blocks(&[64, 128]), 0b111111);
    }

    #[test]
    fn permutation_between_register_orders() {
        let a = LinearLayout { shape: vec![2, 2], reg: vec![1, 2], lane: vec![], warp: vec![] };
        let b = LinearLayout { shape: vec![2, 2], reg: vec![2, 1], lane: vec![], warp: vec![] };
        assert_eq!(a.register_permutation_to(&b), Some(vec![0, 2, 1, 3]));
        let t = a.permute(&[1, 0]);
        assert_eq!(t.reg, vec![2, 1]);
    }
}
