//! tritium-analysis: read-only analyses of the tile IR: the call graph (walk
//! orders for per-function results), axis info (per-dim divisibility,
//! contiguity, constancy), liveness, shared-memory allocation and membar
//! (which barriers a function's shared-memory accesses need).
pub mod allocation;
pub mod axis_info;
mod axis_info_rules;
pub mod callgraph;
pub mod liveness;
pub mod membar;

pub use allocation::{Allocation, Buffer, BufferKind, BufferRequest, ModuleAllocation};
pub use axis_info::{arg_facts_from_attrs, AxisFacts, DimFacts, FuncAxisInfo, ModuleAxisInfo};
pub use callgraph::CallGraph;
pub use liveness::{Interval, Liveness};
pub use membar::{analyze, Access, AccessKind, CandidateId, FuncMembar, MembarError, MembarOptions, ModuleMembar, Node, Summary};
