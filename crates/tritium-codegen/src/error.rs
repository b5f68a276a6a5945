//! The one error type of tritium-codegen. Ops the backend cannot lower yet are
//! `Unsupported` with the op's source location, so users see their own line.
use tritium_ir::{LocData, VerifyError};

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error("{loc}: `{op}` is not supported by the {target} backend yet: {reason}")]
    Unsupported { op: String, loc: LocData, target: String, reason: String },
    /// An op whose attributes no target can accept (e.g. an inline-asm
    /// constraint that is not a register), with the op's source location.
    #[error("{loc}: `{op}`: {reason}")]
    Invalid { op: String, loc: LocData, reason: String },
    #[error("invalid compile option: {0}")]
    Option(String),
    #[error("invalid tile IR: {0}")]
    Verify(#[from] VerifyError),
    #[error("LLVM module failed verification (a tritium bug): {0}")]
    LlvmVerify(String),
    #[error("LLVM error: {0}")]
    Llvm(String),
    /// A broken invariant of the code generator itself (a tritium bug).
    #[error("internal code generator error (a tritium bug): {0}")]
    Internal(String),
}

impl From<inkwell::builder::BuilderError> for CodegenError {
    fn from(e: inkwell::builder::BuilderError) -> Self {
        CodegenError::Llvm(format!("IR builder: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, CodegenError>;
