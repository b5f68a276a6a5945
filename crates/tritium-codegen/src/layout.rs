//! A layout (from tritium-transforms' layout assignment) applied to one tensor
//! shape: which elements each thread holds in which registers. Registers are
//! numbered along the root layout's `order` (fastest dim first), and within a
//! dim as `rep * size_per_thread + e`, so a thread's consecutive registers are
//! consecutive elements of the fastest dim (what vectorised access needs).
//! Element coordinate along root dim d for register r of a thread:
//! `(rep * cover_d + (warp_d * tpw_d + lane_d) * spt_d + e) mod full_d`.
//! `size_per_thread` is clamped to the dim's size so no register is a copy.
use tritium_ir::ScalarKind;
pub use tritium_transforms::{Blocked, Layout};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedLayout {
    pub layout: Layout,
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
    pub fn new(layout: Layout, shape: &[u32]) -> Option<BlockedLayout> {
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
    /// 1-D view kept for the first slice's `arange` (which `shape.rs` replaces).
    pub fn tile(&self) -> u32 {
        self.root().cover(0)
    }
    pub fn register_offset(&self, reg: u32) -> u32 {
        self.reg_offset(0, reg)
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
        BlockedLayout::new(Layout::blocked(Blocked::for_shape(shape, eb, warps, 32, 16)), shape).unwrap()
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
