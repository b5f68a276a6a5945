//! DLPack for kernel arguments: reading a `__dlpack__()` capsule (without
//! consuming it), what the key takes from one, the error for one not in
//! CUDA memory, and the element types Python may see (`DLPACK_DTYPES`).
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use tritium_runtime::args::{DLPackArg, DLTensor};

/// Reads a `__dlpack__()` capsule without consuming it: the capsule keeps
/// its "dltensor" name, so its own destructor frees the tensor when it goes.
pub(crate) fn read_capsule(cap: &Bound<'_, PyAny>) -> PyResult<DLPackArg> {
    // SAFETY: PyCapsule_GetPointer checks the type and the name (NULL + exception otherwise)
    let p = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), c"dltensor".as_ptr()) };
    if p.is_null() {
        let why = PyErr::take(cap.py()).map(|e| e.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!(
            "__dlpack__() must return a capsule named 'dltensor' (an unused DLManagedTensor): {why}"
        )));
    }
    // SAFETY: a live "dltensor" capsule points at a DLManagedTensor, which starts with its DLTensor
    unsafe { DLPackArg::read(p as *const DLTensor) }.map_err(crate::runtime::to_py)
}

/// `obj.__dlpack__()` read as a kernel argument.
pub(crate) fn dlpack_of(obj: &Bound<'_, PyAny>) -> PyResult<DLPackArg> {
    read_capsule(&obj.call_method0(intern!(obj.py(), "__dlpack__"))?)
}

/// (address, device type, device id, dtype name or None, code, bits).
type DLPackInfo = (u64, i32, i32, Option<&'static str>, u8, u8);

/// What a DLPack capsule holds, for Python's reference key and tests.
#[pyfunction]
fn dlpack_info(capsule: &Bound<'_, PyAny>) -> PyResult<DLPackInfo> {
    let t = read_capsule(capsule)?;
    Ok((t.address, t.device_type, t.device_id, t.dtype_name(), t.code, t.bits))
}

/// The error for a DLPack tensor a kernel cannot take (not in CUDA memory).
pub(crate) fn device_error(t: &DLPackArg, name: &str, kernel: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "kernel '{kernel}', argument '{name}': a DLPack tensor on device type {} (device {}) cannot be passed to a \
         GPU kernel; only CUDA ({}) and CUDA managed ({}) memory can",
        t.device_type,
        t.device_id,
        tritium_runtime::args::DL_CUDA,
        tritium_runtime::args::DL_CUDA_MANAGED
    ))
}

/// A DLPack argument as the key reads it: (pointer type id from `dl_tid`,
/// address), or None when Python must decide (a CPU tensor is an error
/// there, an unknown dtype too).
pub(crate) fn cuda_tensor(arg: &Bound<'_, PyAny>, dl_tid: &[(String, u64)]) -> PyResult<Option<(u64, u64)>> {
    // a capsule that cannot be read is Python's to report, naming the argument
    let Ok(t) = dlpack_of(arg) else {
        return Ok(None);
    };
    if !t.on_cuda() {
        return Ok(None);
    }
    let Some(name) = t.dtype_name() else {
        return Ok(None);
    };
    Ok(dl_tid.iter().find(|(n, _)| n == name).map(|(_, tid)| (*tid, t.address)))
}

/// Every element type a DLPack argument may have, by language dtype name.
fn dlpack_dtype_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for code in 0..=20u8 {
        for bits in [8u8, 16, 32, 64] {
            let t = DLPackArg { address: 0, device_type: 0, device_id: 0, code, bits };
            names.extend(t.dtype_name());
        }
    }
    names
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dlpack_info, m)?)?;
    m.add("DLPACK_DTYPES", dlpack_dtype_names())
}
