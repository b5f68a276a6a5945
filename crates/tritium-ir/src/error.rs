//! The crate's error types, one per entry point: decoding bytes, parsing text,
//! verifying a module. Each says what is wrong and where.
use crate::module::LocData;

/// Malformed binary input, at byte `offset`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {msg}")]
pub struct DecodeError {
    pub offset: usize,
    pub msg: String,
}

/// Malformed text input, at `line:col` (1-based).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {msg}")]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

/// A rule of docs/ir.md that the module breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", self.prefix(), self.msg)]
pub struct VerifyError {
    /// The function the error is in.
    pub func: String,
    /// The op's name, when the error is about one op.
    pub op: Option<String>,
    pub loc: LocData,
    pub msg: String,
}

impl VerifyError {
    fn prefix(&self) -> String {
        match &self.op {
            Some(op) => format!("{}: '{}': ", self.loc, op),
            None => format!("@{}: ", self.func),
        }
    }
}
