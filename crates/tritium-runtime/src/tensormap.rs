//! CUDA tensor maps (CUtensorMap) for TMA kernels: a host TensorDescriptor
//! encoded with `cuTensorMapEncodeTiled` at launch, passed by value as a
//! 128-byte `__grid_constant__` parameter. The arguments are checked here
//! first, against the rules the driver documents, so a bad descriptor is an
//! error naming what is wrong rather than the driver's CUDA_ERROR_INVALID_VALUE.
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Mutex;

use crate::cuda;
use crate::error::{Error, Result};

/// An encoded map, aligned as the kernel parameter it is copied into.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap(pub [u8; 128]);

impl TensorMap {
    pub const fn zeroed() -> TensorMap {
        TensorMap([0; 128])
    }
}

/// cuTensorMapEncodeTiled (cuda.h, CUDA 12).
pub type EncodeTiled = unsafe extern "C" fn(
    *mut TensorMap,
    c_int,         // CUtensorMapDataType
    c_uint,        // rank
    *mut c_void,   // global address
    *const u64,    // global dims, innermost first
    *const u64,    // global strides in bytes, of dims 1.. (rank - 1 of them)
    *const u32,    // box dims, innermost first
    *const u32,    // element strides
    c_int,         // interleave
    c_int,         // swizzle
    c_int,         // L2 promotion
    c_int,         // out-of-bounds fill
) -> cuda::CuResult;

/// CUtensorMapDataType of an element type named as kernel signatures name
/// it (`fp16`, `int32`, `fp8e4nv`, ...); fp8 and bytes travel as UINT8.
pub fn data_type(dtype: &str) -> Option<(c_int, u32)> {
    Some(match dtype {
        "int8" | "uint8" | "fp8e4nv" | "fp8e5" | "fp8e4b15" | "fp8e4b8" | "fp8e5b16" => (0, 1),
        "int16" | "uint16" => (1, 2),
        "uint32" => (2, 4),
        "int32" => (3, 4),
        "uint64" => (4, 8),
        "int64" => (5, 8),
        "fp16" => (6, 2),
        "fp32" => (7, 4),
        "fp64" => (8, 8),
        "bf16" => (9, 2),
        _ => return None,
    })
}

fn is_float(data_type: c_int) -> bool {
    matches!(data_type, 6..=12)
}

/// Everything one map is encoded from. Shapes, strides and box are in the
/// kernel's order (outermost dimension first); strides in elements, the
/// last one 1.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MapRequest {
    pub data_type: c_int,
    pub elem_bytes: u32,
    pub base: u64,
    pub shape: Vec<u64>,
    pub strides: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub swizzle_bytes: u32,
    pub nan_fill: bool,
}

/// The driver's arguments for a request, innermost dimension first.
#[derive(Debug, PartialEq, Eq)]
pub struct EncodeArgs {
    pub dims: Vec<u64>,
    pub strides_bytes: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub swizzle: c_int,
    pub fill: c_int,
}

/// Checks `r` against cuTensorMapEncodeTiled's rules; the error names the
/// dimension and the rule.
pub fn check(r: &MapRequest) -> std::result::Result<EncodeArgs, String> {
    let rank = r.shape.len();
    if !(1..=5).contains(&rank) || r.strides.len() != rank || r.box_dims.len() != rank {
        return Err(format!("a tensor map has 1 to 5 dimensions with a stride and a box size each, got shape {:?}, strides {:?}, box {:?}", r.shape, r.strides, r.box_dims));
    }
    if r.base % 16 != 0 {
        return Err(format!("the base address 0x{:x} is not 16-byte aligned (TMA needs it)", r.base));
    }
    for (d, &s) in r.shape.iter().enumerate() {
        if s == 0 || s > 1 << 32 {
            return Err(format!("shape[{d}] = {s}: TMA needs extents from 1 to 2^32"));
        }
    }
    if r.strides[rank - 1] != 1 {
        return Err(format!("the last stride must be 1, got {}", r.strides[rank - 1]));
    }
    for d in 0..rank - 1 {
        let bytes = r.strides[d].checked_mul(r.elem_bytes as u64).unwrap_or(u64::MAX);
        if bytes % 16 != 0 || bytes >= 1 << 40 {
            return Err(format!(
                "strides[{d}] = {} elements = {bytes} bytes: TMA needs a multiple of 16 bytes below 2^40",
                r.strides[d]
            ));
        }
    }
    for (d, &b) in r.box_dims.iter().enumerate() {
        if b == 0 || b > 256 {
            return Err(format!("block dimension {d} is {b}: a TMA box is 1 to 256 elements per dimension"));
        }
    }
    let inner = r.box_dims[rank - 1] * r.elem_bytes;
    if inner % 16 != 0 {
        return Err(format!("the box's rows are {inner} bytes: TMA needs a multiple of 16"));
    }
    let swizzle = match r.swizzle_bytes {
        0 => 0,
        32 => 1,
        64 => 2,
        128 => 3,
        s => return Err(format!("swizzle of {s} bytes (0, 32, 64 or 128)")),
    };
    if r.swizzle_bytes != 0 && inner > r.swizzle_bytes {
        return Err(format!("the box's rows are {inner} bytes, wider than its {}-byte swizzle", r.swizzle_bytes));
    }
    if r.nan_fill && !is_float(r.data_type) {
        return Err("NaN padding needs a floating-point element type".into());
    }
    Ok(EncodeArgs {
        dims: r.shape.iter().rev().copied().collect(),
        strides_bytes: r.strides[..rank - 1].iter().rev().map(|&s| s * r.elem_bytes as u64).collect(),
        box_dims: r.box_dims.iter().rev().copied().collect(),
        swizzle,
        fill: r.nan_fill as c_int,
    })
}

/// Encodes `r` (checked first) with the driver.
pub fn encode(r: &MapRequest) -> Result<TensorMap> {
    let a = check(r).map_err(Error::Arg)?;
    let d = cuda::driver()?;
    let f = d.tensor_map_encode_tiled.ok_or_else(|| {
        Error::Invalid("TMA kernels need cuTensorMapEncodeTiled (a CUDA 12 driver), which this driver lacks".into())
    })?;
    let mut map = TensorMap::zeroed();
    let elem_strides = [1u32; 5];
    const L2_PROMOTION_128B: c_int = 2;
    // SAFETY: every array holds `rank` entries (strides rank - 1), as checked
    let rc = unsafe {
        f(
            &mut map,
            r.data_type,
            a.dims.len() as c_uint,
            r.base as *mut c_void,
            a.dims.as_ptr(),
            a.strides_bytes.as_ptr(),
            a.box_dims.as_ptr(),
            elem_strides.as_ptr(),
            0,
            a.swizzle,
            L2_PROMOTION_128B,
            a.fill,
        )
    };
    d.check("cuTensorMapEncodeTiled", rc)?;
    Ok(map)
}

/// Maps already encoded for one kernel parameter, by request: a launch with
/// the same tensor, shape and strides reuses its map (a hash look-up).
#[derive(Default)]
pub struct MapCache {
    maps: Mutex<HashMap<MapRequest, TensorMap>>,
}

/// Entries kept per parameter before the cache starts over (fresh tensors
/// every step would otherwise grow it without bound).
const MAX_CACHED: usize = 1024;

impl MapCache {
    pub fn get(&self, r: &MapRequest) -> Result<TensorMap> {
        if let Some(m) = self.maps.lock().map_err(|_| Error::Invalid("tensor map cache poisoned".into()))?.get(r) {
            return Ok(*m);
        }
        let map = encode(r)?;
        let mut maps = self.maps.lock().map_err(|_| Error::Invalid("tensor map cache poisoned".into()))?;
        if maps.len() >= MAX_CACHED {
            maps.clear();
        }
        maps.insert(r.clone(), map);
        Ok(map)
    }

    pub fn len(&self) -> usize {
        self.maps.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp16(base: u64, shape: &[u64], strides: &[u64], box_dims: &[u32], swizzle: u32) -> MapRequest {
        MapRequest {
            data_type: 6,
            elem_bytes: 2,
            base,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            box_dims: box_dims.to_vec(),
            swizzle_bytes: swizzle,
            nan_fill: false,
        }
    }

    #[test]
    fn arguments_reach_the_driver_innermost_first() {
        let a = check(&fp16(0x1000, &[100, 72], &[72, 1], &[64, 64], 128)).unwrap();
        assert_eq!(a.dims, vec![72, 100]);
        assert_eq!(a.strides_bytes, vec![144]);
        assert_eq!(a.box_dims, vec![64, 64]);
        assert_eq!((a.swizzle, a.fill), (3, 0));
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = |r: MapRequest| check(&r).unwrap_err();
        assert!(e(fp16(0x1008, &[64, 64], &[64, 1], &[64, 64], 128)).contains("0x1008 is not 16-byte aligned"));
        assert!(e(fp16(0x1000, &[64, 64], &[68, 1], &[64, 64], 128)).contains("strides[0] = 68 elements = 136 bytes"));
        assert!(e(fp16(0x1000, &[64, 64], &[64, 2], &[64, 64], 128)).contains("last stride must be 1"));
        assert!(e(fp16(0x1000, &[512, 64], &[64, 1], &[512, 64], 128)).contains("block dimension 0 is 512"));
        assert!(e(fp16(0x1000, &[64, 64], &[64, 1], &[64, 4], 0)).contains("rows are 8 bytes"));
        assert!(e(fp16(0x1000, &[64, 128], &[128, 1], &[64, 128], 128)).contains("wider than its 128-byte swizzle"));
        assert!(e(fp16(0x1000, &[0, 64], &[64, 1], &[64, 64], 128)).contains("shape[0] = 0"));
        let mut ints = fp16(0x1000, &[64, 64], &[64, 1], &[64, 64], 128);
        ints.data_type = 3;
        ints.elem_bytes = 4;
        ints.nan_fill = true;
        ints.box_dims = vec![64, 32];
        assert!(e(ints).contains("NaN padding"));
    }

    #[test]
    fn element_types() {
        assert_eq!(data_type("bf16"), Some((9, 2)));
        assert_eq!(data_type("fp8e5"), Some((0, 1)));
        assert_eq!(data_type("int1"), None);
    }

    #[test]
    fn maps_are_aligned_parameters() {
        assert_eq!(std::mem::align_of::<TensorMap>(), 128);
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
    }
}
