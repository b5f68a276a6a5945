//! Layouts (from tritium-transforms' layout assignment) applied to one tensor
//! shape, as lowering uses them. `TensorLayout` is the generic view every op
//! can use: the layout's `LinearLayout` (which element register `r` of a
//! thread holds, which lane and warp bits only replicate). `BlockedLayout` is
//! the structured view of a blocked layout or a slice of one, for the ops
//! whose algorithm follows that structure (scans).
//!
//! Blocked registers are numbered along the root layout's `order` (fastest
//! dim first), and within a dim as `rep * size_per_thread + e`, so a thread's
//! consecutive registers are consecutive elements of the fastest dim (what
//! vectorised access needs). Element coordinate along root dim d for register
//! r of a thread: `(rep * cover_d + (warp_d * tpw_d + lane_d) * spt_d + e) mod
//! full_d`. `size_per_thread` is clamped to the dim's size so no register is a
//! copy. Both views number registers the same way (tested below).
use tritium_ir::ScalarKind;
pub use tritium_transforms::layout::linear::{dim_mask, flatten, unflatten, HwDim};
pub use tritium_transforms::{Blocked, Layout, LinearLayout};

/// A layout applied to one shape: the generic view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    pub layout: Layout,
    pub lin: LinearLayout,
}

impl TensorLayout {
    /// None for shared-memory layouts (no registers) or a rank mismatch.
    pub fn new(layout: &Layout, shape: &[u32]) -> Option<TensorLayout> {
        Some(TensorLayout { lin: layout.linear(shape)?, layout: layout.clone() })
    }
    pub fn shape(&self) -> &[u32] {
        &self.lin.shape
    }
    pub fn numel(&self) -> u32 {
        self.lin.numel()
    }
    pub fn elems_per_thread(&self) -> u32 {
        self.lin.num_regs()
    }
    pub fn threads(&self) -> u32 {
        self.lin.num_lanes() * self.lin.num_warps()
    }
    /// Bits of the flat thread id (`warp * lanes + lane`) that only select copies.
    pub fn copy_bits(&self) -> u32 {
        self.lin.copy_mask(HwDim::Lane) | self.lin.copy_mask(HwDim::Warp) << self.lin.lane.len()
    }
    /// Whether copies sit in the top bits of the thread id, so `tid <
    /// owner_threads()` picks one owner of each element.
    pub fn replicated(&self) -> bool {
        let m = self.copy_bits();
        m != 0 && m == (self.threads() - 1) & !((1u32 << m.trailing_zeros()) - 1)
    }
    pub fn owner_threads(&self) -> u32 {
        let m = self.copy_bits();
        if m == 0 {
            self.threads()
        } else {
            1 << m.trailing_zeros()
        }
    }
    /// Consecutive registers holding consecutive elements of the last dim
    /// (the widest vector a global access of this layout can use).
    pub fn size_per_thread(&self) -> u32 {
        match self.lin.rank() {
            0 => 1,
            r => self.lin.contiguous_regs(r - 1),
        }
    }
    /// The blocked view, when this is a blocked layout or a slice of one.
    pub fn blocked(&self) -> Option<BlockedLayout> {
        BlockedLayout::new(&self.layout, self.shape())
    }
}

/// A blocked root with some of its dims sliced away, stored flat: logical
/// dim `i` of a value is the `i`-th root dim not in `sliced` (ascending).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlatSlice {
    pub root: Blocked,
    pub sliced: Vec<usize>,
}

impl FlatSlice {
    /// A blocked layout, or nested slices of one, flattened.
    pub fn of(layout: &Layout) -> Option<FlatSlice> {
        match layout {
            Layout::Blocked(b) => Some(FlatSlice { root: b.clone(), sliced: Vec::new() }),
            Layout::Slice { parent, dim } => {
                let mut p = FlatSlice::of(parent)?;
                let root_dim = *p.logical_dims().get(*dim)?;
                p.sliced.push(root_dim);
                p.sliced.sort_unstable();
                Some(p)
            }
            _ => None,
        }
    }
    pub fn rank(&self) -> usize {
        self.root.rank() - self.sliced.len()
    }
    /// This layout reduced along logical dim `dim`.
    pub fn slice(&self, dim: usize) -> Option<FlatSlice> {
        let root_dim = *self.logical_dims().get(dim)?;
        let mut sliced = self.sliced.clone();
        sliced.push(root_dim);
        sliced.sort_unstable();
        Some(FlatSlice { root: self.root.clone(), sliced })
    }
    /// Root dims that remain, in logical order.
    pub fn logical_dims(&self) -> Vec<usize> {
        (0..self.root.rank()).filter(|d| !self.sliced.contains(d)).collect()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedLayout {
    pub layout: FlatSlice,
    /// Logical shape.
    pub shape: Vec<u32>,
    /// Shape in root dims (sliced dims are 1).
    pub full: Vec<u32>,
    pub numel: u32,
    /// Registers along each root dim.
    pub regs: Vec<u32>,
    /// `size_per_thread` clamped to the dim's size.
    pub spt: Vec<u32>,
    /// Consecutive registers that hold consecutive elements of the last
    /// logical dim (the vector width limit of global accesses).
    pub size_per_thread: u32,
    pub threads_per_warp: u32,
    pub warps_per_cta: u32,
}

impl BlockedLayout {
    pub fn new(layout: &Layout, shape: &[u32]) -> Option<BlockedLayout> {
        BlockedLayout::from_flat(FlatSlice::of(layout)?, shape)
    }

    pub fn from_flat(layout: FlatSlice, shape: &[u32]) -> Option<BlockedLayout> {
        if layout.rank() != shape.len() {
            return None;
        }
        let root = &layout.root;
        let mut full = vec![1u32; root.rank()];
        for (i, d) in layout.logical_dims().into_iter().enumerate() {
            full[d] = shape[i];
        }
        let spt: Vec<u32> = (0..root.rank()).map(|d| root.size_per_thread[d].min(full[d])).collect();
        let regs: Vec<u32> = (0..root.rank()).map(|d| spt[d] * (full[d] / root.cover(d)).max(1)).collect();
        let last_root = layout.logical_dims().last().copied();
        let size_per_thread = match last_root {
            Some(d) if root.order[0] == d => spt[d],
            _ => 1,
        };
        Some(BlockedLayout {
            numel: shape.iter().product(),
            shape: shape.to_vec(),
            full,
            regs,
            spt,
            size_per_thread,
            threads_per_warp: root.threads_per_warp.iter().product(),
            warps_per_cta: root.warps_per_cta.iter().product(),
            layout,
        })
    }

    pub fn root(&self) -> &Blocked {
        &self.layout.root
    }
    pub fn threads(&self) -> u32 {
        self.threads_per_warp * self.warps_per_cta
    }
    /// Registers (elements) each thread holds.
    pub fn elems_per_thread(&self) -> u32 {
        self.regs.iter().product()
    }
    /// Register index → per-root-dim register index.
    pub fn decompose(&self, mut r: u32) -> Vec<u32> {
        let mut out = vec![0; self.regs.len()];
        for &d in &self.root().order {
            out[d] = r % self.regs[d];
            r /= self.regs[d];
        }
        out
    }
    pub fn compose(&self, per_dim: &[u32]) -> u32 {
        let mut r = 0;
        for &d in self.root().order.iter().rev() {
            r = r * self.regs[d] + per_dim[d];
        }
        r
    }
    /// The register part of the coordinate along root dim `d` for per-dim register index `rd`.
    pub fn reg_offset(&self, d: usize, rd: u32) -> u32 {
        (rd / self.spt[d]) * self.root().cover(d) + rd % self.spt[d]
    }
    /// Bit position of root dim `d`'s field in the lane id (and in the warp id).
    pub fn lane_shift(&self, d: usize) -> u32 {
        let root = self.root();
        root.order.iter().take_while(|&&o| o != d).map(|&o| root.threads_per_warp[o].trailing_zeros()).sum()
    }
    pub fn warp_shift(&self, d: usize) -> u32 {
        let root = self.root();
        root.order.iter().take_while(|&&o| o != d).map(|&o| root.warps_per_cta[o].trailing_zeros()).sum()
    }
    /// Lanes along `d` that hold distinct elements (the rest hold copies).
    pub fn useful_lanes(&self, d: usize) -> u32 {
        let root = self.root();
        root.threads_per_warp[d].min((self.full[d] / root.size_per_thread[d]).max(1))
    }
    pub fn useful_warps(&self, d: usize) -> u32 {
        let root = self.root();
        root.warps_per_cta[d].min((self.full[d] / (root.size_per_thread[d] * root.threads_per_warp[d])).max(1))
    }
    /// Bits of the flat thread id that only select copies.
    pub fn copy_bits(&self) -> u32 {
        let root = self.root();
        let warp_bits = self.threads_per_warp.trailing_zeros();
        let mut mask = 0u32;
        for d in 0..root.rank() {
            let (ls, ul, tl) = (self.lane_shift(d), self.useful_lanes(d).trailing_zeros(), root.threads_per_warp[d].trailing_zeros());
            for b in ul..tl {
                mask |= 1 << (ls + b);
            }
            let (ws, uw, tw) = (self.warp_shift(d), self.useful_warps(d).trailing_zeros(), root.warps_per_cta[d].trailing_zeros());
            for b in uw..tw {
                mask |= 1 << (warp_bits + ws + b);
            }
        }
        mask
    }
    /// Whether several threads hold the same elements in a way `tid <
    /// owner_threads()` can pick one owner of each (copies in the top bits
    /// of the thread id). Other copy patterns report false: every copy then
    /// stores the same value, which is harmless for plain stores.
    pub fn replicated(&self) -> bool {
        let m = self.copy_bits();
        m != 0 && m == (self.threads() - 1) & !((1u32 << m.trailing_zeros()) - 1)
    }
    pub fn owner_threads(&self) -> u32 {
        let m = self.copy_bits();
        if m == 0 {
            self.threads()
        } else {
            1 << m.trailing_zeros()
        }
    }
}

/// Bytes of an element in global memory (`i1` is stored as a byte).
pub fn elem_bytes(kind: ScalarKind) -> u32 {
    kind.bits().div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(shape: &[u32], warps: u32, eb: u32) -> BlockedLayout {
        BlockedLayout::new(&Layout::Blocked(Blocked::for_shape(shape, eb, warps, 32, 16)), shape).unwrap()
    }

    #[test]
    fn big_tensor_wraps_in_tiles() {
        let l = lay(&[1024], 4, 4);
        assert_eq!(l.elems_per_thread(), 8);
        assert_eq!(l.reg_offset(0, 5), 512 + 1);
        assert!(!l.replicated());
        assert_eq!(l.owner_threads(), 128);
    }

    #[test]
    fn small_tensor_is_replicated() {
        let l = lay(&[16], 4, 4);
        assert!(l.replicated());
        assert_eq!(l.elems_per_thread(), 1);
        assert_eq!(l.owner_threads(), 16);
    }

    /// The generic linear form (`TensorLayout`) gives every register of
    /// every thread the element the blocked formula does, and agrees on
    /// copies and owners, sliced layouts included.
    #[test]
    fn linear_form_agrees() {
        for (shape, warps) in [(vec![16u32, 64], 4), (vec![2, 4], 4), (vec![64, 1], 8), (vec![4, 8, 16], 2), (vec![1024], 4), (vec![8], 8)] {
            let root = Layout::Blocked(Blocked::for_shape(&shape, 4, warps, 32, 16));
            let mut layouts = vec![(root.clone(), shape.clone())];
            if shape.len() > 1 {
                for d in 0..shape.len() {
                    let mut s = shape.clone();
                    s.remove(d);
                    layouts.push((root.slice(d), s.clone()));
                    if s.len() > 1 {
                        let mut s2 = s.clone();
                        s2.remove(0);
                        layouts.push((root.slice(d).slice(0), s2));
                    }
                }
            }
            for (layout, logical) in layouts {
                let l = BlockedLayout::new(&layout, &logical).unwrap();
                let t = TensorLayout::new(&layout, &logical).unwrap();
                assert_eq!(t.elems_per_thread(), l.elems_per_thread(), "{layout}");
                assert_eq!(t.copy_bits(), l.copy_bits(), "{layout}");
                assert_eq!(t.replicated(), l.replicated(), "{layout}");
                assert_eq!(t.owner_threads(), l.owner_threads(), "{layout}");
                assert_eq!(t.size_per_thread(), l.size_per_thread, "{layout}");
                let root = l.root().clone();
                for tid in 0..l.threads() {
                    let (lane, warp) = (tid % 32, tid / 32);
                    for r in 0..l.elems_per_thread() {
                        let rd = l.decompose(r);
                        let coord: Vec<u32> = l
                            .layout
                            .logical_dims()
                            .iter()
                            .map(|&d| {
                                let ld = (lane >> l.lane_shift(d)) & (root.threads_per_warp[d] - 1);
                                let wd = (warp >> l.warp_shift(d)) & (root.warps_per_cta[d] - 1);
                                ((wd * root.threads_per_warp[d] + ld) * root.size_per_thread[d] + l.reg_offset(d, rd[d])) % l.full[d]
                            })
                            .collect();
                        assert_eq!(t.lin.index(r, lane, warp), flatten(&logical, &coord), "{layout} tid {tid} reg {r}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_element_is_held_once_per_owner() {
        for (shape, warps) in [(vec![16u32, 64], 4), (vec![2, 4], 4), (vec![64, 1], 8), (vec![4, 8, 16], 2)] {
            let l = lay(&shape, warps, 4);
            let root = l.root().clone();
            let mut seen = vec![0u32; l.numel as usize];
            for tid in 0..l.threads() {
                if tid & l.copy_bits() != 0 {
                    continue;
                }
                let (lane, warp) = (tid % 32, tid / 32);
                for r in 0..l.elems_per_thread() {
                    let rd = l.decompose(r);
                    assert_eq!(l.compose(&rd), r);
                    let mut flat = 0;
                    for d in 0..shape.len() {
                        let ld = (lane >> l.lane_shift(d)) & (root.threads_per_warp[d] - 1);
                        let wd = (warp >> l.warp_shift(d)) & (root.warps_per_cta[d] - 1);
                        let c = ((wd * root.threads_per_warp[d] + ld) * root.size_per_thread[d] + l.reg_offset(d, rd[d])) % shape[d];
                        flat = flat * shape[d] + c;
                    }
                    seen[flat as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{shape:?}: {seen:?}");
        }
    }
}
