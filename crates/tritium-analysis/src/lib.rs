//! tritium-analysis: read-only analyses of the tile IR. So far the call graph
//! (walk orders for per-function results) and shared-memory allocation.
pub mod allocation;
pub mod callgraph;

pub use allocation::{Allocation, Buffer, BufferKind, BufferRequest, ModuleAllocation};
pub use callgraph::CallGraph;
