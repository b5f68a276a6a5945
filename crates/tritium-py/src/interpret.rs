//! The interpreter switch as the launch path reads it on every launch:
//! TRITIUM_INTERPRET / TRITON_INTERPRET, as Python's `interpret_requested()`
//! (runtime/jit.py) sees them.
use std::os::raw::c_char;

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict};

/// Whether TRITIUM_INTERPRET or TRITON_INTERPRET asks for the interpreter
/// (1/true/yes/on, any case), read on every call from the mapping
/// `os.environ` keeps its encoded contents in (two dict lookups, where
/// `getenv` scans the whole environment), so it sees what Python's
/// `interpret_requested()` sees; the C environment when that mapping is
/// not there.
pub(crate) fn interpret_requested(py: Python<'_>) -> bool {
    static ENV: GILOnceCell<Option<(Py<PyDict>, [Py<PyBytes>; 2])>> = GILOnceCell::new();
    let env = ENV.get_or_init(py, || {
        let data = py.import("os").ok()?.getattr("environ").ok()?.getattr("_data").ok()?;
        let data = data.downcast_into::<PyDict>().ok()?.unbind();
        let keys = [b"TRITIUM_INTERPRET".as_slice(), b"TRITON_INTERPRET"].map(|k| PyBytes::new(py, k).unbind());
        Some((data, keys))
    });
    let truthy = |v: &[u8]| [&b"1"[..], b"true", b"yes", b"on"].iter().any(|t| v.eq_ignore_ascii_case(t));
    if let Some((data, keys)) = env {
        let data = data.bind(py);
        return keys.iter().any(|k| match data.get_item(k.bind(py)) {
            Ok(Some(v)) => v.downcast::<PyBytes>().map(|b| truthy(b.as_bytes())).unwrap_or(false),
            _ => false,
        });
    }
    extern "C" {
        fn getenv(name: *const c_char) -> *const c_char;
    }
    [c"TRITIUM_INTERPRET", c"TRITON_INTERPRET"].iter().any(|name| {
        // SAFETY: called with the GIL held, so no Python thread changes the environment meanwhile
        let v = unsafe { getenv(name.as_ptr()) };
        !v.is_null() && truthy(unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes())
    })
}

/// The launch path's interpreter switch, as the launcher reads it (for tests).
#[pyfunction(name = "interpret_requested")]
fn interpret_requested_py(py: Python<'_>) -> bool {
    interpret_requested(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(interpret_requested_py, m)?)
}
