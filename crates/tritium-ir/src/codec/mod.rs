//! The binary format of docs/ir.md: the hand-off from Python and the cache's
//! storage. `encode` never fails; `decode` rejects any malformed input with a
//! `DecodeError` and never panics or over-allocates.
mod decode;
mod encode;

pub use decode::{decode, MAX_REGION_DEPTH};
pub use encode::{encode, number_values};

pub const MAGIC: &[u8; 4] = b"TRIR";
