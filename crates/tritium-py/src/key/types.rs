//! Type probing for the key: how an argument's type gives its address and
//! dtype (`reads::probe`, once per type, cached by the type's address) and
//! which pointer type id a framework dtype stands for (cached by identity:
//! dtype objects are singletons in torch and numpy).
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use super::KeyPlan;
use crate::reads::{probe, DirectRefs, TypeInfo};

/// Tensor-like types seen so far, by address, and how to read them; the
/// type object is kept alive so the address stays its.
pub(crate) type TypeCache = Vec<(usize, TypeInfo, Py<PyType>, DirectRefs)>;

impl KeyPlan {
    pub(crate) fn type_info(&self, arg: &Bound<'_, PyAny>) -> PyResult<TypeInfo> {
        let py = arg.py();
        // SAFETY: reading the type of a live object
        let tp = unsafe { ffi::Py_TYPE(arg.as_ptr()) } as usize;
        if let Some((_, info, _, _)) = self.types.get(py).borrow().iter().find(|(t, ..)| *t == tp) {
            return Ok(*info);
        }
        // no borrow is held while Python runs (hasattr may run arbitrary code)
        let ty = arg.get_type();
        let (info, refs) = probe(&ty)?;
        let mut seen = self.types.get(py).borrow_mut();
        if seen.len() < 64 {
            seen.push((tp, info, ty.unbind(), refs));
        } else if info.direct.is_some() {
            // uncached, the descriptors would not be kept alive: use the generic reads
            return Ok(TypeInfo { direct: None, ..info });
        }
        Ok(info)
    }

    /// The pointer type id of a framework dtype: identity hits first (dtype
    /// objects are singletons in torch and numpy), then the shared dict.
    #[inline(always)]
    pub(super) fn dtype_tid(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let addr = dt.as_ptr() as usize;
        if let Some((_, tid, _)) = self.dtypes.get(dt.py()).borrow().iter().find(|(a, ..)| *a == addr) {
            return Ok(Some(*tid));
        }
        self.dtype_tid_first_sight(dt)
    }

    #[inline(never)]
    fn dtype_tid_first_sight(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let py = dt.py();
        let Some(tid) = self.ptr_tid.bind(py).get_item(dt)? else {
            return Ok(None);
        };
        let tid: u64 = tid.extract()?;
        let mut seen = self.dtypes.get(py).borrow_mut();
        if seen.len() < 32 {
            seen.push((dt.as_ptr() as usize, tid, dt.clone().unbind()));
        }
        Ok(Some(tid))
    }
}
