//! The one error type of tritium-codegen, one variant per kind of failure,
//! so callers (the binding, the fuzzer) can tell a user's mistake from a
//! limit of the backend and from a bug in tritium. Ops the backend cannot
//! lower yet are `Unsupported` with the op's source location, so users see
//! their own line.
use tritium_analysis::MembarError;
use tritium_ir::{LocData, VerifyError};

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error("{loc}: `{op}` is not supported by the {target} backend yet: {reason}")]
    Unsupported { op: String, loc: LocData, target: String, reason: String },
    /// An op whose attributes no target can accept (e.g. an inline-asm
    /// constraint that is not a register), with the op's source location.
    #[error("{loc}: `{op}`: {reason}")]
    Invalid { op: String, loc: LocData, reason: String },
    /// Bad compile options (architecture, warps per block).
    #[error("invalid compile option: {0}")]
    Option(String),
    #[error("invalid tile IR: {0}")]
    Verify(#[from] VerifyError),
    /// A module whose calls cannot be compiled: recursion, an unknown
    /// callee, a kernel called like a function, or no kernel at all.
    #[error("invalid call graph: {0}")]
    CallGraph(String),
    /// Shared memory could not be laid out (more than the address space
    /// holds, or a buffer where lowering does not expect it).
    #[error("shared-memory allocation failed: {0}")]
    Allocation(String),
    /// Membar found shared accesses no barrier separates (a lowering bug).
    #[error("barrier insertion failed (a tritium bug): {0}")]
    Membar(#[from] MembarError),
    #[error("LLVM module failed verification (a tritium bug): {0}")]
    LlvmVerify(String),
    /// LLVM itself failed: target machine, optimisation, emission, IR building.
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
