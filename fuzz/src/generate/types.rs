//! Random types within the IR's rules: power-of-two dims, small element
//! counts (so shapes stay cheap), tensors of scalars or pointers.
use arbitrary::{Result, Unstructured};
use tritium_ir::{Module, ScalarKind, Type};

const DIMS: [u32; 5] = [1, 2, 4, 8, 16];
pub const MAX_RANK: usize = 3;
const MAX_ELEMENTS: u32 = 1024;

pub fn scalar_kind(u: &mut Unstructured) -> Result<ScalarKind> {
    Ok(*u.choose(&ScalarKind::ALL)?)
}
pub fn int_kind(u: &mut Unstructured) -> Result<ScalarKind> {
    let ints: Vec<ScalarKind> = ScalarKind::ALL.into_iter().filter(|k| k.is_int()).collect();
    Ok(*u.choose(&ints)?)
}
pub fn float_kind(u: &mut Unstructured) -> Result<ScalarKind> {
    let floats: Vec<ScalarKind> = ScalarKind::ALL.into_iter().filter(|k| k.is_float()).collect();
    Ok(*u.choose(&floats)?)
}

/// Dims of rank `lo..=MAX_RANK` (empty = scalar), at most `MAX_ELEMENTS` in all.
pub fn shape(u: &mut Unstructured, lo: usize) -> Result<Vec<u32>> {
    let rank = u.int_in_range(lo..=MAX_RANK)?;
    let mut dims = Vec::with_capacity(rank);
    let mut count = 1;
    for _ in 0..rank {
        let d = *u.choose(&DIMS)?;
        let d = if count * d > MAX_ELEMENTS { 1 } else { d };
        count *= d;
        dims.push(d);
    }
    Ok(dims)
}

/// `elem` shaped by `dims` (the element itself when `dims` is empty).
pub fn shaped(m: &mut Module, dims: &[u32], elem: Type) -> Type {
    m.types.with_shape(dims, elem)
}

pub fn scalar(m: &mut Module, k: ScalarKind) -> Type {
    m.types.scalar(k)
}

/// A pointer to a random scalar, usually in the global address space.
pub fn ptr(u: &mut Unstructured, m: &mut Module) -> Result<Type> {
    let k = scalar_kind(u)?;
    let elem = m.types.scalar(k);
    let addrspace = if u.ratio(7, 8)? { 1 } else { u.int_in_range(0..=5)? };
    Ok(m.types.ptr(elem, addrspace))
}

/// Any type: a scalar or pointer, plain or as a tensor.
pub fn any(u: &mut Unstructured, m: &mut Module) -> Result<Type> {
    let dims = shape(u, 0)?;
    let elem = if u.ratio(1, 4)? { ptr(u, m)? } else { scalar(m, scalar_kind(u)?) };
    Ok(shaped(m, &dims, elem))
}
