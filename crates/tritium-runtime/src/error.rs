//! The runtime's one error type; the binding turns each variant into a Python
//! exception, so a failed driver call always names the call and the kernel.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// libcuda could not be loaded or initialised (no GPU machine, no driver).
    #[error("no CUDA driver found: {0}")]
    NoDriver(String),
    /// A driver call returned an error code.
    #[error("CUDA error in {call}{}: {name} ({message})", kernel.as_ref().map(|k| format!(" for kernel '{k}'")).unwrap_or_default())]
    Cuda { call: &'static str, kernel: Option<String>, code: i32, name: String, message: String },
    /// A launch argument that does not fit the kernel's parameter.
    #[error("{0}")]
    Arg(String),
    /// ptxas missing, failing, or reporting something unreadable.
    #[error("ptxas: {0}")]
    Ptxas(String),
    /// A kernel needs more of a per-block resource than the device has
    /// (Python raises it as `OutOfResources`, which the autotuner skips).
    #[error("kernel '{kernel}' needs {required} {resource} but the device allows at most {limit}{hint}")]
    OutOfResources { kernel: String, resource: &'static str, required: i64, limit: i64, hint: String },
    /// Bad request (grid too large, unknown kind, ...).
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// The same error, naming `kernel` (driver errors only).
    pub fn for_kernel(self, name: &str) -> Error {
        match self {
            Error::Cuda { call, code, name: n, message, .. } => {
                Error::Cuda { call, kernel: Some(name.to_string()), code, name: n, message }
            }
            other => other,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
