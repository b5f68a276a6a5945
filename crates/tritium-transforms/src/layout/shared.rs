//! Shared-memory layouts: where each element of a tile lives, as a map from
//! the element's row-major index to its offset in elements, linear over GF(2)
//! like the distributed layouts (`linear_layout`).
//!
//! - `Swizzled { vec, per_phase, max_phase }`: rows of the contiguous dim
//!   stored in order, the `vec`-element chunks of row `r` XOR-ed with
//!   `(r / per_phase) % max_phase`, so the 8 rows an `ldmatrix` reads (or the
//!   threads of a conversion write) fall in different banks.
//! - `Nvmma { swizzle_bytes, transposed }`: the layout `wgmma` descriptors and
//!   TMA address: the tile split into column blocks `swizzle_bytes` wide,
//!   each block's rows contiguous, and inside every 8-row atom the 16-byte
//!   chunks of row `r` XOR-ed with `r % (swizzle_bytes / 16)`; `transposed`
//!   when the contiguous dim is the tile's first (an MN-major operand).
use super::linear::{flatten, unflatten};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SharedLayout {
    Swizzled { vec: u32, per_phase: u32, max_phase: u32, order: Vec<usize> },
    Nvmma { swizzle_bytes: u32, transposed: bool, elem_bytes: u32 },
}

impl SharedLayout {
    /// Plain row-major (order fastest dim first), no swizzle.
    pub fn row_major(rank: usize) -> SharedLayout {
        SharedLayout::Swizzled { vec: 1, per_phase: 1, max_phase: 1, order: (0..rank).rev().collect() }
    }

    /// The swizzle a 2-D tile of `elem_bytes` elements gets for `ldmatrix`
    /// reads along `order[0]`: 16-byte vectors, phases so 8 consecutive rows
    /// hit 8 different 16-byte bank groups.
    pub fn for_ldmatrix(shape: &[u32], elem_bytes: u32, order: Vec<usize>) -> SharedLayout {
        let inner = shape[order[0]];
        let vec = (16 / elem_bytes).min(inner).max(1);
        let row_bytes = inner * elem_bytes;
        let per_phase = (128 / row_bytes.max(1)).max(1);
        let max_phase = (8 / per_phase).clamp(1, inner / vec);
        SharedLayout::Swizzled { vec, per_phase, max_phase, order }
    }

    /// The NVMMA layout for a 2-D tile whose contiguous dim is `inner`
    /// elements: the widest swizzle (128, 64 or 32 bytes) a row can fill.
    pub fn nvmma(inner: u32, elem_bytes: u32, transposed: bool) -> SharedLayout {
        let row = inner * elem_bytes;
        let swizzle_bytes = [128, 64, 32].into_iter().find(|&s| row >= s).unwrap_or(0);
        SharedLayout::Nvmma { swizzle_bytes, transposed, elem_bytes }
    }

    /// The layout of one stage of a multi-stage buffer laid out as `self`
    /// (the leading dim dropped).
    pub fn stage(&self) -> SharedLayout {
        match self {
            SharedLayout::Swizzled { vec, per_phase, max_phase, order } => SharedLayout::Swizzled {
                vec: *vec,
                per_phase: *per_phase,
                max_phase: *max_phase,
                order: order.iter().filter(|&&d| d != 0).map(|&d| d - 1).collect(),
            },
            nvmma => nvmma.clone(),
        }
    }

    /// A multi-stage buffer whose stages are laid out as `self`.
    pub fn staged(&self) -> SharedLayout {
        match self {
            SharedLayout::Swizzled { vec, per_phase, max_phase, order } => SharedLayout::Swizzled {
                vec: *vec,
                per_phase: *per_phase,
                max_phase: *max_phase,
                order: order.iter().map(|&d| d + 1).chain([0]).collect(),
            },
            nvmma => nvmma.clone(),
        }
    }

    /// Offset in elements of the element with row-major index `index` in a
    /// tile of `shape` (the leading dims of a 3-D tile are whole tiles).
    pub fn offset(&self, shape: &[u32], index: u32) -> u32 {
        let c = unflatten(shape, index);
        let r = shape.len();
        match self {
            SharedLayout::Swizzled { vec, per_phase, max_phase, order } => {
                let (fast, slow) = (order[0], order.get(1).copied().unwrap_or(order[0]));
                let phase = if r >= 2 { (c[slow] / per_phase) % max_phase } else { 0 };
                let mut c2 = c.clone();
                c2[fast] = ((c[fast] / vec) ^ phase) * vec + c[fast] % vec;
                // strides follow `order`: fastest dim contiguous
                let mut off = 0;
                for &d in order.iter().rev() {
                    off = off * shape[d] + c2[d];
                }
                off
            }
            SharedLayout::Nvmma { swizzle_bytes, transposed, elem_bytes } => {
                let (row_dim, col_dim) = if *transposed { (r - 1, r - 2) } else { (r - 2, r - 1) };
                let (rows, cols) = (shape[row_dim], shape[col_dim]);
                let block_cols = if *swizzle_bytes == 0 { cols } else { (swizzle_bytes / elem_bytes).min(cols) };
                let (row, col) = (c[row_dim], c[col_dim]);
                let (block, in_block) = (col / block_cols, col % block_cols);
                let mut byte = in_block * elem_bytes;
                if *swizzle_bytes != 0 {
                    // the hardware XORs byte-address bits [4, 4 + log2(chunks)) with
                    // bits [7, ...): for a row of `swizzle_bytes`, bits 7+ are row * swizzle_bytes / 128
                    let chunks = swizzle_bytes / 16;
                    let chunk = (byte / 16) ^ ((row * swizzle_bytes) >> 7) % chunks;
                    byte = chunk * 16 + byte % 16;
                }
                let tile = rows * cols;
                let batch = if r == 3 { c[0] * tile } else { 0 };
                batch + block * rows * block_cols + row * block_cols + byte / elem_bytes
            }
        }
    }

    /// Offsets of every row-major index bit: the layout as a linear map
    /// (`offset(i) = XOR of bits[b] for the set bits b of i`).
    pub fn bases(&self, shape: &[u32]) -> Vec<u32> {
        let n = shape.iter().product::<u32>().trailing_zeros();
        (0..n).map(|b| self.offset(shape, 1 << b)).collect()
    }

    /// Bytes the whole tile occupies.
    pub fn bytes(shape: &[u32], elem_bytes: u32) -> u32 {
        shape.iter().product::<u32>() * elem_bytes
    }
}

/// Row-major index of `coord` (re-exported for lowering's address math).
pub fn index_of(shape: &[u32], coord: &[u32]) -> u32 {
    flatten(shape, coord)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::linear::combine;

    fn is_linear_bijection(l: &SharedLayout, shape: &[u32]) {
        let n: u32 = shape.iter().product();
        let bases = l.bases(shape);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let off = l.offset(shape, i);
            assert_eq!(off, combine(&bases, i), "{l:?} not linear at {i}");
            assert!(!seen[off as usize], "{l:?}: offset {off} twice");
            seen[off as usize] = true;
        }
    }

    #[test]
    fn swizzles_are_linear_bijections() {
        for shape in [[16u32, 64], [64, 16], [128, 64], [32, 32]] {
            for eb in [1, 2, 4] {
                is_linear_bijection(&SharedLayout::for_ldmatrix(&shape, eb, vec![1, 0]), &shape);
                is_linear_bijection(&SharedLayout::for_ldmatrix(&shape, eb, vec![0, 1]), &shape);
                for t in [false, true] {
                    let inner = if t { shape[0] } else { shape[1] };
                    is_linear_bijection(&SharedLayout::nvmma(inner, eb, t), &shape);
                }
            }
        }
        is_linear_bijection(&SharedLayout::nvmma(64, 2, false), &[2, 64, 64]);
    }

    #[test]
    fn nvmma_128b_matches_the_hardware_pattern() {
        // fp16, 64 columns = one 128-byte row; chunk c of row r lands at chunk c ^ (r % 8)
        let l = SharedLayout::nvmma(64, 2, false);
        let shape = [16, 64];
        for r in 0..16u32 {
            for c in 0..64u32 {
                let off = l.offset(&shape, r * 64 + c);
                assert_eq!(off, r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8);
            }
        }
        // 128 columns: two 64-column blocks, the second after all rows of the first
        let off = l.offset(&[8, 128], 3 * 128 + 70);
        assert_eq!(off, 8 * 64 + 3 * 64 + ((70 - 64) / 8 ^ 3) * 8 + 6);
    }
}
