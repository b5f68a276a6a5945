//! The text format (MLIR-like generic syntax, see docs/ir.md "Text format"):
//! dumps and file tests. `print` and `parse` round-trip with the binary form.
mod parse;
mod print;

pub use parse::parse;
pub use print::print;
