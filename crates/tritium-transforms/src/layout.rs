//! Layout assignment: how each tensor value is spread over the threads of a
//! CTA. Produces a side table (`LayoutMap`) rather than layouts in types, so
//! the IR, its codec and verifier stay layout-free; codegen reads the table.
//!
//! Every rank gets one *canonical* blocked layout (chosen from the biggest
//! tensor of that rank so global accesses are 16 bytes per thread along the
//! contiguous last dim); all shapes of that rank share its parameters, which
//! makes `broadcast` free. A reduction's result is a slice of its operand's
//! layout, and `expand_dims` of such a slice along the reduced dim gives the
//! parent back, so `x - mean(x)[:, None]` needs no data movement. Values whose
//! layout differs from their rank's canonical one are converted (through
//! shared memory) only where a consumer needs the canonical layout.
use std::collections::HashMap;

use tritium_ir::{Attr, Function, Module, Opcode, TypeData, Value};

/// `size_per_thread × threads_per_warp × warps_per_cta` per dim; `order`
/// lists dims fastest first (threads and registers are numbered along it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Blocked {
    pub size_per_thread: Vec<u32>,
    pub threads_per_warp: Vec<u32>,
    pub warps_per_cta: Vec<u32>,
    pub order: Vec<usize>,
}

impl Blocked {
    pub fn rank(&self) -> usize {
        self.order.len()
    }
    /// Elements one CTA-wide repetition covers along `d`.
    pub fn cover(&self, d: usize) -> u32 {
        self.size_per_thread[d] * self.threads_per_warp[d] * self.warps_per_cta[d]
    }

    /// The canonical blocked layout for `shape`: `max_access_bytes / elem_bytes`
    /// contiguous elements per thread along the last dim (capped so all
    /// threads get work), then lanes and warps fastest dim first; leftover
    /// lanes/warps replicate along the outermost dim.
    pub fn for_shape(shape: &[u32], elem_bytes: u32, num_warps: u32, warp_size: u32, max_access_bytes: u32) -> Blocked {
        let rank = shape.len();
        let order: Vec<usize> = (0..rank).rev().collect();
        let numel: u32 = shape.iter().product();
        let mut spt = vec![1u32; rank];
        let last = rank - 1;
        let wanted = (max_access_bytes / elem_bytes.max(1)).max(1);
        spt[last] = wanted.min(shape[last]).min((numel / (num_warps * warp_size)).max(1)).max(1);
        let mut tpw = vec![1u32; rank];
        let mut lanes = warp_size;
        for &d in &order {
            let t = lanes.min((shape[d] / spt[d]).max(1));
            tpw[d] = t;
            lanes /= t;
        }
        tpw[order[rank - 1]] *= lanes;
        let mut wpc = vec![1u32; rank];
        let mut warps = num_warps;
        for &d in &order {
            let w = warps.min((shape[d] / (spt[d] * tpw[d])).max(1));
            wpc[d] = w;
            warps /= w;
        }
        wpc[order[rank - 1]] *= warps;
        Blocked { size_per_thread: spt, threads_per_warp: tpw, warps_per_cta: wpc, order }
    }
}

/// A blocked `root` with some of its dims sliced away (the result of reducing
/// along them): `Slice { parent, dim }` nested, stored flat. Logical dim `i`
/// of a value is the `i`-th root dim not in `sliced`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub root: Blocked,
    /// Root dims removed, ascending.
    pub sliced: Vec<usize>,
}

impl Layout {
    pub fn blocked(root: Blocked) -> Layout {
        Layout { root, sliced: Vec::new() }
    }
    pub fn rank(&self) -> usize {
        self.root.rank() - self.sliced.len()
    }
    /// Root dims that remain, in logical order.
    pub fn logical_dims(&self) -> Vec<usize> {
        (0..self.root.rank()).filter(|d| !self.sliced.contains(d)).collect()
    }
    /// The layout of this value reduced along logical dim `dim`.
    pub fn slice(&self, dim: usize) -> Option<Layout> {
        let root_dim = *self.logical_dims().get(dim)?;
        let mut sliced = self.sliced.clone();
        sliced.push(root_dim);
        sliced.sort_unstable();
        Some(Layout { root: self.root.clone(), sliced })
    }
    /// The layout after inserting a size-1 logical dim at `axis`, when a sliced
    /// root dim lands exactly there (the inverse of `slice`).
    pub fn unslice(&self, axis: usize) -> Option<Layout> {
        // the most recently reduced dim first when several fit
        for (i, &s) in self.sliced.iter().enumerate().rev() {
            let mut sliced = self.sliced.clone();
            sliced.remove(i);
            let cand = Layout { root: self.root.clone(), sliced };
            if cand.logical_dims().iter().position(|&d| d == s) == Some(axis) {
                return Some(cand);
            }
        }
        None
    }
}

/// The result of layout assignment for one function.
#[derive(Clone, Debug, Default)]
pub struct LayoutMap {
    /// Canonical blocked layout per tensor rank.
    pub canonical: HashMap<usize, Blocked>,
    /// Values whose layout is not their rank's canonical one.
    pub special: HashMap<Value, Layout>,
}

impl LayoutMap {
    pub fn canonical(&self, rank: usize) -> Option<Layout> {
        self.canonical.get(&rank).cloned().map(Layout::blocked)
    }
    /// The layout of tensor value `v` of rank `rank`.
    pub fn of(&self, v: Value, rank: usize) -> Option<Layout> {
        self.special.get(&v).cloned().or_else(|| self.canonical(rank))
    }
}

/// Assigns layouts to every tensor value of `func` (all regions included).
pub fn assign_layouts(module: &Module, func: &Function, num_warps: u32, warp_size: u32, max_access_bytes: u32) -> LayoutMap {
    let types = &module.types;
    // per rank: the biggest shape and the narrowest element accessed through pointers
    let mut biggest: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut narrowest: HashMap<usize, u32> = HashMap::new();
    for (_, v) in func.values.iter() {
        let TypeData::Tensor { dims, .. } = types.data(v.ty) else { continue };
        let numel: u64 = dims.iter().map(|&d| d as u64).product();
        let e = biggest.entry(dims.len()).or_insert_with(|| dims.clone());
        if numel > e.iter().map(|&d| d as u64).product() {
            *e = dims.clone();
        }
        if let Some(b) = module.types.pointee_bytes(v.ty) {
            let n = narrowest.entry(dims.len()).or_insert(u32::MAX);
            *n = (*n).min(b);
        }
    }
    let mut map = LayoutMap::default();
    for (rank, shape) in biggest {
        let eb = narrowest.get(&rank).copied().filter(|&b| b != u32::MAX).unwrap_or(4);
        map.canonical.insert(rank, Blocked::for_shape(&shape, eb, num_warps, warp_size, max_access_bytes));
    }
    let body = func.body;
    walk_region(module, func, body, &mut map);
    map
}

fn walk_region(module: &Module, func: &Function, region: tritium_ir::Region, map: &mut LayoutMap) {
    let types = &module.types;
    for &op in &func.region_block(region).ops {
        let data = &func.ops[op];
        for &r in &data.regions {
            walk_region(module, func, r, map);
        }
        let rank_of = |v: Value| types.dims(func.value_type(v)).len();
        match data.opcode {
            Opcode::Reduce => {
                let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0);
                let Some(&src) = data.operands.first() else { continue };
                let Some(src_layout) = map.of(src, rank_of(src)) else { continue };
                let Some(sliced) = usize::try_from(axis).ok().and_then(|a| src_layout.slice(a)) else { continue };
                for &res in &data.results {
                    if sliced.rank() > 0 && map.canonical(sliced.rank()).as_ref() != Some(&sliced) {
                        map.special.insert(res, sliced.clone());
                    }
                }
            }
            Opcode::ExpandDims => {
                let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0);
                let src = data.operands[0];
                let res = data.results[0];
                if rank_of(src) == 0 {
                    continue;
                }
                let Some(src_layout) = map.of(src, rank_of(src)) else { continue };
                if let Some(parent) = usize::try_from(axis).ok().and_then(|a| src_layout.unslice(a)) {
                    if map.canonical(parent.rank()).as_ref() != Some(&parent) {
                        map.special.insert(res, parent);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dim_rows_get_16_byte_chunks() {
        let b = Blocked::for_shape(&[8192], 4, 4, 32, 16);
        assert_eq!(b.size_per_thread, vec![4]);
        assert_eq!(b.threads_per_warp, vec![32]);
        assert_eq!(b.warps_per_cta, vec![4]);
    }

    #[test]
    fn two_dim_fills_the_fast_dim_first() {
        let b = Blocked::for_shape(&[16, 64], 2, 4, 32, 16);
        assert_eq!(b.size_per_thread, vec![1, 8]);
        assert_eq!(b.threads_per_warp, vec![4, 8]);
        assert_eq!(b.warps_per_cta, vec![4, 1]);
        assert_eq!(b.order, vec![1, 0]);
        // a tiny tensor: spare lanes and warps replicate along dim 0
        let t = Blocked::for_shape(&[2, 4], 4, 4, 32, 16);
        assert_eq!(t.threads_per_warp.iter().product::<u32>(), 32);
        assert_eq!(t.warps_per_cta.iter().product::<u32>(), 4);
    }

    #[test]
    fn slice_and_unslice_are_inverse() {
        let l = Layout::blocked(Blocked::for_shape(&[4, 8, 16], 4, 4, 32, 16));
        let s = l.slice(1).unwrap();
        assert_eq!(s.sliced, vec![1]);
        assert_eq!(s.logical_dims(), vec![0, 2]);
        assert_eq!(s.unslice(1), Some(l.clone()));
        assert_eq!(s.unslice(0), None);
        let ss = s.slice(1).unwrap();
        assert_eq!(ss.sliced, vec![1, 2]);
        assert_eq!(ss.unslice(1).unwrap().sliced, vec![1]);
    }
}
