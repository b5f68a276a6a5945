//! The stages, by the crate they exercise.
pub mod analysis;
pub mod codegen;
pub mod ir;
pub mod passes;
