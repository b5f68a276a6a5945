//! What one argument contributes to the key: a code (type id, shifted, with
//! the bits of the specialization properties it has) and its value as read,
//! or an inline constexpr, or "let Python key this call".
use std::ptr::addr_of_mut;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::{KeyPlan, Param, CONSTEXPR_SLOT, INLINE_BOOL, INLINE_INT, INLINE_NONE};
use crate::reads::{address_of, dtype_of, int_value, is_type, Addr, DirectReads};

/// Outcome of keying one argument.
pub(super) enum Entry {
    /// a runtime argument: its code and value
    Code(u64, Read),
    /// a constexpr: (INLINE_* tag, value), or (CONSTEXPR_SLOT, 0) for an object
    Const(u64, u64),
    /// let Python key this call
    Fallback,
}

/// One runtime argument's value as the key read it; the launcher packs these.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Read {
    Bool(bool),
    Int(i64),
    /// an int above i64's range
    UInt(u64),
    Float(f64),
    /// A device address (data_ptr, __cuda_array_interface__ or a CUDA DLPack tensor).
    Ptr(u64),
    /// A host array address (__array_interface__): keyed, but not launchable.
    Host,
    /// An object entry (constexpr, None, str): not passed at launch.
    Obj,
    /// A host TensorDescriptor, read again field by field when packed
    /// (runtime.rs); borrowed from the launch's argument tuple, which
    /// outlives the launch.
    Desc(*mut pyo3::ffi::PyObject),
}

/// What a launch does with an address: a kernel takes one within u64.
fn address_read(addr: i128) -> Read {
    if (0..(1i128 << 64)).contains(&addr) {
        Read::Ptr(addr as u64)
    } else {
        Read::Host // not an address a kernel can take: the launch path decides
    }
}

impl KeyPlan {
    /// A constexpr's entry: the Python key holds (class, value); the native
    /// key holds ints, bools and None inline.
    pub(super) fn constexpr_entry(&self, arg: &Bound<'_, PyAny>) -> Entry {
        if is_type(arg, addr_of_mut!(ffi::PyLong_Type)) {
            return match int_value(arg) {
                Some(v) if i64::try_from(v).is_ok() => Entry::Const(INLINE_INT, v as i64 as u64),
                _ => Entry::Const(CONSTEXPR_SLOT, 0),
            };
        }
        if is_type(arg, addr_of_mut!(ffi::PyBool_Type)) {
            return Entry::Const(INLINE_BOOL, arg.is_truthy().unwrap_or(false) as u64);
        }
        if arg.is_none() {
            return Entry::Const(INLINE_NONE, 0);
        }
        // constexpr(...) wrappers and lists are normalised by Python
        if arg.get_type().is(self.constexpr_cls.bind(arg.py())) || arg.is_instance_of::<PyList>() {
            return Entry::Fallback;
        }
        Entry::Const(CONSTEXPR_SLOT, 0)
    }

    /// A tensor whose `dtype` and `data_ptr()` are read straight from its
    /// type's descriptors (torch.Tensor): the launch path's hot case.
    #[inline(always)]
    fn direct_tensor_entry(&self, p: &Param, arg: &Bound<'_, PyAny>, d: DirectReads) -> PyResult<Entry> {
        // a host tensor: Python's binder raises the error naming the argument
        if d.on_host(arg) {
            return Ok(Entry::Fallback);
        }
        let Some(dt) = d.dtype(arg) else {
            return Ok(Entry::Fallback);
        };
        let Some(tid) = self.dtype_tid(&dt)? else {
            return Ok(Entry::Fallback);
        };
        let Some(addr) = int_value(&d.data_ptr(arg)?) else {
            return Ok(Entry::Fallback);
        };
        Ok(Entry::Code((tid << self.shift) | p.ptr.mask(addr, arg)?, address_read(addr)))
    }

    #[inline(always)]
    pub(super) fn entry(&self, p: &Param, arg: &Bound<'_, PyAny>) -> PyResult<Entry> {
        if p.constexpr {
            return Ok(self.constexpr_entry(arg));
        }
        let s = self.shift;
        if is_type(arg, addr_of_mut!(ffi::PyLong_Type)) {
            let Some(v) = int_value(arg) else {
                return Ok(Entry::Fallback);
            };
            // int_value stops at u64's range: what is not an i64 is a u64
            let (tid, read) = match i64::try_from(v) {
                Ok(x) if x as i32 as i64 == x => (self.tid_int[0], Read::Int(x)),
                Ok(x) => (self.tid_int[1], Read::Int(x)),
                Err(_) => (self.tid_int[2], Read::UInt(v as u64)),
            };
            return Ok(Entry::Code((tid << s) | p.int.mask(v, arg)?, read));
        }
        if is_type(arg, addr_of_mut!(ffi::PyFloat_Type)) {
            if p.float.has_builtin() {
                return Ok(Entry::Fallback);
            }
            // SAFETY: an exact float
            let f = unsafe { ffi::PyFloat_AsDouble(arg.as_ptr()) };
            return Ok(Entry::Code((self.tid_f32 << s) | p.float.mask(0, arg)?, Read::Float(f)));
        }
        if is_type(arg, addr_of_mut!(ffi::PyBool_Type)) {
            return Ok(Entry::Code(self.tid_i1 << s, Read::Bool(arg.is_truthy()?)));
        }
        if arg.is_none() || is_type(arg, addr_of_mut!(ffi::PyUnicode_Type)) {
            return Ok(self.constexpr_entry(arg));
        }
        let py = arg.py();
        // SAFETY: reading the type of a live object
        let tp = unsafe { ffi::Py_TYPE(arg.as_ptr()) } as usize;
        if let Some((t, d)) = self.last_tensor.get(py).get() {
            if t == tp {
                return self.direct_tensor_entry(p, arg, d);
            }
        }
        let info = self.type_info(arg)?;
        if let (Addr::DataPtr, Some(d)) = (info.addr, info.direct) {
            self.last_tensor.get(py).set(Some((tp, d)));
            return self.direct_tensor_entry(p, arg, d);
        }
        match info.addr {
            Addr::None => return Ok(Entry::Fallback),
            // another data_ptr() type in host memory: Python's binder raises
            Addr::DataPtr if arg.getattr(intern!(py, "is_cuda")).map(|c| !c.is_truthy().unwrap_or(true)).unwrap_or(false) => {
                return Ok(Entry::Fallback);
            }
            Addr::DLPack => {
                // Python predicates get the argument, which for DLPack is not
                // the tensor-like object they expect: Python keys those
                if !p.ptr.slow.is_empty() {
                    return Ok(Entry::Fallback);
                }
                let Some((tid, addr)) = crate::dlpack::cuda_tensor(arg, &self.dl_tid)? else {
                    return Ok(Entry::Fallback);
                };
                return Ok(Entry::Code((tid << s) | p.ptr.mask(addr as i128, arg)?, Read::Ptr(addr)));
            }
            _ => {}
        }
        let Some(dt) = dtype_of(arg) else {
            return Ok(Entry::Fallback);
        };
        let Some(tid) = self.dtype_tid(&dt)? else {
            return Ok(Entry::Fallback);
        };
        // 0-d arrays without data_ptr() (numpy) are scalars to the Python rules
        if info.addr != Addr::DataPtr
            && info.has_ndim
            && arg
                .getattr(intern!(py, "ndim"))?
                .extract::<i64>()
                .map(|n| n == 0)
                .unwrap_or(true)
        {
            return Ok(Entry::Fallback);
        }
        let Some(addr) = address_of(arg, info.addr)? else {
            return Ok(Entry::Fallback);
        };
        let read = match info.addr {
            Addr::Host => Read::Host,
            _ => address_read(addr),
        };
        Ok(Entry::Code((tid << s) | p.ptr.mask(addr, arg)?, read))
    }
}
