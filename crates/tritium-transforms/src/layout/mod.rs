//! Layouts: how a tensor value is spread over the threads of a CTA (or laid
//! out in shared memory). Layout assignment (`assign`) gives every tensor
//! value one, as a side table (`LayoutMap`) rather than in types, so the IR,
//! its codec and verifier stay layout-free; the conversions it needs are
//! explicit `convert_layout` ops in the IR. Lowering asks each layout for its
//! `LinearLayout` over the value's shape and needs nothing else.
//!
//! - `Blocked`: contiguous elements per thread, lanes and warps tiling the
//!   rest; each tensor rank has one canonical blocked layout.
//! - `Slice { parent, dim }`: what a reduction along `dim` leaves of `parent`.
//! - `Mma`: tensor-core accumulators (v2 `mma.sync`, v3 `wgmma`, v4 AMD MFMA, v5 AMD WMMA).
//! - `DotOperand`: the registers of a dot's A or B operand for an Mma parent.
//! - `Shared`: the value lives in shared memory (swizzled or NVMMA).
mod assign;
mod blocked;
mod dot_layouts;
pub mod linear;
pub mod mma;
pub mod shared;

use std::collections::HashMap;
use std::fmt;

use tritium_ir::Value;

pub use assign::{assign_layouts, LayoutOptions, MmaSupport};
pub use blocked::Blocked;
pub use linear::LinearLayout;
pub use mma::{DotOperand, Mma, Operand, MFMA, WMMA};
pub use shared::SharedLayout;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Blocked(Blocked),
    Slice { parent: Box<Layout>, dim: usize },
    Mma(Mma),
    DotOperand(DotOperand),
    Shared(SharedLayout),
}

impl Layout {
    /// The layout of this value reduced along logical dim `dim`.
    pub fn slice(&self, dim: usize) -> Layout {
        Layout::Slice { parent: Box::new(self.clone()), dim }
    }

    /// The layout `expand_dims` along `axis` gives back without moving data.
    pub fn unslice(&self, axis: usize) -> Option<&Layout> {
        match self {
            Layout::Slice { parent, dim } if *dim == axis => Some(parent),
            _ => None,
        }
    }

    pub fn is_shared(&self) -> bool {
        matches!(self, Layout::Shared(_))
    }

    /// Blocked (or a slice of one): the layouts scans and the scratch-based
    /// shape ops handle.
    pub fn is_blocked_like(&self) -> bool {
        match self {
            Layout::Blocked(_) => true,
            Layout::Slice { parent, .. } => parent.is_blocked_like(),
            _ => false,
        }
    }

    /// The layout applied to `shape`, for a warp of `warp_size` lanes; None
    /// for shared memory (not held in registers) or a rank it cannot have.
    pub fn linear(&self, shape: &[u32]) -> Option<LinearLayout> {
        match self {
            Layout::Blocked(b) => (b.rank() == shape.len()).then(|| linear::blocked(b, shape)),
            Layout::Slice { parent, dim } => {
                if *dim > shape.len() {
                    return None;
                }
                let mut full = shape.to_vec();
                full.insert(*dim, 1);
                Some(parent.linear(&full)?.slice(*dim))
            }
            Layout::Mma(m) => (m.warps_per_cta.len() == shape.len()).then(|| m.linear(shape)),
            Layout::DotOperand(d) => (d.parent.warps_per_cta.len() == shape.len()).then(|| d.linear(shape)),
            Layout::Shared(_) => None,
        }
    }

    /// The blocked layout with its dims permuted (result dim `i` is dim
    /// `order[i]`): a transpose that moves no data. None for other kinds.
    pub fn permuted(&self, order: &[usize]) -> Option<Layout> {
        let Layout::Blocked(b) = self else { return None };
        if order.len() != b.rank() {
            return None;
        }
        let pick = |v: &[u32]| order.iter().map(|&o| v[o]).collect::<Vec<_>>();
        let inverse: Vec<usize> = (0..order.len()).map(|d| order.iter().position(|&o| o == d).unwrap_or(d)).collect();
        Some(Layout::Blocked(Blocked {
            size_per_thread: pick(&b.size_per_thread),
            threads_per_warp: pick(&b.threads_per_warp),
            warps_per_cta: pick(&b.warps_per_cta),
            order: b.order.iter().map(|&d| inverse[d]).collect(),
        }))
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::Blocked(b) => write!(
                f,
                "blocked<spt={:?}, tpw={:?}, wpc={:?}, order={:?}>",
                b.size_per_thread, b.threads_per_warp, b.warps_per_cta, b.order
            ),
            Layout::Slice { parent, dim } => write!(f, "slice<dim={dim}, {parent}>"),
            Layout::Mma(m) => write!(f, "mma<v{}, warps={:?}, instr={:?}>", m.version, m.warps_per_cta, m.instr_shape),
            Layout::DotOperand(d) => {
                let which = if d.operand == Operand::A { "a" } else { "b" };
                write!(f, "dot_op<{which}, k_width={}, {}>", d.k_width, Layout::Mma(d.parent.clone()))
            }
            Layout::Shared(SharedLayout::Swizzled { vec, per_phase, max_phase, order }) => {
                write!(f, "shared<vec={vec}, per_phase={per_phase}, max_phase={max_phase}, order={order:?}>")
            }
            Layout::Shared(SharedLayout::Nvmma { swizzle_bytes, transposed, elem_bytes }) => {
                write!(f, "nvmma_shared<swizzle={swizzle_bytes}, transposed={transposed}, elem_bytes={elem_bytes}>")
            }
        }
    }
}

/// The layout of every tensor value of one function.
#[derive(Clone, Debug, Default)]
pub struct LayoutMap {
    /// Canonical blocked layout per tensor rank (what function boundaries,
    /// memory accesses and most ops use).
    pub canonical: HashMap<usize, Blocked>,
    pub layouts: HashMap<Value, Layout>,
}

impl LayoutMap {
    pub fn canonical(&self, rank: usize) -> Option<Layout> {
        self.canonical.get(&rank).cloned().map(Layout::Blocked)
    }
    pub fn of(&self, v: Value) -> Option<&Layout> {
        self.layouts.get(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_and_unslice_are_inverse() {
        let l = Layout::Blocked(Blocked::for_shape(&[4, 8, 16], 4, 4, 32, 16));
        let s = l.slice(1);
        assert_eq!(s.unslice(1), Some(&l));
        assert_eq!(s.unslice(0), None);
        let lin = s.linear(&[4, 16]).unwrap();
        assert_eq!(lin.shape, vec![4, 16]);
        assert!(s.is_blocked_like());
    }

    #[test]
    fn permuted_blocked_moves_no_data() {
        let b = Blocked::for_shape(&[16, 64], 2, 4, 32, 16);
        let l = Layout::Blocked(b);
        let t = l.permuted(&[1, 0]).unwrap();
        let (a, at) = (l.linear(&[16, 64]).unwrap(), t.linear(&[64, 16]).unwrap());
        // the transposed layout holds element (j, i) where the original holds (i, j)
        for lane in 0..32 {
            for r in 0..a.num_regs() {
                let c = a.coord(r, lane, 1);
                assert_eq!(at.coord(r, lane, 1), vec![c[1], c[0]]);
            }
        }
    }
}
