//! The PyO3 module `tritium._core`, the only crate that knows Python: the
//! IR bindings here (codec, text, verifier, op table), the tile passes
//! (`passes`), codegen (`codegen`, and `batch`: many kernels at once on worker threads), the CUDA runtime (`runtime`, `dlpack`),
//! and the launch path kept in Rust for speed: the specialization key
//! (`key`), the launcher (`launcher`) and their raw CPython reads (`reads`,
//! `cpython`); `probe` has their test and bench views. Rust errors become
//! the exception classes below; panics are caught here so a bug in the core
//! is a Python exception, never an abort.
use std::panic::{catch_unwind, AssertUnwindSafe};

mod batch;
mod codegen;
mod cpython;
mod dlpack;
mod interpret;
mod key;
mod launcher;
mod passes;
mod probe;
mod reads;
mod runtime;
mod tensormaps;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(_core, IRDecodeError, PyValueError, "Malformed binary tile IR.");
create_exception!(_core, IRVerifyError, PyValueError, "Tile IR that breaks a rule of docs/ir.md.");
create_exception!(_core, IRParseError, PyValueError, "Malformed tile IR text.");

/// Runs `f`, turning a panic into a Python RuntimeError.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!("internal error in tritium-ir: {msg}")))
        }
    }
}

fn decode(data: &[u8]) -> PyResult<tritium_ir::Module> {
    tritium_ir::decode(data).map_err(|e| IRDecodeError::new_err(e.to_string()))
}

fn verify_err(e: tritium_ir::VerifyError) -> PyErr {
    IRVerifyError::new_err(e.to_string())
}

fn verified(data: &[u8]) -> PyResult<tritium_ir::Module> {
    let m = decode(data)?;
    tritium_ir::verify(&m).map_err(verify_err)?;
    Ok(m)
}

/// Op names, indexed by opcode (docs/ir.md's op table, in order).
#[pyfunction]
fn op_table() -> Vec<&'static str> {
    tritium_ir::OPS.iter().map(|o| o.name).collect()
}

/// Scalar kind names, indexed by their binary code (docs/ir.md), so the
/// encoder takes the codes from Rust as it takes op codes.
#[pyfunction]
fn scalar_kinds() -> Vec<&'static str> {
    tritium_ir::ScalarKind::ALL.iter().map(|k| k.name()).collect()
}

/// The op table as data, indexed by opcode: per op a dict with `name`,
/// `min_operands`, `max_operands` (None: unbounded), `results` (None:
/// variadic), `regions`, `attrs` ({name: (kind, required)}), `terminator`, `pure`.
#[pyfunction]
fn op_specs(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    tritium_ir::OPS
        .iter()
        .map(|o| {
            let d = PyDict::new(py);
            d.set_item("name", o.name)?;
            d.set_item("min_operands", o.min_operands)?;
            d.set_item("max_operands", o.max_operands)?;
            let results = match o.results {
                tritium_ir::Results::Fixed(n) => Some(n),
                tritium_ir::Results::Variadic => None,
            };
            d.set_item("results", results)?;
            d.set_item("regions", o.regions)?;
            let attrs = PyDict::new(py);
            for a in o.attrs {
                attrs.set_item(a.name, (a.kind.describe(), a.required))?;
            }
            d.set_item("attrs", attrs)?;
            d.set_item("terminator", o.terminator)?;
            d.set_item("pure", o.pure)?;
            Ok(d)
        })
        .collect()
}

/// Decodes and verifies a module; raises IRDecodeError or IRVerifyError.
#[pyfunction]
fn verify(data: &[u8]) -> PyResult<()> {
    guarded(|| verified(data).map(|_| ()))
}

/// The text form of a binary module (decoded, not verified, so invalid IR can be dumped).
#[pyfunction]
fn to_text(data: &[u8]) -> PyResult<String> {
    guarded(|| Ok(tritium_ir::print(&decode(data)?)))
}

/// Parses, verifies and encodes a module written as text.
#[pyfunction]
fn parse_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = guarded(|| {
        let m = tritium_ir::parse(text).map_err(|e| IRParseError::new_err(e.to_string()))?;
        tritium_ir::verify(&m).map_err(verify_err)?;
        Ok(tritium_ir::encode(&m))
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// Decodes and re-encodes a module (canonical bytes).
#[pyfunction]
fn roundtrip<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = guarded(|| Ok(tritium_ir::encode(&decode(data)?)))?;
    Ok(PyBytes::new(py, &bytes))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FORMAT_VERSION", tritium_ir::FORMAT_VERSION)?;
    m.add("IRDecodeError", py.get_type::<IRDecodeError>())?;
    m.add("IRVerifyError", py.get_type::<IRVerifyError>())?;
    m.add("IRParseError", py.get_type::<IRParseError>())?;
    m.add_function(wrap_pyfunction!(op_table, m)?)?;
    m.add_function(wrap_pyfunction!(op_specs, m)?)?;
    m.add_function(wrap_pyfunction!(scalar_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(to_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(roundtrip, m)?)?;
    codegen::register(m)?;
    batch::register(m)?;
    key::register(m)?;
    interpret::register(m)?;
    launcher::register(m)?;
    passes::register(m)?;
    probe::register(m)?;
    dlpack::register(m)?;
    runtime::register(m)?;
    Ok(())
}
