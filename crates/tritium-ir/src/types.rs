//! Types and the per-module type interner: a `Type` is an index, so type
//! equality is index equality. Interning enforces the structural rules
//! (pointers point to scalars, tensors hold scalars or pointers).
use std::collections::HashMap;
use std::fmt;

use crate::entities::{Arena, EntityRef, Type};

/// The most elements a tensor type may have (Triton's TRITON_MAX_TENSOR_NUMEL);
/// the verifier rejects larger ones, the frontend reports them at their line.
pub const MAX_TENSOR_NUMEL: u64 = 1 << 20;

/// Scalar kinds with their binary codes (docs/ir.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarKind {
    I1 = 0,
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F16 = 9,
    BF16 = 10,
    F32 = 11,
    F64 = 12,
    F8E4M3 = 13,
    F8E5M2 = 14,
    /// Triton's fp8e4b15: e4m3 with bias 15, every code finite (no NaN, no inf).
    F8E4B15 = 15,
    /// e4m3fnuz (Triton's fp8e4b8): bias 8, one NaN (0x80), no -0, no inf.
    F8E4B8 = 16,
    /// e5m2fnuz (Triton's fp8e5b16): bias 16, one NaN (0x80), no -0, no inf.
    F8E5B16 = 17,
}

use ScalarKind::*;

impl ScalarKind {
    pub const ALL: [ScalarKind; 18] = [
        I1, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, F8E4M3, F8E5M2, F8E4B15, F8E4B8, F8E5B16,
    ];

    /// Signed integer kinds (not i1: it extends with zeros, as codegen does).
    pub fn is_signed(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64)
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, U8 | U16 | U32 | U64)
    }

    pub fn from_code(code: u8) -> Option<ScalarKind> {
        Self::ALL.get(code as usize).copied()
    }
    pub fn code(self) -> u8 {
        self as u8
    }
    pub fn name(self) -> &'static str {
        match self {
            I1 => "i1",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            F8E4M3 => "f8e4m3",
            F8E5M2 => "f8e5m2",
            F8E4B15 => "f8e4b15",
            F8E4B8 => "f8e4b8",
            F8E5B16 => "f8e5b16",
        }
    }
    pub fn from_name(s: &str) -> Option<ScalarKind> {
        Self::ALL.iter().copied().find(|k| k.name() == s)
    }
    pub fn bits(self) -> u32 {
        match self {
            I1 => 1,
            I8 | U8 | F8E4M3 | F8E5M2 | F8E4B15 | F8E4B8 | F8E5B16 => 8,
            I16 | U16 | F16 | BF16 => 16,
            I32 | U32 | F32 => 32,
            I64 | U64 | F64 => 64,
        }
    }
    /// Integers include `i1`.
    pub fn is_int(self) -> bool {
        !self.is_float()
    }
    pub fn is_float(self) -> bool {
        matches!(self, F16 | BF16 | F32 | F64) || self.is_fp8()
    }
    pub fn is_fp8(self) -> bool {
        matches!(self, F8E4M3 | F8E5M2 | F8E4B15 | F8E4B8 | F8E5B16)
    }
}

/// The structure of a type; `elem` fields refer to earlier interned types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeData {
    Scalar(ScalarKind),
    Ptr { elem: Type, addrspace: u32 },
    Tensor { dims: Vec<u32>, elem: Type },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("type index {0} out of range")]
    UnknownType(u32),
    #[error("pointer element must be a scalar type")]
    PtrElem,
    #[error("tensor element must be a scalar or pointer type")]
    TensorElem,
    #[error("tensor must have rank >= 1")]
    EmptyTensor,
}

/// The module's type interner.
#[derive(Clone, Debug, Default)]
pub struct TypeTable {
    types: Arena<Type, TypeData>,
    index: HashMap<TypeData, Type>,
}

impl PartialEq for TypeTable {
    fn eq(&self, other: &Self) -> bool {
        self.types == other.types
    }
}

impl TypeTable {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.types.len()
    }
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Type, &TypeData)> {
        self.types.iter()
    }
    pub fn contains(&self, t: Type) -> bool {
        self.types.contains(t)
    }

    /// Interns `data` after checking its structure.
    pub fn try_intern(&mut self, data: TypeData) -> Result<Type, TypeError> {
        if let Some(&t) = self.index.get(&data) {
            return Ok(t);
        }
        match &data {
            TypeData::Scalar(_) => {}
            TypeData::Ptr { elem, .. } => match self.types.get(*elem) {
                None => return Err(TypeError::UnknownType(elem.0)),
                Some(TypeData::Scalar(_)) => {}
                Some(_) => return Err(TypeError::PtrElem),
            },
            TypeData::Tensor { dims, elem } => {
                if dims.is_empty() {
                    return Err(TypeError::EmptyTensor);
                }
                match self.types.get(*elem) {
                    None => return Err(TypeError::UnknownType(elem.0)),
                    Some(TypeData::Tensor { .. }) => return Err(TypeError::TensorElem),
                    Some(_) => {}
                }
            }
        }
        let t = self.types.push(data.clone());
        self.index.insert(data, t);
        Ok(t)
    }

    /// Interns a type built by Rust code; a malformed one is a programming error.
    pub fn intern(&mut self, data: TypeData) -> Type {
        match self.try_intern(data) {
            Ok(t) => t,
            Err(e) => panic!("malformed type: {e}"),
        }
    }
    pub fn scalar(&mut self, k: ScalarKind) -> Type {
        self.intern(TypeData::Scalar(k))
    }
    pub fn ptr(&mut self, elem: Type, addrspace: u32) -> Type {
        self.intern(TypeData::Ptr { elem, addrspace })
    }
    pub fn tensor(&mut self, dims: &[u32], elem: Type) -> Type {
        self.intern(TypeData::Tensor { dims: dims.to_vec(), elem })
    }
    /// `t`'s shape with element `elem` (a scalar when `dims` is empty).
    pub fn with_shape(&mut self, dims: &[u32], elem: Type) -> Type {
        if dims.is_empty() {
            elem
        } else {
            self.tensor(dims, elem)
        }
    }

    pub fn data(&self, t: Type) -> &TypeData {
        &self.types[t]
    }
    pub fn lookup(&self, data: &TypeData) -> Option<Type> {
        self.index.get(data).copied()
    }
    /// Dims of a tensor; empty for scalars and pointers.
    pub fn dims(&self, t: Type) -> &[u32] {
        match &self.types[t] {
            TypeData::Tensor { dims, .. } => dims,
            _ => &[],
        }
    }
    /// The element of a tensor, or the type itself.
    pub fn elem(&self, t: Type) -> Type {
        match &self.types[t] {
            TypeData::Tensor { elem, .. } => *elem,
            _ => t,
        }
    }
    pub fn is_tensor(&self, t: Type) -> bool {
        matches!(self.types[t], TypeData::Tensor { .. })
    }
    /// The scalar kind of `t`'s element, if it is a scalar (not a pointer).
    pub fn scalar_kind(&self, t: Type) -> Option<ScalarKind> {
        match &self.types[self.elem(t)] {
            TypeData::Scalar(k) => Some(*k),
            _ => None,
        }
    }
    /// The pointee of `t`'s element, if it is a pointer.
    pub fn pointee(&self, t: Type) -> Option<Type> {
        match &self.types[self.elem(t)] {
            TypeData::Ptr { elem, .. } => Some(*elem),
            _ => None,
        }
    }
    /// Bytes of the scalar a pointer (or tensor of pointers) points to.
    pub fn pointee_bytes(&self, t: Type) -> Option<u32> {
        self.pointee(t).and_then(|p| self.scalar_kind(p)).map(|k| k.bits().div_ceil(8))
    }
    pub fn same_shape(&self, a: Type, b: Type) -> bool {
        self.dims(a) == self.dims(b) && self.is_tensor(a) == self.is_tensor(b)
    }
    pub fn display(&self, t: Type) -> TypeDisplay<'_> {
        TypeDisplay { table: self, ty: t }
    }
}

/// Text spelling of a type: `i32`, `ptr<f32>`, `ptr<f16, 3>`, `tensor<4x8xf32>`.
pub struct TypeDisplay<'a> {
    table: &'a TypeTable,
    ty: Type,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(data) = self.table.types.get(self.ty) else {
            return write!(f, "<bad type {}>", self.ty.index());
        };
        match data {
            TypeData::Scalar(k) => f.write_str(k.name()),
            TypeData::Ptr { elem, addrspace } => {
                write!(f, "ptr<{}", self.table.display(*elem))?;
                if *addrspace != 1 {
                    write!(f, ", {addrspace}")?;
                }
                f.write_str(">")
            }
            TypeData::Tensor { dims, elem } => {
                f.write_str("tensor<")?;
                for d in dims {
                    write!(f, "{d}x")?;
                }
                write!(f, "{}>", self.table.display(*elem))
            }
        }
    }
}
