//! tritium-runtime: the CUDA driver loaded at run time (`libcuda.so.1` through
//! dlopen, so builds and wheels need no CUDA toolkit), module load, kernel
//! launch with packed arguments, and `ptxas` (PTX → cubin plus its resource report).
pub mod args;
pub mod cuda;
pub mod error;
pub mod launch;
pub mod ptxas;
pub mod tensormap;

pub use args::{ArgKind, ArgPack, ArgValue};
pub use cuda::{Device, Driver};
pub use error::{Error, Result};
pub use launch::{Image, Kernel, KernelAttributes};
pub use tensormap::{MapCache, MapRequest, TensorMap};
