//! tritium-ir: the tile IR shared by the Python frontend and the Rust core:
//! entities and types, the one op table, a builder, the binary codec, the text
//! format and the verifier (docs/ir.md is the contract).

pub mod attrs;
pub mod builder;
pub mod codec;
pub mod entities;
pub mod error;
pub mod module;
pub mod ops;
pub mod rewrite;
pub mod text;
pub mod types;
pub mod verify;

pub use attrs::{Attr, Attrs};
pub use builder::Builder;
pub use codec::{decode, encode};
pub use text::{parse, print};
pub use entities::{Arena, Block, EntityRef, Func, Loc, Op, Region, Type, Value};
pub use error::{DecodeError, ParseError, VerifyError};
pub use module::{BlockData, Function, LocData, Module, OpData, RegionData, ValueData, ValueDef};
pub use ops::{AttrKind, AttrSpec, OpInfo, Opcode, Results, CONTRACT, FORMAT_VERSION, OPS};
pub use types::{ScalarKind, TypeData, TypeTable, MAX_TENSOR_NUMEL};
pub use verify::verify;
