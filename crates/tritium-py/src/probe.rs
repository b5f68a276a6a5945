//! Probes of the launch path for tests and benches: what the key's caches
//! hold, the key a Python key stands for, and timings of the key, of tensor
//! reads and of bare driver launches in Rust loops. Nothing here runs on a
//! launch; the production classes (`KeyPlan`, `CudaKernel`, `FastLauncher`)
//! keep only what launching needs.
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use crate::key::{KeyPlan, Keyed};
use crate::launcher::FastLauncher;
use crate::reads::Addr;
use crate::runtime::CudaKernel;

/// A `KeyPlan` seen from tests and benches.
#[pyclass(frozen, module = "tritium._core")]
pub struct KeyPlanProbe {
    plan: Py<KeyPlan>,
}

#[pymethods]
impl KeyPlanProbe {
    #[new]
    fn new(plan: Py<KeyPlan>) -> Self {
        KeyPlanProbe { plan }
    }

    /// The tensor-like types seen so far: (type, how its address is read,
    /// whether data_ptr/dtype are called straight from the type's C
    /// descriptors, whether through the descriptors' C functions).
    fn type_cache(&self, py: Python<'_>) -> Vec<(Py<PyType>, &'static str, bool, bool)> {
        let plan = self.plan.get();
        let how = |a: Addr| match a {
            Addr::DataPtr => "data_ptr",
            Addr::Cuda => "__cuda_array_interface__",
            Addr::Host => "__array_interface__",
            Addr::DLPack => "__dlpack__",
            Addr::None => "none",
        };
        plan.types
            .get(py)
            .borrow()
            .iter()
            .map(|(_, info, t, _)| {
                let c = info.direct.is_some_and(|d| d.c.is_some());
                (t.clone_ref(py), how(info.addr), info.direct.is_some(), c)
            })
            .collect()
    }

    /// µs per key of `args` (in parameter order) over `n` keys in a Rust
    /// loop: the key's cost on the launch path, which computes it from Rust
    /// inside the launch call, with no Python call of its own. For
    /// benches/key_bench.py; a call the launch path would give to Python is
    /// a ValueError.
    fn time_keys(&self, args: &Bound<'_, PyTuple>, n: u32) -> PyResult<f64> {
        let plan = self.plan.get();
        let mut k = Keyed::new();
        if !plan.keyed(args, &mut k)? {
            return Err(pyo3::exceptions::PyValueError::new_err("time_keys: the launch path does not key these arguments"));
        }
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(plan.keyed(std::hint::black_box(args), &mut k)?);
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
    }

    /// The floor under a tensor argument's key entry: µs per `data_ptr()`
    /// plus `dtype` read of `t`, `n` times in a Rust loop, through the same
    /// calls the key makes (the descriptors' C functions where taken). For
    /// benches/key_bench.py.
    fn time_tensor_reads(&self, t: &Bound<'_, PyAny>, n: u32) -> PyResult<f64> {
        let plan = self.plan.get();
        let info = plan.type_info(t)?;
        let (Addr::DataPtr, Some(d)) = (info.addr, info.direct) else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "time_tensor_reads: a type whose data_ptr and dtype are read directly (torch.Tensor)",
            ));
        };
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(d.dtype(t));
            std::hint::black_box(d.data_ptr(t)?);
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
    }

    /// Keys `args` (in parameter order) as the launch path does, without
    /// creating any Python object, and says whether that path took the call
    /// (False: Python keys it). For tests, and what benches/key_bench.py
    /// times as the launch path's key.
    fn native_keys(&self, args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let plan = self.plan.get();
        let mut k = Keyed::new();
        plan.keyed(args, &mut k)
    }

    /// The key the launcher's table files `key` (a Python key) under, as
    /// a list of ints, or None when only the Python key can hold it (for tests).
    fn native_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u64>>> {
        let plan = self.plan.get();
        plan.native_of(key)
    }
}

/// The floor under any launch path: `bursts` times, `per_burst` launches
/// from a Rust loop with the arguments packed once (the driver call and
/// nothing else), then a context synchronize that is not timed. Returns
/// the µs per launch of every burst, for benches/gpu/launch_profile.py.
#[pyfunction]
#[pyo3(signature = (kernel, args, bursts = 50, per_burst = 200, stream = 0))]
fn time_driver_launches(kernel: &Bound<'_, CudaKernel>, args: &Bound<'_, PyTuple>, bursts: u32, per_burst: u32,
                    stream: u64) -> PyResult<Vec<f64>> {
let kernel = kernel.get();
    if per_burst == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("time_driver_launches: per_burst must be positive"));
    }
    if kernel.global_scratch > 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("time_driver_launches: the kernel needs a global scratch per launch"));
    }
    let mut pack = kernel.pack(args)?;
    let driver = tritium_runtime::cuda::driver().map_err(crate::runtime::to_py)?;
    // the GIL stays held (a benchmark; the pack holds raw pointers)
    (|| -> tritium_runtime::Result<Vec<f64>> {
        let mut out = Vec::with_capacity(bursts as usize);
        for _ in 0..bursts {
            let t0 = std::time::Instant::now();
            for _ in 0..per_burst {
                kernel.kernel.launch([1, 1, 1], stream, &mut pack)?;
            }
            out.push(t0.elapsed().as_secs_f64() * 1e6 / per_burst as f64);
            driver.synchronize()?;
        }
        Ok(out)
    })()
    .map_err(crate::runtime::to_py)
}

/// The device and stream this launcher would launch on now (for tests and profiling).
#[pyfunction]
fn launch_device_and_stream(launcher: &Bound<'_, FastLauncher>) -> PyResult<(i32, u64)> {
let (py, launcher) = (launcher.py(), launcher.get());
    Ok(match launcher.queries(py)? {
        Some((d, s)) => {
            let (dev, obj) = launcher.device(py, &d)?;
            (dev, crate::launcher::stream_of(&s, &obj)?)
        }
        None => (0, 0),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeyPlanProbe>()?;
    m.add_function(wrap_pyfunction!(time_driver_launches, m)?)?;
    m.add_function(wrap_pyfunction!(launch_device_and_stream, m)?)
}
