//! tritium-transforms: passes over the tile IR that prepare it for codegen.
//! Tile-level cleanups (`fold`, `canonicalize`, `cse`, `dce`, then
//! `dot_acc`'s accumulator fusion, run in order by
//! `pipeline::run_passes`, after `expand_block_memory` has rewritten block
//! pointer and descriptor accesses into ordinary ones) rewrite the IR; layout assignment (`layout`)
//! produces a side table value → layout instead of rewriting types (see
//! docs/architecture.md).
pub mod block_memory;
pub mod canonicalize;
mod carried;
pub mod constant;
pub mod cse;
pub mod dce;
pub mod dot_acc;
pub mod effects;
pub mod fold;
pub mod layout;
pub mod pipeline;
pub mod pipeliner;
pub mod tma;
mod walk;

pub use block_memory::expand_block_memory;
pub use canonicalize::canonicalize;
pub use cse::eliminate_common_subexpressions;
pub use dce::eliminate_dead_code;
pub use dot_acc::fuse_dot_accumulate;
pub use fold::fold_constants;
pub use layout::{assign_layouts, Blocked, Layout, LayoutMap, LayoutOptions, LinearLayout, MmaSupport};
pub use pipeline::{run_passes, PassOptions, PassStats};
pub use pipeliner::{pipeline_loops, PipelineOptions};
pub use tma::{claim_tma, tma_box, TmaBox};
