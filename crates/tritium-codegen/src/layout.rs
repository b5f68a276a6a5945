//! The 1-D blocked layout used until layout assignment (tritium-transforms)
//! exists: a tensor of `numel` elements, flattened row-major, is spread over
//! `warps × threads_per_warp` threads; each thread owns chunks of
//! `size_per_thread` contiguous elements, one chunk per `tile` of the tensor.
use std::collections::HashMap;

use tritium_ir::{Function, ScalarKind, TypeData, TypeTable};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedLayout {
    pub numel: u32,
    pub size_per_thread: u32,
    pub threads_per_warp: u32,
    pub warps_per_cta: u32,
}

impl BlockedLayout {
    pub fn threads(&self) -> u32 {
        self.threads_per_warp * self.warps_per_cta
    }
    /// Elements covered by one chunk per thread.
    pub fn tile(&self) -> u32 {
        self.size_per_thread * self.threads()
    }
    /// Chunks per thread; a tensor smaller than a tile is replicated, so a
    /// thread still owns exactly one chunk.
    pub fn reps(&self) -> u32 {
        (self.numel / self.tile()).max(1)
    }
    /// Registers (elements) each thread holds.
    pub fn elems_per_thread(&self) -> u32 {
        self.reps() * self.size_per_thread
    }
    /// The flat index of register `reg` is `thread * size_per_thread +
    /// register_offset(reg)`, wrapped modulo `numel` when `replicated()`.
    pub fn register_offset(&self, reg: u32) -> u32 {
        (reg / self.size_per_thread) * self.tile() + reg % self.size_per_thread
    }
    /// Whether several threads hold the same elements (numel < tile).
    pub fn replicated(&self) -> bool {
        self.numel < self.tile()
    }
    /// Threads holding distinct chunks; the others hold copies.
    pub fn owner_threads(&self) -> u32 {
        (self.numel / self.size_per_thread).min(self.threads())
    }
}

/// Bytes of an element in global memory (`i1` is stored as a byte).
pub fn elem_bytes(kind: ScalarKind) -> u32 {
    kind.bits().div_ceil(8)
}

/// One layout per tensor size in `func`: `size_per_thread` makes the
/// narrowest global access of that size 16 bytes wide when the tensor is big
/// enough, so one layout serves every tensor of that size (no conversions).
pub fn choose_layouts(func: &Function, types: &TypeTable, num_warps: u32, warp_size: u32, max_access_bytes: u32) -> HashMap<u32, BlockedLayout> {
    let mut narrowest: HashMap<u32, u32> = HashMap::new();
    for (_, v) in func.values.iter() {
        let TypeData::Tensor { dims, .. } = types.data(v.ty) else { continue };
        let numel: u32 = dims.iter().product();
        let bytes = types.pointee(v.ty).and_then(|p| types.scalar_kind(p)).map(elem_bytes);
        let e = narrowest.entry(numel).or_insert(u32::MAX);
        if let Some(b) = bytes {
            *e = (*e).min(b);
        }
    }
    let threads = num_warps * warp_size;
    narrowest
        .into_iter()
        .map(|(numel, bytes)| {
            let bytes = if bytes == u32::MAX { 4 } else { bytes };
            let wanted = (max_access_bytes / bytes).max(1);
            let spt = wanted.min((numel / threads).max(1));
            (numel, BlockedLayout { numel, size_per_thread: spt, threads_per_warp: warp_size, warps_per_cta: num_warps })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_tensor_wraps_in_tiles() {
        let l = BlockedLayout { numel: 1024, size_per_thread: 4, threads_per_warp: 32, warps_per_cta: 4 };
        assert_eq!(l.tile(), 512);
        assert_eq!(l.elems_per_thread(), 8);
        assert_eq!(l.register_offset(5), 512 + 1);
        assert!(!l.replicated());
        assert_eq!(l.owner_threads(), 128);
    }

    #[test]
    fn small_tensor_is_replicated() {
        let l = BlockedLayout { numel: 16, size_per_thread: 1, threads_per_warp: 32, warps_per_cta: 4 };
        assert!(l.replicated());
        assert_eq!(l.elems_per_thread(), 1);
        assert_eq!(l.owner_threads(), 16);
    }
}
