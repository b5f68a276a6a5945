//! tritium-transforms: passes over the tile IR that prepare it for codegen.
//! So far: layout assignment (`layout`), which produces a side table
//! value → layout instead of rewriting types (see docs/architecture.md).
pub mod layout;

pub use layout::{assign_layouts, Blocked, Layout, LayoutMap};
