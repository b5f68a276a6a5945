//! What the launch path uses of CPython beyond its abi3 floor, to skip the
//! limited API's call machinery on its hot path: the C functions behind a
//! type's `data_ptr` method and `dtype` getset (torch.Tensor), a tuple's
//! item array, and `PyObject_Vectorcall` where the interpreter exports it.
//!
//! These structs are not in the limited API. Their layout is the same from
//! 3.8 through 3.13, so they are read only on 3.10 to 3.13 (our abi3 floor
//! up); a descriptor's functions are taken only after its own fields agree:
//! its name, its owner type among the argument type's bases, its method
//! flags. Anything else keeps the limited-API calls.
use std::ffi::{c_char, c_void, CStr};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// PyDescr_COMMON (Include/cpython/descrobject.h).
#[repr(C)]
struct DescrHead {
    ob_refcnt: isize,
    ob_type: *mut ffi::PyTypeObject,
    d_type: *mut ffi::PyTypeObject,
    d_name: *mut ffi::PyObject,
    d_qualname: *mut ffi::PyObject,
}

#[repr(C)]
struct MethodDescr {
    head: DescrHead,
    d_method: *mut ffi::PyMethodDef,
}

#[repr(C)]
struct GetSetDescr {
    head: DescrHead,
    d_getset: *mut ffi::PyGetSetDef,
}

/// `obj.name()` of a METH_NOARGS method, and `obj.name` of a getset.
#[derive(Clone, Copy)]
pub(crate) struct CReads {
    method: ffi::PyCFunction,
    getter: ffi::getter,
    closure: *mut c_void,
}

impl CReads {
    /// `obj.data_ptr()`.
    ///
    /// # Safety
    /// The GIL is held and `obj` is of the type these were found for.
    pub(crate) unsafe fn call_method(&self, obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
        (self.method)(obj, std::ptr::null_mut())
    }

    /// `obj.dtype`.
    ///
    /// # Safety
    /// As for `call_method`.
    pub(crate) unsafe fn get(&self, obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
        (self.getter)(obj, self.closure)
    }
}

/// Whether this interpreter is one whose object layouts are known here
/// (asked once: `version_info` parses the version string).
pub(crate) fn layout_known(py: Python<'_>) -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        let v = py.version_info();
        v.major == 3 && (10..=13).contains(&v.minor)
    })
}

/// PyTupleObject: PyObject_VAR_HEAD, then the items.
#[repr(C)]
struct TupleHead {
    ob_refcnt: isize,
    ob_type: *mut ffi::PyTypeObject,
    ob_size: isize,
}

/// The items of `t` as borrowed pointers, read from the tuple itself where
/// its layout is known (PyTuple_GetItem is a call per item otherwise).
pub(crate) fn tuple_items<'a>(t: &'a Bound<'_, pyo3::types::PyTuple>) -> Option<&'a [*mut ffi::PyObject]> {
    if !layout_known(t.py()) {
        return None;
    }
    // SAFETY: `t` is a live tuple (its type was checked when it was bound);
    // on the versions admitted its items follow the var-object head, and
    // they live as long as the tuple, which `'a` borrows
    unsafe {
        let head = t.as_ptr() as *const TupleHead;
        let n = (*head).ob_size as usize;
        let items = head.add(1) as *const *mut ffi::PyObject;
        Some(std::slice::from_raw_parts(items, n))
    }
}

/// The descriptor's name is `name` and `ty` derives from its owner.
///
/// # Safety
/// `head` is the start of a live descriptor object.
unsafe fn head_agrees(head: &DescrHead, ty: &Bound<'_, PyType>, name: &str) -> bool {
    if head.d_type.is_null() || head.d_name.is_null() || ffi::PyUnicode_Check(head.d_name) == 0 {
        return false;
    }
    let n = std::ffi::CString::new(name).expect("no NUL in a name");
    ffi::PyUnicode_CompareWithASCIIString(head.d_name, n.as_ptr()) == 0
        && ffi::PyType_IsSubtype(ty.as_type_ptr(), head.d_type) != 0
}

fn c_name_is(p: *const c_char, name: &str) -> bool {
    // SAFETY: a PyMethodDef/PyGetSetDef name is a NUL-terminated static string
    !p.is_null() && unsafe { CStr::from_ptr(p) }.to_bytes() == name.as_bytes()
}

/// The C functions of `method` (a method_descriptor, METH_NOARGS) and
/// `getset` (a getset_descriptor), both found on `ty` under these names, or
/// None when this interpreter's layout is not one we know or a field disagrees.
pub(crate) fn c_reads(
    ty: &Bound<'_, PyType>,
    method: &Bound<'_, PyAny>,
    method_name: &str,
    getset: &Bound<'_, PyAny>,
    getset_name: &str,
) -> Option<CReads> {
    if !layout_known(ty.py()) {
        return None;
    }
    // SAFETY: the caller checked that `method` is a method_descriptor and
    // `getset` a getset_descriptor, whose structs start as declared above
    // on the versions layout_known admits
    unsafe {
        let m = &*(method.as_ptr() as *const MethodDescr);
        let g = &*(getset.as_ptr() as *const GetSetDescr);
        if !head_agrees(&m.head, ty, method_name) || !head_agrees(&g.head, ty, getset_name) {
            return None;
        }
        if m.d_method.is_null() || g.d_getset.is_null() {
            return None;
        }
        let def = &*m.d_method;
        let kinds = ffi::METH_VARARGS | ffi::METH_KEYWORDS | ffi::METH_NOARGS | ffi::METH_O | ffi::METH_FASTCALL;
        if !c_name_is(def.ml_name, method_name) || def.ml_flags & kinds != ffi::METH_NOARGS {
            return None;
        }
        let gs = &*g.d_getset;
        let getter = gs.get?;
        if !c_name_is(gs.name, getset_name) {
            return None;
        }
        Some(CReads {
            method: def.ml_meth.PyCFunction,
            getter,
            closure: gs.closure,
        })
    }
}

type Vectorcall = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    usize,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// `PyObject_Vectorcall` when the running interpreter exports it (3.11 and
/// later do; the limited API names it only from 3.12, above our abi3 floor).
fn vectorcall() -> Option<Vectorcall> {
    static VC: std::sync::OnceLock<Option<Vectorcall>> = std::sync::OnceLock::new();
    *VC.get_or_init(|| {
        extern "C" {
            fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
        }
        // SAFETY: RTLD_DEFAULT (null) searches the process's global symbols, libpython's among them
        let f = unsafe { dlsym(std::ptr::null_mut(), c"PyObject_Vectorcall".as_ptr()) };
        // SAFETY: the exported function has exactly this C signature
        (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Vectorcall>(f) })
    })
}

/// `f(arg)`: through vectorcall (no argument tuple, no varargs walk) where
/// the interpreter has it.
///
/// # Safety
/// The GIL is held and both are live objects; returns a new reference or
/// NULL with an exception set.
pub(crate) unsafe fn call_one(f: *mut ffi::PyObject, arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    match vectorcall() {
        Some(vc) => vc(f, &arg, 1, std::ptr::null_mut()),
        None => ffi::PyObject_CallFunctionObjArgs(f, arg, std::ptr::null_mut::<ffi::PyObject>()),
    }
}
