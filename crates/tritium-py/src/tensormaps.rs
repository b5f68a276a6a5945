//! Tensor-map parameters of TMA kernels (sm_90a): which host
//! TensorDescriptor each describes, and the map encoded from the
//! descriptor's values at launch (cached per parameter, so a launch with the
//! same tensor, shape and strides costs a hash look-up).
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tritium_runtime::tensormap::data_type;
use tritium_runtime::{ArgKind, ArgValue, MapCache, MapRequest, TensorMap};

use crate::runtime::to_py;

/// One tensor-map parameter of a compiled kernel.
pub(crate) struct MapParam {
    /// The @jit parameter (a host descriptor) it describes.
    pub param: usize,
    name: String,
    data_type: i32,
    elem_bytes: u32,
    box_dims: Vec<u32>,
    swizzle_bytes: u32,
    cache: MapCache,
}

impl MapParam {
    /// The parameter of `params` (name, kind) whose descriptor's base is IR
    /// argument `base_arg` (a descriptor of rank r takes 2r + 1 arguments).
    pub fn new(params: &[(String, Option<String>)], base_arg: usize, box_dims: Vec<u32>, swizzle_bytes: u32) -> PyResult<MapParam> {
        let mut arg = 0;
        for (i, (name, kind)) in params.iter().enumerate() {
            let Some(kind) = kind else { continue };
            let desc = kind.strip_prefix("tensordesc<").and_then(|k| k.split_once('[')).map(|(dtype, dims)| {
                (dtype.to_string(), dims.split(',').count())
            });
            match desc {
                Some((dtype, rank)) if arg == base_arg => {
                    let (data_type, elem_bytes) = data_type(&dtype).ok_or_else(|| {
                        PyValueError::new_err(format!("argument '{name}': TMA has no element type for {dtype}"))
                    })?;
                    if box_dims.len() != rank {
                        return Err(PyValueError::new_err(format!(
                            "argument '{name}': a rank-{} box for a rank-{rank} descriptor",
                            box_dims.len()
                        )));
                    }
                    return Ok(MapParam { param: i, name: name.clone(), data_type, elem_bytes, box_dims, swizzle_bytes, cache: MapCache::default() });
                }
                Some((_, rank)) => arg += 2 * rank + 1,
                None => arg += 1,
            }
        }
        Err(PyValueError::new_err(format!("the kernel's tensor map describes argument {base_arg}, which is no host descriptor")))
    }

    /// The map for a launch with the descriptor's kernel values
    /// (`descriptor_values`: base, shape, leading strides, NaN flag).
    pub fn map(&self, values: &[(ArgKind, ArgValue)], kernel: &str) -> PyResult<TensorMap> {
        let bad = |what: String| PyValueError::new_err(format!("kernel '{kernel}', argument '{}': {what}", self.name));
        let r = self.box_dims.len();
        if values.len() != 2 * r + 1 {
            return Err(bad(format!("{} descriptor values for a rank-{r} tensor map", values.len())));
        }
        let int = |v: &ArgValue, what: &str| -> PyResult<u64> {
            match *v {
                ArgValue::Ptr(p) => Ok(p),
                ArgValue::Int(i) => u64::try_from(i).map_err(|_| bad(format!("{what} is {i}"))),
                _ => Err(bad(format!("{what} is not an integer"))),
            }
        };
        let base = int(&values[0].1, "the base address")?;
        let shape = (0..r).map(|d| int(&values[1 + d].1, &format!("shape[{d}]"))).collect::<PyResult<Vec<_>>>()?;
        let mut strides = (0..r - 1).map(|d| int(&values[1 + r + d].1, &format!("strides[{d}]"))).collect::<PyResult<Vec<_>>>()?;
        strides.push(1);
        let nan_fill = matches!(values[2 * r].1, ArgValue::Bool(true));
        let req = MapRequest {
            data_type: self.data_type,
            elem_bytes: self.elem_bytes,
            base,
            shape,
            strides,
            box_dims: self.box_dims.clone(),
            swizzle_bytes: self.swizzle_bytes,
            nan_fill,
        };
        if let Err(why) = tritium_runtime::tensormap::check(&req) {
            return Err(bad(format!("cannot be a TMA tensor map: {why}")));
        }
        self.cache.get(&req).map_err(to_py)
    }

    pub fn cached(&self) -> usize {
        self.cache.len()
    }
}
