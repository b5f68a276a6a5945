//! Kernel argument packing for `cuLaunchKernel`: each parameter's value is
//! written, in the width the codegen's kernel signature gives it (`i1` is a
//! PTX `.u8` parameter, fp32 scalars are f32), into its own 8-byte slot, and the
//! driver gets one pointer per slot. Range errors name the parameter.
use std::ffi::c_void;

use crate::error::{Error, Result};

/// The type of one kernel parameter, as the IR signature gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Ptr,
    I1,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

impl ArgKind {
    /// Parses a language dtype name (`int32`, `fp16`, ...) or `ptr`.
    pub fn parse(s: &str) -> Result<ArgKind> {
        Ok(match s {
            "ptr" => ArgKind::Ptr,
            "int1" => ArgKind::I1,
            "int8" => ArgKind::I8,
            "int16" => ArgKind::I16,
            "int32" => ArgKind::I32,
            "int64" => ArgKind::I64,
            "uint8" => ArgKind::U8,
            "uint16" => ArgKind::U16,
            "uint32" => ArgKind::U32,
            "uint64" => ArgKind::U64,
            "fp16" => ArgKind::F16,
            "bf16" => ArgKind::BF16,
            "fp32" => ArgKind::F32,
            "fp64" => ArgKind::F64,
            other => return Err(Error::Invalid(format!("kernel parameters of type '{other}' cannot be passed at launch"))),
        })
    }

    pub fn size(self) -> usize {
        match self {
            ArgKind::I1 | ArgKind::I8 | ArgKind::U8 => 1,
            ArgKind::I16 | ArgKind::U16 | ArgKind::F16 | ArgKind::BF16 => 2,
            ArgKind::I32 | ArgKind::U32 | ArgKind::F32 => 4,
            ArgKind::Ptr | ArgKind::I64 | ArgKind::U64 | ArgKind::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, ArgKind::F16 | ArgKind::BF16 | ArgKind::F32 | ArgKind::F64)
    }

    fn name(self) -> &'static str {
        match self {
            ArgKind::Ptr => "a pointer",
            ArgKind::I1 => "int1",
            ArgKind::I8 => "int8",
            ArgKind::I16 => "int16",
            ArgKind::I32 => "int32",
            ArgKind::I64 => "int64",
            ArgKind::U8 => "uint8",
            ArgKind::U16 => "uint16",
            ArgKind::U32 => "uint32",
            ArgKind::U64 => "uint64",
            ArgKind::F16 => "fp16",
            ArgKind::BF16 => "bf16",
            ArgKind::F32 => "fp32",
            ArgKind::F64 => "fp64",
        }
    }
}

/// A launch argument after extraction from Python.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue {
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A device address (tensor data pointer).
    Ptr(u64),
}

/// The little-endian bits of `v` as a `kind` parameter (low `kind.size()` bytes used).
pub fn encode(kind: ArgKind, v: ArgValue, param: &str) -> Result<u64> {
    let bad = |what: String| Error::Arg(format!("kernel argument '{param}': {what}"));
    let int_in = |i: i128, lo: i128, hi: i128| -> Result<u64> {
        if i < lo || i > hi {
            return Err(bad(format!("{i} does not fit in {}", kind.name())));
        }
        Ok(i as u64)
    };
    match (kind, v) {
        (ArgKind::Ptr, ArgValue::Ptr(p)) => Ok(p),
        (ArgKind::Ptr, ArgValue::Int(i)) => int_in(i, 0, u64::MAX as i128),
        (ArgKind::Ptr, other) => Err(bad(format!("expected a tensor or an address, got {other:?}"))),
        (k, ArgValue::Bool(b)) if !k.is_float() => Ok(b as u64),
        (ArgKind::I1, ArgValue::Int(i)) => int_in(i, 0, 1),
        (ArgKind::I8, ArgValue::Int(i)) => int_in(i, i8::MIN as i128, i8::MAX as i128).map(|x| x & 0xff),
        (ArgKind::I16, ArgValue::Int(i)) => int_in(i, i16::MIN as i128, i16::MAX as i128).map(|x| x & 0xffff),
        (ArgKind::I32, ArgValue::Int(i)) => int_in(i, i32::MIN as i128, i32::MAX as i128).map(|x| x & 0xffff_ffff),
        (ArgKind::I64, ArgValue::Int(i)) => int_in(i, i64::MIN as i128, i64::MAX as i128),
        (ArgKind::U8, ArgValue::Int(i)) => int_in(i, 0, u8::MAX as i128),
        (ArgKind::U16, ArgValue::Int(i)) => int_in(i, 0, u16::MAX as i128),
        (ArgKind::U32, ArgValue::Int(i)) => int_in(i, 0, u32::MAX as i128),
        (ArgKind::U64, ArgValue::Int(i)) => int_in(i, 0, u64::MAX as i128),
        (k, ArgValue::Float(_)) if !k.is_float() => Err(bad(format!("a float cannot be passed as {}", k.name()))),
        (k, ArgValue::Ptr(_)) => Err(bad(format!("a tensor cannot be passed as {}", k.name()))),
        (k, v) => {
            let f = match v {
                ArgValue::Float(f) => f,
                ArgValue::Int(i) => i as f64,
                ArgValue::Bool(b) => b as u8 as f64,
                ArgValue::Ptr(_) => unreachable!("handled above"),
            };
            Ok(match k {
                ArgKind::F64 => f.to_bits(),
                ArgKind::F32 => (f as f32).to_bits() as u64,
                ArgKind::F16 => f32_to_f16_bits(f as f32) as u64,
                ArgKind::BF16 => f32_to_bf16_bits(f as f32) as u64,
                _ => unreachable!("integer kinds handled above"),
            })
        }
    }
}

/// IEEE binary16 bits of `x`, rounded to nearest even (overflow → inf, NaN kept).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // subnormal half (or zero): shift the full significand into place, RNE
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let r = if rem > mid || (rem == mid && half & 1 == 1) { half + 1 } else { half };
        return sign | r as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let r = if rem > 0x1000 || (rem == 0x1000 && half & 1 == 1) { half + 1 } else { half };
    sign | r as u16 // a carry into the exponent is the correct rounding (up to inf)
}

/// bfloat16 bits of `x`, rounded to nearest even (NaN kept quiet).
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    ((b + round) >> 16) as u16
}

/// DLPack's `DLTensor` (dlpack.h, ABI stable since v0.6): a producer's
/// `__dlpack__()` capsule named "dltensor" points at a `DLManagedTensor`,
/// whose first member is this struct.
#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device_type: i32,
    pub device_id: i32,
    pub ndim: i32,
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLDeviceType` values a kernel can read: CUDA memory and CUDA managed memory.
pub const DL_CUDA: i32 = 2;
pub const DL_CUDA_MANAGED: i32 = 13;

/// What a launch needs from a DLPack tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLPackArg {
    /// `data + byte_offset`: the address of the first element.
    pub address: u64,
    pub device_type: i32,
    pub device_id: i32,
    /// `(DLDataTypeCode, bits)`; vector types (lanes != 1) are refused when read.
    pub code: u8,
    pub bits: u8,
}

impl DLPackArg {
    /// Reads `t`. Only the fields above are touched; ownership stays with the caller.
    ///
    /// # Safety
    /// `t` must point at a live `DLTensor`.
    pub unsafe fn read(t: *const DLTensor) -> Result<DLPackArg> {
        let t = &*t;
        if t.lanes != 1 {
            return Err(Error::Arg(format!(
                "DLPack tensors of vector type (lanes = {}) cannot be passed to a kernel",
                t.lanes
            )));
        }
        let address = (t.data as u64)
            .checked_add(t.byte_offset)
            .ok_or_else(|| Error::Arg("DLPack tensor address overflows 64 bits".into()))?;
        Ok(DLPackArg { address, device_type: t.device_type, device_id: t.device_id, code: t.code, bits: t.bits })
    }

    pub fn on_cuda(&self) -> bool {
        matches!(self.device_type, DL_CUDA | DL_CUDA_MANAGED)
    }

    /// The language dtype name of the element type, or None for one kernels cannot take.
    pub fn dtype_name(&self) -> Option<&'static str> {
        Some(match (self.code, self.bits) {
            (0, 8) => "int8",
            (0, 16) => "int16",
            (0, 32) => "int32",
            (0, 64) => "int64",
            (1, 8) => "uint8",
            (1, 16) => "uint16",
            (1, 32) => "uint32",
            (1, 64) => "uint64",
            (2, 16) => "fp16",
            (2, 32) => "fp32",
            (2, 64) => "fp64",
            (4, 16) => "bf16",
            (6, 8) => "int1",
            (10, 8) => "fp8e4nv",
            (11, 8) => "fp8e4b8",
            (12, 8) => "fp8e5",
            (13, 8) => "fp8e5b16",
            _ => return None,
        })
    }
}

/// Packed arguments of one launch: slots hold the values, `pointers` the
/// addresses `cuLaunchKernel` reads them from.
#[derive(Default)]
pub struct ArgPack {
    slots: Vec<u64>,
    pointers: Vec<*mut c_void>,
    /// Tensor maps passed by value, after every slot (boxed: their
    /// addresses stay put while the pack grows).
    maps: Vec<Box<crate::TensorMap>>,
    /// Values after the maps (a kernel's global scratch address).
    tail: Vec<u64>,
}

impl ArgPack {
    pub fn with_capacity(n: usize) -> ArgPack {
        ArgPack { slots: Vec::with_capacity(n), pointers: Vec::with_capacity(n), maps: Vec::new(), tail: Vec::new() }
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.pointers.clear();
        self.maps.clear();
        self.tail.clear();
    }

    /// A tensor map parameter; maps follow every `push`ed value.
    pub fn push_map(&mut self, map: crate::TensorMap) {
        self.maps.push(Box::new(map));
    }

    pub fn push(&mut self, kind: ArgKind, v: ArgValue, param: &str) -> Result<()> {
        self.slots.push(encode(kind, v, param)?);
        Ok(())
    }

    /// A 64-bit parameter after the maps (the global scratch address, the
    /// last parameter of a kernel that builds tensor maps).
    pub fn push_after_maps(&mut self, v: u64) {
        self.tail.push(v);
    }

    pub fn len(&self) -> usize {
        self.slots.len() + self.maps.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot values (for tests and debugging).
    pub fn slots(&self) -> &[u64] {
        &self.slots
    }

    /// One pointer per slot; valid until the pack is next modified. A value
    /// narrower than 8 bytes sits at its slot's start (little-endian), which
    /// is where the driver reads a parameter of that size.
    pub fn kernel_params(&mut self) -> *mut *mut c_void {
        self.pointers.clear();
        for s in self.slots.iter_mut() {
            self.pointers.push(s as *mut u64 as *mut c_void);
        }
        for m in self.maps.iter_mut() {
            self.pointers.push(&mut **m as *mut crate::TensorMap as *mut c_void);
        }
        for s in self.tail.iter_mut() {
            self.pointers.push(s as *mut u64 as *mut c_void);
        }
        if self.pointers.is_empty() {
            std::ptr::null_mut()
        } else {
            self.pointers.as_mut_ptr()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_after_the_maps_come_last() {
        // a kernel's parameters: its values, its host tensor maps, then the
        // global scratch address (device-built maps)
        let mut pack = ArgPack::with_capacity(2);
        pack.push(ArgKind::I32, ArgValue::Int(7), "n").unwrap();
        pack.push_after_maps(0xabc0);
        pack.push_map(crate::TensorMap::zeroed());
        assert_eq!(pack.len(), 3);
        let params = pack.kernel_params();
        // SAFETY: three pointers into the pack, which is not modified meanwhile
        let (first, last) = unsafe { (*(*params as *const u32), *(*params.add(2) as *const u64)) };
        assert_eq!((first, last), (7, 0xabc0));
        pack.clear();
        assert!(pack.is_empty());
    }

    #[test]
    fn kinds_parse_and_size() {
        assert_eq!(ArgKind::parse("int1").unwrap().size(), 1);
        assert_eq!(ArgKind::parse("bf16").unwrap().size(), 2);
        assert_eq!(ArgKind::parse("fp32").unwrap().size(), 4);
        assert_eq!(ArgKind::parse("ptr").unwrap().size(), 8);
        assert!(ArgKind::parse("fp8e4nv").unwrap_err().to_string().contains("fp8e4nv"));
    }

    #[test]
    fn integers_are_range_checked_and_truncated_to_width() {
        assert_eq!(encode(ArgKind::I32, ArgValue::Int(-1), "n").unwrap(), 0xffff_ffff);
        assert_eq!(encode(ArgKind::I8, ArgValue::Int(-2), "n").unwrap(), 0xfe);
        assert_eq!(encode(ArgKind::I64, ArgValue::Int(-1), "n").unwrap(), u64::MAX);
        assert_eq!(encode(ArgKind::U64, ArgValue::Int(u64::MAX as i128), "n").unwrap(), u64::MAX);
        let e = encode(ArgKind::I32, ArgValue::Int(1 << 31), "n").unwrap_err().to_string();
        assert!(e.contains("'n'") && e.contains("int32"), "{e}");
        assert!(encode(ArgKind::U32, ArgValue::Int(-1), "n").is_err());
        assert!(encode(ArgKind::I1, ArgValue::Int(2), "flag").is_err());
    }

    #[test]
    fn bools_floats_and_pointers() {
        assert_eq!(encode(ArgKind::I1, ArgValue::Bool(true), "b").unwrap(), 1);
        assert_eq!(encode(ArgKind::I32, ArgValue::Bool(true), "b").unwrap(), 1);
        assert_eq!(encode(ArgKind::F32, ArgValue::Float(1.5), "x").unwrap(), 1.5f32.to_bits() as u64);
        assert_eq!(encode(ArgKind::F64, ArgValue::Float(1.5), "x").unwrap(), 1.5f64.to_bits());
        assert_eq!(encode(ArgKind::F32, ArgValue::Int(3), "x").unwrap(), 3.0f32.to_bits() as u64);
        assert_eq!(encode(ArgKind::Ptr, ArgValue::Ptr(0xdead_beef_0000), "p").unwrap(), 0xdead_beef_0000);
        assert!(encode(ArgKind::I32, ArgValue::Float(1.0), "n").unwrap_err().to_string().contains("'n'"));
        assert!(encode(ArgKind::F32, ArgValue::Ptr(16), "x").is_err());
        assert!(encode(ArgKind::Ptr, ArgValue::Float(1.0), "p").is_err());
    }

    #[test]
    fn half_conversions_round_to_nearest_even() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00); // rounds up to inf
        assert_eq!(f32_to_f16_bits(1e-8), 0); // below half the smallest subnormal
        assert_eq!(f32_to_f16_bits(5.960_464_5e-8), 0x0001); // smallest subnormal
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert_eq!(f32_to_f16_bits(f32::NAN) & 0x7c00, 0x7c00);
        assert_ne!(f32_to_f16_bits(f32::NAN) & 0x3ff, 0);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0)
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16_bits(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
    }

    #[test]
    fn dlpack_tensor_reads_address_dtype_and_device() {
        let mut shape = [4i64];
        let mut t = DLTensor {
            data: 0x1000 as *mut c_void,
            device_type: DL_CUDA,
            device_id: 1,
            ndim: 1,
            code: 2,
            bits: 32,
            lanes: 1,
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 8,
        };
        let a = unsafe { DLPackArg::read(&t) }.unwrap();
        assert_eq!((a.address, a.device_id, a.dtype_name()), (0x1008, 1, Some("fp32")));
        assert!(a.on_cuda());
        t.device_type = 1;
        t.code = 4;
        t.bits = 16;
        let a = unsafe { DLPackArg::read(&t) }.unwrap();
        assert!(!a.on_cuda());
        assert_eq!(a.dtype_name(), Some("bf16"));
        t.bits = 8;
        // DLPack's float8 codes: e4m3fn 10, e4m3fnuz 11, e5m2 12, e5m2fnuz 13
        for (code, name) in [(10, "fp8e4nv"), (11, "fp8e4b8"), (12, "fp8e5"), (13, "fp8e5b16")] {
            t.code = code;
            assert_eq!(unsafe { DLPackArg::read(&t) }.unwrap().dtype_name(), Some(name));
        }
        t.bits = 16;
        t.code = 5; // complex
        assert_eq!(unsafe { DLPackArg::read(&t) }.unwrap().dtype_name(), None);
        t.lanes = 4;
        assert!(unsafe { DLPackArg::read(&t) }.unwrap_err().to_string().contains("lanes = 4"));
    }

    #[test]
    fn pack_points_at_each_slot() {
        let mut p = ArgPack::with_capacity(3);
        p.push(ArgKind::Ptr, ArgValue::Ptr(0x1000), "x").unwrap();
        p.push(ArgKind::I32, ArgValue::Int(7), "n").unwrap();
        p.push(ArgKind::I1, ArgValue::Bool(true), "f").unwrap();
        let params = p.kernel_params();
        let read = |i: usize, size: usize| -> Vec<u8> {
            let ptr = unsafe { *params.add(i) } as *const u8;
            unsafe { std::slice::from_raw_parts(ptr, size) }.to_vec()
        };
        assert_eq!(read(0, 8), 0x1000u64.to_le_bytes());
        assert_eq!(read(1, 4), 7u32.to_le_bytes());
        assert_eq!(read(2, 1), [1u8]);
        p.clear();
        assert!(p.kernel_params().is_null());
    }
}
