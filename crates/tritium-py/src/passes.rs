//! The tile-level passes from Python: tests look at the IR a pass leaves
//! (the loop-carried slots canonicalize drops, what the folder computes)
//! without compiling to PTX.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tritium_transforms::{canonicalize, eliminate_common_subexpressions, eliminate_dead_code, fold_constants, fuse_dot_accumulate};

/// Runs `passes` ("fold", "canonicalize", "cse", "dce", "dot_acc"), each once and in
/// order, or the whole pipeline when None, on binary tile IR (verified
/// before and after); returns the rewritten module's bytes.
#[pyfunction]
#[pyo3(signature = (ir_bytes, passes = None))]
fn run_passes<'py>(py: Python<'py>, ir_bytes: &[u8], passes: Option<Vec<String>>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = crate::guarded(|| {
        let mut m = crate::verified(ir_bytes)?;
        match passes {
            None => {
                let opts = tritium_transforms::PassOptions { verify_each: true, ..Default::default() };
                tritium_transforms::run_passes(&mut m, &opts, None).map_err(crate::verify_err)?;
            }
            Some(names) => {
                for name in names {
                    let pass: fn(&mut tritium_ir::Module) -> usize = match name.as_str() {
                        "fold" => fold_constants,
                        "canonicalize" => canonicalize,
                        "cse" => eliminate_common_subexpressions,
                        "dce" => eliminate_dead_code,
                        "dot_acc" => fuse_dot_accumulate,
                        other => return Err(PyValueError::new_err(format!("unknown pass {other:?}"))),
                    };
                    pass(&mut m);
                    tritium_ir::verify(&m).map_err(crate::verify_err)?;
                }
            }
        }
        Ok(tritium_ir::encode(&m))
    })?;
    Ok(PyBytes::new(py, &bytes))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_passes, m)?)
}
