//! Which layouts a `dot` gets: wgmma (v3) accumulators with NVMMA shared
//! operands where the target and the tile allow it, else mma.sync (v2)
//! accumulators with swizzled shared operands, else none (an FMA loop). AMD
//! targets ask `mma::amd_dot_layouts` (MFMA, WMMA).
use tritium_ir::{Function, ScalarKind, TypeTable, Value};

use super::assign::LayoutOptions;
use super::{Layout, Mma, SharedLayout};

/// Which tensor-core instructions the target has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaSupport {
    None,
    /// `mma.sync` (sm_80+); `fp8` when sm_89+.
    V2 { fp8: bool },
    /// `wgmma` (sm_90a), with `mma.sync` for what it cannot do.
    V3,
    /// AMD MFMA 16x16x16 (CDNA, wave64) and WMMA 16x16x16 (RDNA 3, wave32): `mma::amd_dot_layouts`.
    Mfma,
    Wmma,
}

/// The accumulator, A and B layouts of a dot, or None when it runs without
/// tensor cores (fp32 with `ieee` precision, fp64, or no MMA on the target).
pub fn dot_layouts(
    types: &TypeTable,
    f: &Function,
    a: Value,
    b: Value,
    res: Value,
    precision: &str,
    b_k_major: bool,
    opts: &LayoutOptions,
) -> Option<(Layout, Layout, Layout)> {
    let a_ty = f.value_type(a);
    let (a_shape, b_shape) = (types.dims(a_ty).to_vec(), types.dims(f.value_type(b)).to_vec());
    let res_shape = types.dims(f.value_type(res)).to_vec();
    let kind = types.scalar_kind(a_ty)?;
    if let Some(version) = match opts.mma {
        MmaSupport::Mfma => Some(super::mma::MFMA),
        MmaSupport::Wmma => Some(super::mma::WMMA),
        _ => None,
    } {
        let kinds = [kind, types.scalar_kind(f.value_type(b))?, types.scalar_kind(f.value_type(res))?];
        return super::mma::amd_dot_layouts(version, kinds, &a_shape, &b_shape, &res_shape, opts.num_warps);
    }
    let fp8 = matches!(kind, ScalarKind::F8E4M3 | ScalarKind::F8E5M2);
    let k_width = match kind {
        ScalarKind::F16 | ScalarKind::BF16 => 2,
        ScalarKind::F32 if precision != "ieee" => 1,
        ScalarKind::I8 | ScalarKind::U8 => 4,
        _ if fp8 => 4,
        _ => return None,
    };
    if opts.mma == MmaSupport::None || (fp8 && opts.mma == (MmaSupport::V2 { fp8: false })) {
        return None;
    }
    let rank = res_shape.len();
    let (m, n, k) = (res_shape[rank - 2], res_shape[rank - 1], a_shape[rank - 1]);
    if m < 16 || n < 16 || k < 8 * k_width || b_shape[rank - 2] != k {
        return None;
    }
    let elem_bytes = kind.bits() / 8;
    // tf32x3 splits each operand in registers: mma.sync's path does that
    let split = kind == ScalarKind::F32 && precision == "tf32x3";
    if opts.mma == MmaSupport::V3 && !split && rank == 2 && m % 64 == 0 && opts.num_warps % 4 == 0 && n % 16 == 0 {
        let groups_m = (opts.num_warps / 4).min(m / 64).max(1);
        let wm = 4 * groups_m;
        let wn = opts.num_warps / wm;
        let instr_n = (n / wn).clamp(8, 256);
        let mma = Mma { version: 3, warps_per_cta: vec![wm, wn], instr_shape: vec![64, instr_n] };
        // A is K-major ([M, K], K contiguous). B keeps N contiguous (MN-major,
        // as row-major B loads arrive) where wgmma can transpose it (16-bit
        // types); tf32, fp8 and int8 wgmma read K-major B only
        let sa = SharedLayout::nvmma(k, elem_bytes, false);
        let sb = if elem_bytes == 2 && !b_k_major { SharedLayout::nvmma(n, elem_bytes, false) } else { SharedLayout::nvmma(k, elem_bytes, true) };
        return Some((Layout::Mma(mma), Layout::Shared(sa), Layout::Shared(sb)));
    }
    // mma.sync: spread warps where the tile has the most instruction tiles left
    let warps = super::mma::spread_warps(&res_shape, opts.num_warps, [16, 8]);
    let mma = Mma { version: 2, warps_per_cta: warps, instr_shape: vec![16, 8] };
    // operands staged in shared memory, each MMA step loading its fragments
    // (`DotOperand` registers) from there: A K-contiguous, B N-contiguous
    // (B K-contiguous instead when it was loaded that way: copies stay whole)
    let order: Vec<usize> = (0..rank).rev().collect();
    let mut b_order = order.clone();
    if b_k_major {
        b_order.swap(0, 1);
    }
    let a_l = SharedLayout::for_ldmatrix(&a_shape[rank - 2..], elem_bytes, vec![1, 0]);
    let b_l = SharedLayout::for_ldmatrix(&b_shape[rank - 2..], elem_bytes, if b_k_major { vec![0, 1] } else { vec![1, 0] });
    let with_order = |l: SharedLayout, order: &[usize]| match l {
        SharedLayout::Swizzled { vec, per_phase, max_phase, .. } => SharedLayout::Swizzled { vec, per_phase, max_phase, order: order.to_vec() },
        other => other,
    };
    Some((Layout::Mma(mma), Layout::Shared(with_order(a_l, &order)), Layout::Shared(with_order(b_l, &b_order))))
}
