//! The blocked layout: each thread holds `size_per_thread` contiguous
//! elements per dim, lanes and warps tile the rest, fastest dim first; and
//! how the canonical one for a tensor rank is chosen (16-byte accesses along
//! the contiguous last dim, spare threads replicating).
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
        let order: Vec<usize> = (0..shape.len()).rev().collect();
        Blocked::for_shape_in_order(shape, order, elem_bytes, num_warps, warp_size, max_access_bytes)
    }

    /// `for_shape` with the dims taken fastest first in `order` (a global
    /// access contiguous along another dim than the last).
    pub fn for_shape_in_order(shape: &[u32], order: Vec<usize>, elem_bytes: u32, num_warps: u32, warp_size: u32, max_access_bytes: u32) -> Blocked {
        let rank = shape.len();
        let numel: u32 = shape.iter().product();
        let mut spt = vec![1u32; rank];
        let last = order[0];
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
    fn another_fast_dim_gets_the_chunks() {
        // a [64, 32] tile contiguous along dim 0 (a transposed operand)
        let b = Blocked::for_shape_in_order(&[64, 32], vec![0, 1], 2, 4, 32, 16);
        assert_eq!(b.size_per_thread, vec![8, 1]);
        assert_eq!(b.threads_per_warp, vec![8, 4]);
        assert_eq!(b.warps_per_cta, vec![1, 4]);
        assert_eq!(b.order, vec![0, 1]);
    }
}
