//! How a tensor-like argument's element type and address are read: found
//! once per Python type (`probe`), then per launch either straight from the
//! type's C descriptors (`DirectReads`, torch.Tensor) or through the generic
//! attribute reads (`dtype_of`, `address_of`).
use std::ptr::addr_of_mut;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use crate::cpython::{c_reads, call_one, CReads};

/// How to read a tensor-like type's address; found once per Python type.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Addr {
    DataPtr,
    Cuda,
    Host,
    DLPack,
    None,
}

/// A type whose `data_ptr` is a C method (method_descriptor) and `dtype` a C
/// getset, with the default attribute lookup (torch.Tensor): both are called
/// straight from the descriptors found once on the type, skipping generic
/// attribute lookup and the bound method. The pointers stay valid because the
/// type cache below owns references to both descriptors.
#[derive(Clone, Copy)]
pub(crate) struct DirectReads {
    data_ptr: *mut ffi::PyObject,
    dtype: *mut ffi::PyObject,
    /// `is_cuda`'s getset descriptor (same descriptor type as `dtype`'s), or
    /// null when the type has none: a host tensor's address must not reach a kernel
    is_cuda: *mut ffi::PyObject,
    dtype_get: ffi::descrgetfunc,
    /// the descriptors' C functions themselves, where cpython.rs could take them
    pub(crate) c: Option<CReads>,
}

// SAFETY: only dereferenced with the GIL held (inside the GILProtected cache or a launch)
unsafe impl Send for DirectReads {}
unsafe impl Sync for DirectReads {}

#[derive(Clone, Copy)]
pub(crate) struct TypeInfo {
    pub(crate) addr: Addr,
    pub(crate) has_ndim: bool,
    pub(crate) direct: Option<DirectReads>,
}

impl DirectReads {
    /// `arg.dtype`; None when it raised (Python reports it, naming the argument).
    #[inline(always)]
    pub(crate) fn dtype<'py>(&self, arg: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
        let ob = arg.as_ptr();
        // SAFETY: the descriptor belongs to a base of arg's type, which the
        // type cache keeps alive with it; a new reference or NULL comes back
        unsafe {
            let r = match self.c {
                Some(c) => c.get(ob),
                None => (self.dtype_get)(self.dtype, ob, ffi::Py_TYPE(ob) as *mut ffi::PyObject),
            };
            Bound::from_owned_ptr_or_err(arg.py(), r).ok()
        }
    }

    /// Whether `arg.is_cuda` is False (a torch tensor in host memory); false
    /// when the type has no `is_cuda` or reading it raised.
    #[inline(always)]
    pub(crate) fn on_host(&self, arg: &Bound<'_, PyAny>) -> bool {
        if self.is_cuda.is_null() {
            return false;
        }
        let ob = arg.as_ptr();
        // SAFETY: as for `dtype`; the result is a new reference (a bool) or NULL
        unsafe {
            let r = (self.dtype_get)(self.is_cuda, ob, ffi::Py_TYPE(ob) as *mut ffi::PyObject);
            if r.is_null() {
                ffi::PyErr_Clear();
                return false;
            }
            let host = r == ffi::Py_False();
            ffi::Py_DECREF(r);
            host
        }
    }

    /// `arg.data_ptr()`.
    #[inline(always)]
    pub(crate) fn data_ptr<'py>(&self, arg: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let ob = arg.as_ptr();
        // SAFETY: as for `dtype`
        unsafe {
            let r = match self.c {
                Some(c) => c.call_method(ob),
                None => call_one(self.data_ptr, ob),
            };
            Bound::from_owned_ptr_or_err(arg.py(), r)
        }
    }
}

/// The descriptors behind `DirectReads` (data_ptr, dtype, is_cuda), kept
/// alive with the type they came from.
pub(crate) type DirectRefs = Option<(PyObject, PyObject, Option<PyObject>)>;

/// How `ty`'s instances are read, and the descriptors its direct reads
/// point into (the caller keeps them alive as long as it uses the reads).
pub(crate) fn probe(ty: &Bound<'_, PyType>) -> PyResult<(TypeInfo, DirectRefs)> {
    let py = ty.py();
    let addr = if ty.hasattr(intern!(py, "data_ptr"))? {
        Addr::DataPtr
    } else if ty.hasattr(intern!(py, "__cuda_array_interface__"))? {
        Addr::Cuda
    } else if ty.hasattr(intern!(py, "__array_interface__"))? {
        Addr::Host
    } else if ty.hasattr(intern!(py, "__dlpack__"))? {
        Addr::DLPack
    } else {
        Addr::None
    };
    let refs = if addr == Addr::DataPtr { direct_descriptors(ty)? } else { None };
    let direct = refs.as_ref().and_then(|(dp, dt, cuda)| {
        // SAFETY: PyType_GetSlot accepts static types from 3.10 (the abi3 floor)
        let get = unsafe { ffi::PyType_GetSlot(ffi::Py_TYPE(dt.as_ptr()), ffi::Py_tp_descr_get) };
        (!get.is_null()).then(|| DirectReads {
            data_ptr: dp.as_ptr(),
            dtype: dt.as_ptr(),
            is_cuda: cuda.as_ref().map_or(std::ptr::null_mut(), |c| c.as_ptr()),
            dtype_get: unsafe { std::mem::transmute::<*mut std::ffi::c_void, ffi::descrgetfunc>(get) },
            c: c_reads(ty, dp.bind(py), "data_ptr", dt.bind(py), "dtype"),
        })
    });
    let info = TypeInfo {
        addr,
        has_ndim: ty.hasattr(intern!(py, "ndim"))?,
        direct,
    };
    Ok((info, refs))
}

/// `arg.dtype` through generic attribute lookup; None when it raised.
pub(crate) fn dtype_of<'py>(arg: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    arg.getattr(intern!(arg.py(), "dtype")).ok()
}

/// The address an argument read the `addr` way gives, through generic
/// attribute lookup; None when there is none to read that way.
pub(crate) fn address_of(arg: &Bound<'_, PyAny>, addr: Addr) -> PyResult<Option<i128>> {
    let py = arg.py();
    let name = match addr {
        Addr::DataPtr => return Ok(int_value(&call_method0(arg, intern!(py, "data_ptr"))?)),
        Addr::Cuda => intern!(py, "__cuda_array_interface__"),
        Addr::Host => intern!(py, "__array_interface__"),
        Addr::DLPack | Addr::None => return Ok(None),
    };
    let d = arg.getattr(name)?;
    Ok(int_value(&d.get_item(intern!(py, "data"))?.get_item(0)?))
}

/// A Python int's value without raising: None when it is below i64's range
/// or above u64's (abi3 has no cheap 128-bit conversion).
#[inline(always)]
pub(crate) fn int_value(v: &Bound<'_, PyAny>) -> Option<i128> {
    let mut overflow = 0;
    // SAFETY: `v` is a live object; the call sets `overflow` instead of raising for out-of-range ints
    let x = unsafe { ffi::PyLong_AsLongLongAndOverflow(v.as_ptr(), &mut overflow) };
    if overflow == 0 {
        // only a non-int fails (an exact int's -1 is a value)
        if x == -1 && !is_type(v, addr_of_mut!(ffi::PyLong_Type)) && PyErr::take(v.py()).is_some() {
            return None;
        }
        return Some(x as i128);
    }
    if overflow < 0 {
        return None;
    }
    // SAFETY: as above; an error (above u64) is taken right away
    let u = unsafe { ffi::PyLong_AsUnsignedLongLong(v.as_ptr()) };
    if u == u64::MAX && PyErr::take(v.py()).is_some() {
        return None;
    }
    Some(u as i128)
}

/// `Py_TYPE(arg) == ty` for one of CPython's static types.
pub(crate) fn is_type(arg: &Bound<'_, PyAny>, ty: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading the type of a live object
    unsafe { ffi::Py_TYPE(arg.as_ptr()) == ty }
}

/// `obj.name()` without creating a bound method (CPython's method-call path).
fn call_method0<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: NULL-terminated argument list; a new reference or NULL with an exception set
    unsafe {
        Bound::from_owned_ptr_or_err(
            obj.py(),
            ffi::PyObject_CallMethodObjArgs(obj.as_ptr(), name.as_ptr(), std::ptr::null_mut::<ffi::PyObject>()),
        )
    }
}

/// `type.data_ptr` and `type.dtype` when both are C descriptors and the
/// type keeps the default `__getattribute__`, so calling the descriptors
/// does what `obj.data_ptr()` and `obj.dtype` do. (An instance attribute
/// named `data_ptr` would shadow the method for `obj.data_ptr()`; tensors do
/// not carry one.)
fn direct_descriptors(ty: &Bound<'_, PyType>) -> PyResult<DirectRefs> {
    let py = ty.py();
    let types = py.import("types")?;
    let (Ok(dp), Ok(dt), Ok(ga)) = (
        ty.getattr(intern!(py, "data_ptr")),
        ty.getattr(intern!(py, "dtype")),
        ty.getattr(intern!(py, "__getattribute__")),
    ) else {
        return Ok(None);
    };
    let is = |o: &Bound<'_, PyAny>, name: &str| -> PyResult<bool> { Ok(o.get_type().is(&types.getattr(name)?)) };
    if is(&dp, "MethodDescriptorType")? && is(&dt, "GetSetDescriptorType")? && is(&ga, "WrapperDescriptorType")? {
        let cuda = match ty.getattr(intern!(py, "is_cuda")) {
            Ok(c) if c.get_type().is(&dt.get_type()) => Some(c.unbind()),
            _ => None,
        };
        return Ok(Some((dp.unbind(), dt.unbind(), cuda)));
    }
    Ok(None)
}
