//! Python bindings of tritium-runtime: driver status and device attributes,
//! ptxas, and `CudaKernel` whose `launch` is the per-launch fast path
//! (argument extraction and packing in Rust, one driver call).
use std::ffi::c_void;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};
use tritium_runtime::args::encode;
use tritium_runtime::{cuda, ptxas, ArgKind, ArgPack, ArgValue, Error, Image, Kernel, TensorMap};

use crate::key::Read;
use crate::tensormaps::MapParam;

create_exception!(_core, CudaError, PyRuntimeError, "A CUDA driver call failed; the message names the call and the kernel.");
create_exception!(_core, CudaUnavailableError, PyRuntimeError, "No CUDA driver (libcuda) could be loaded.");
create_exception!(_core, PtxasError, PyRuntimeError, "ptxas is missing, failed, or printed an unreadable report.");

pub(crate) fn to_py(e: Error) -> PyErr {
    match e {
        Error::NoDriver(_) => CudaUnavailableError::new_err(e.to_string()),
        Error::Cuda { .. } => CudaError::new_err(e.to_string()),
        Error::Arg(_) | Error::Invalid(_) => PyValueError::new_err(e.to_string()),
        Error::Ptxas(_) => PtxasError::new_err(e.to_string()),
        Error::OutOfResources { ref kernel, resource, required, limit, .. } => {
            out_of_resources(kernel, resource, required, limit).unwrap_or_else(|| PyValueError::new_err(e.to_string()))
        }
    }
}

/// Python's `tritium.runtime.errors.OutOfResources(required, limit, name, kernel)`
/// (what Triton code and the autotuner catch); None if it cannot be made.
fn out_of_resources(kernel: &str, resource: &str, required: i64, limit: i64) -> Option<PyErr> {
    Python::with_gil(|py| {
        let cls = py.import("tritium.runtime.errors").and_then(|m| m.getattr("OutOfResources")).ok()?;
        let value = cls.call1((required, limit, resource, kernel)).ok()?;
        Some(PyErr::from_value(value))
    })
}

/// (True, driver version) when libcuda loads and initialises, else (False, why).
#[pyfunction]
fn cuda_driver_status() -> (bool, String) {
    match cuda::driver().and_then(|d| d.version()) {
        Ok(v) => (true, format!("{}.{}", v / 1000, (v % 1000) / 10)),
        Err(e) => (false, e.to_string()),
    }
}

#[pyfunction]
fn cuda_device_count() -> PyResult<i32> {
    cuda::driver().and_then(|d| d.device_count()).map_err(to_py)
}

/// name, capability (major, minor), multiprocessors, max threads/shared memory per block.
#[pyfunction]
fn cuda_device_info<'py>(py: Python<'py>, device: i32) -> PyResult<Bound<'py, PyDict>> {
    let d = cuda::driver().map_err(to_py)?;
    let info = cuda::Device::get(d, device).and_then(|dev| dev.info(d)).map_err(to_py)?;
    let out = PyDict::new(py);
    out.set_item("name", info.name)?;
    out.set_item("capability", info.capability)?;
    out.set_item("multiprocessors", info.multiprocessors)?;
    out.set_item("max_threads_per_block", info.max_threads_per_block)?;
    out.set_item("max_shared_per_block", info.max_shared_per_block)?;
    out.set_item("max_shared_per_block_optin", info.max_shared_per_block_optin)?;
    out.set_item("warp_size", info.warp_size)?;
    Ok(out)
}

/// One `CUdevice_attribute` of `device` (cuda.h's numbering; Python names them).
#[pyfunction]
fn cuda_device_attribute(device: i32, attribute: i32) -> PyResult<i32> {
    let d = cuda::driver().map_err(to_py)?;
    cuda::Device::get(d, device).and_then(|dev| dev.attribute(d, attribute)).map_err(to_py)
}

/// Waits for all work on `device`'s current context.
#[pyfunction]
fn cuda_synchronize(device: i32) -> PyResult<()> {
    let d = cuda::driver().map_err(to_py)?;
    d.ensure_context(device).and_then(|_| d.synchronize()).map_err(to_py)
}

/// The ptxas to use (TRITIUM_PTXAS, PATH, then `extra_dirs`), or None.
#[pyfunction]
#[pyo3(signature = (extra_dirs = Vec::new()))]
fn find_ptxas(extra_dirs: Vec<PathBuf>) -> PyResult<Option<PathBuf>> {
    ptxas::find(&extra_dirs).map_err(to_py)
}

#[pyfunction]
fn ptxas_version(path: PathBuf) -> PyResult<String> {
    ptxas::version(&path).map_err(to_py)
}

/// Assembles PTX; returns (cubin bytes, {registers, spill_stores, spill_loads, stack_bytes, shared_bytes}).
#[pyfunction]
fn ptxas_compile<'py>(py: Python<'py>, path: PathBuf, ptx: &str, arch: &str, kernel: &str) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let (cubin, info) = py.allow_threads(|| ptxas::compile(&path, ptx, arch, kernel)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("registers", info.registers)?;
    d.set_item("spill_stores", info.spill_stores)?;
    d.set_item("spill_loads", info.spill_loads)?;
    d.set_item("stack_bytes", info.stack_bytes)?;
    d.set_item("shared_bytes", info.shared_bytes)?;
    Ok((PyBytes::new(py, &cubin), d))
}

/// One parameter of the Python-level signature: skipped (constexpr), passed
/// as `kind`, or a host TensorDescriptor of rank `desc` (passed as several).
struct Param {
    name: String,
    kind: Option<ArgKind>,
    desc: Option<usize>,
}

/// The rank of a `tensordesc<fp16[64, 64]>` parameter kind.
fn descriptor_rank(kind: &str) -> Option<usize> {
    let dims = kind.strip_prefix("tensordesc<")?.split_once('[')?.1.split_once(']')?.0;
    Some(dims.split(',').count())
}

/// A host TensorDescriptor as the kernel's arguments (python/tritium/language/
/// blocks.py `descriptor_args`): base, shape as i32, leading strides as i64,
/// and an i1 that is true for NaN padding (the last stride is 1).
fn descriptor_values(v: &Bound<'_, PyAny>, rank: usize, name: &str, kernel: &str) -> PyResult<Vec<(ArgKind, ArgValue)>> {
    let py = v.py();
    let bad = |what: &str| PyValueError::new_err(format!("kernel '{kernel}', argument '{name}': {what}"));
    let ints = |field: &Bound<'_, PyString>, n: usize| -> PyResult<Vec<i128>> {
        let seq = v.getattr(field)?;
        if seq.len()? != rank {
            return Err(bad(&format!("a rank-{rank} TensorDescriptor was compiled for, got {} {field}", seq.len()?)));
        }
        (0..n).map(|i| seq.get_item(i)?.extract::<i128>()).collect()
    };
    let mut out = vec![(ArgKind::Ptr, extract(ArgKind::Ptr, &v.getattr(intern!(py, "base"))?, name, kernel)?)];
    out.extend(ints(intern!(py, "shape"), rank)?.into_iter().map(|s| (ArgKind::I32, ArgValue::Int(s))));
    out.extend(ints(intern!(py, "strides"), rank - 1)?.into_iter().map(|s| (ArgKind::I64, ArgValue::Int(s))));
    let nan = v.getattr(intern!(py, "padding"))?.extract::<String>()? == "nan";
    out.push((ArgKind::I1, ArgValue::Bool(nan)));
    Ok(out)
}

/// A loaded kernel. `params` lists every parameter of the @jit function in
/// order as (name, kind) with kind a dtype name, "ptr", or None for constexprs,
/// so `launch` takes the bound arguments as they are.
#[pyclass(module = "tritium._core", frozen)]
pub(crate) struct CudaKernel {
    pub(crate) kernel: Kernel,
    params: Vec<Param>,
    num_args: usize,
    /// Tensor maps the kernel takes after its other arguments (TMA).
    maps: Vec<MapParam>,
    /// Bytes of global scratch per program (device-built tensor maps),
    /// whose address the kernel takes last; 0: none.
    pub(crate) global_scratch: u64,
}

/// A launch's global scratch: `per_program` bytes for each program of
/// `grid`, 128-byte aligned, from the allocator `triton.set_allocator` set
/// (asked as Triton asks it: size, alignment, stream). The buffer object
/// must outlive the launch call; the allocator's memory is stream-ordered
/// (PyTorch's caching allocator), so dropping it after the launch is safe.
fn global_scratch(py: Python<'_>, per_program: u64, grid: [u64; 3], stream: u64, kernel: &str) -> PyResult<(PyObject, u64)> {
    let size = grid.iter().try_fold(per_program, |n, &g| n.checked_mul(g));
    let size = size.ok_or_else(|| PyValueError::new_err(format!("kernel '{kernel}': its global scratch for grid {grid:?} overflows")))?;
    // the allocator is user code: _allocation.scratch_for checks what it returns and names the kernel
    let allocation = py.import(intern!(py, "tritium.runtime._allocation"))?;
    let (buffer, address) = allocation
        .call_method1(intern!(py, "scratch_for"), (kernel, size, 128u64, stream))?
        .extract::<(Bound<'_, PyAny>, u64)>()?;
    Ok((buffer.unbind(), address))
}

fn extract(kind: ArgKind, v: &Bound<'_, PyAny>, name: &str, kernel: &str) -> PyResult<ArgValue> {
    let py = v.py();
    if kind == ArgKind::Ptr {
        if let Ok(i) = v.downcast::<PyInt>() {
            return Ok(ArgValue::Int(i.extract::<i128>()?));
        }
        if let Ok(dp) = v.getattr(intern!(py, "data_ptr")) {
            // a torch tensor in host memory: its address would fault on the device
            if let Ok(on_gpu) = v.getattr(intern!(py, "is_cuda")) {
                if !on_gpu.is_truthy()? {
                    let device = v.getattr(intern!(py, "device")).map(|d| d.to_string()).unwrap_or_else(|_| "the host".into());
                    return Err(PyValueError::new_err(format!(
                        "kernel '{kernel}', argument '{name}': the tensor is on {device}, but a GPU kernel can only \
                         read GPU memory; move it with .cuda() or .to('cuda')"
                    )));
                }
            }
            return Ok(ArgValue::Ptr(dp.call0()?.extract::<u64>()?));
        }
        if let Ok(cai) = v.getattr(intern!(py, "__cuda_array_interface__")) {
            return Ok(ArgValue::Ptr(cai.get_item("data")?.get_item(0)?.extract::<u64>()?));
        }
        // host arrays (NumPy) also speak DLPack; they keep the error below
        if v.hasattr(intern!(py, "__dlpack__"))? && !v.hasattr(intern!(py, "__array_interface__"))? {
            let t = crate::dlpack::dlpack_of(v)?;
            if !t.on_cuda() {
                return Err(crate::dlpack::device_error(&t, name, kernel));
            }
            return Ok(ArgValue::Ptr(t.address));
        }
        return Err(PyTypeError::new_err(format!(
            "kernel '{kernel}', argument '{name}': expected a GPU tensor (data_ptr(), __cuda_array_interface__ or __dlpack__), got {}",
            v.get_type().name()?
        )));
    }
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(ArgValue::Bool(b.is_true()));
    }
    if let Ok(i) = v.downcast::<PyInt>() {
        return i.extract::<i128>().map(ArgValue::Int).map_err(|_| {
            PyValueError::new_err(format!("kernel '{kernel}', argument '{name}': integer does not fit in 128 bits"))
        });
    }
    if let Ok(f) = v.downcast::<PyFloat>() {
        return Ok(ArgValue::Float(f.value()));
    }
    // numpy scalars and other number-likes
    if let Ok(item) = v.call_method0(intern!(py, "item")) {
        if !item.is(v) && !item.is_instance_of::<PyString>() {
            return extract(kind, &item, name, kernel);
        }
    }
    Err(PyTypeError::new_err(format!(
        "kernel '{kernel}', argument '{name}': expected a number, got {}",
        v.get_type().name()?
    )))
}

/// Slots on the stack for kernels with up to this many parameters.
const STACK_ARGS: usize = 32;
/// Tensor maps the fast path keeps on the stack.
const STACK_MAPS: usize = 4;

impl CudaKernel {
    /// Launches with the values the key read (one per parameter, in order).
    /// Ok(false) when a value does not fit the fast path (a host array, an
    /// object where the kernel takes an argument): the caller goes the Python way.
    pub(crate) fn launch_reads(&self, grid: [u64; 3], stream: u64, reads: &[Read]) -> PyResult<bool> {
        let name = &self.kernel.name;
        if reads.len() != self.params.len() || self.num_args > STACK_ARGS || self.maps.len() > STACK_MAPS {
            return Ok(false);
        }
        let mut slots = [0u64; STACK_ARGS];
        let mut maps = [TensorMap::zeroed(); STACK_MAPS];
        let mut n = 0;
        for (i, (p, r)) in self.params.iter().zip(reads).enumerate() {
            if let (Some(rank), Read::Desc(ob)) = (p.desc, *r) {
                Python::with_gil(|py| -> PyResult<()> {
                    // SAFETY: an item of the launch's argument tuple, alive for this call
                    let v = unsafe { Bound::from_borrowed_ptr(py, ob) };
                    let values = descriptor_values(&v, rank, &p.name, name)?;
                    for (m, map) in self.maps.iter().enumerate().filter(|(_, m)| m.param == i) {
                        maps[m] = map.map(&values, name)?;
                    }
                    for (kind, value) in values {
                        slots[n] = encode(kind, value, &p.name).map_err(|e| PyValueError::new_err(format!("kernel '{name}', {e}")))?;
                        n += 1;
                    }
                    Ok(())
                })?;
                continue;
            }
            if p.desc.is_some() {
                return Ok(false); // a descriptor read some other way: the Python path
            }
            let Some(kind) = p.kind else { continue };
            let v = match *r {
                Read::Bool(b) => ArgValue::Bool(b),
                Read::Int(i) => ArgValue::Int(i as i128),
                Read::UInt(u) => ArgValue::Int(u as i128),
                Read::Float(f) => ArgValue::Float(f),
                Read::Ptr(a) => ArgValue::Ptr(a),
                Read::Host | Read::Obj | Read::Desc(_) => return Ok(false),
            };
            slots[n] = encode(kind, v, &p.name).map_err(|e| PyValueError::new_err(format!("kernel '{name}', {e}")))?;
            n += 1;
        }
        let mut ptrs = [std::ptr::null_mut::<c_void>(); STACK_ARGS + STACK_MAPS + 1];
        for (p, s) in ptrs.iter_mut().zip(slots.iter_mut()).take(n) {
            *p = s as *mut u64 as *mut c_void;
        }
        // the maps follow the other parameters
        for m in maps.iter_mut().take(self.maps.len()) {
            ptrs[n] = m as *mut TensorMap as *mut c_void;
            n += 1;
        }
        // then the global scratch, alive until the launch was issued
        let scratch = match self.global_scratch {
            0 => None,
            bytes => Some(Python::with_gil(|py| global_scratch(py, bytes, grid, stream, name))?),
        };
        let mut scratch_address = scratch.as_ref().map_or(0, |s| s.1);
        if scratch.is_some() {
            ptrs[n] = &mut scratch_address as *mut u64 as *mut c_void;
            n += 1;
        }
        let params = if n == 0 { std::ptr::null_mut() } else { ptrs.as_mut_ptr() };
        // SAFETY: one pointer per kernel argument, each to an 8-byte slot holding the value little-endian
        unsafe { self.kernel.launch_params(grid, stream, params) }.map_err(to_py)?;
        Ok(true)
    }

    /// Every runtime argument of `args` (all parameters in order; constexpr
    /// positions skipped) read and packed for the driver.
    pub(crate) fn pack(&self, args: &Bound<'_, PyTuple>) -> PyResult<ArgPack> {
        let name = &self.kernel.name;
        if args.len() != self.params.len() {
            return Err(PyTypeError::new_err(format!(
                "kernel '{name}' takes {} arguments, got {}", self.params.len(), args.len()
            )));
        }
        let mut pack = ArgPack::with_capacity(self.num_args);
        let mut maps = Vec::with_capacity(self.maps.len());
        for (i, (p, v)) in self.params.iter().zip(args.iter()).enumerate() {
            if let Some(rank) = p.desc {
                let values = descriptor_values(&v, rank, &p.name, name)?;
                for (m, map) in self.maps.iter().enumerate().filter(|(_, m)| m.param == i) {
                    maps.push((m, map.map(&values, name)?));
                }
                for (kind, value) in values {
                    pack.push(kind, value, &p.name).map_err(|e| PyValueError::new_err(format!("kernel '{name}', {e}")))?;
                }
                continue;
            }
            if let Some(kind) = p.kind {
                let value = extract(kind, &v, &p.name, name)?;
                pack.push(kind, value, &p.name).map_err(|e| PyValueError::new_err(format!("kernel '{name}', {e}")))?;
            }
        }
        // the maps are the kernel's last parameters, in their order
        maps.sort_by_key(|&(m, _)| m);
        for (_, map) in maps {
            pack.push_map(map);
        }
        Ok(pack)
    }
}

#[pymethods]
impl CudaKernel {
    #[new]
    #[pyo3(signature = (image, name, params, num_warps = 4, shared_bytes = 0, device = 0, tensormaps = Vec::new(), global_scratch = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, image: &Bound<'_, PyAny>, name: &str, params: Vec<(String, Option<String>)>, num_warps: u32,
           shared_bytes: u32, device: i32, tensormaps: Vec<(usize, Vec<u32>, u32)>, global_scratch: u64) -> PyResult<CudaKernel> {
        let maps = tensormaps
            .into_iter()
            .map(|(base, box_dims, swizzle)| MapParam::new(&params, base, box_dims, swizzle))
            .collect::<PyResult<Vec<_>>>()
            .map_err(|e| PyValueError::new_err(format!("kernel '{name}': {e}")))?;
        let params = params
            .into_iter()
            .map(|(n, k)| match k.as_deref().and_then(descriptor_rank) {
                Some(rank) => Ok(Param { kind: None, desc: Some(rank), name: n }),
                None => Ok(Param { kind: k.map(|k| ArgKind::parse(&k)).transpose().map_err(to_py)?, desc: None, name: n }),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let kernel = if let Ok(b) = image.downcast::<PyBytes>() {
            let bytes = b.as_bytes().to_vec();
            py.allow_threads(|| Kernel::load(device, Image::Cubin(&bytes), name, num_warps, shared_bytes))
        } else if let Ok(s) = image.downcast::<PyString>() {
            let text = s.to_str()?.to_string();
            py.allow_threads(|| Kernel::load(device, Image::Ptx(&text), name, num_warps, shared_bytes))
        } else {
            return Err(PyTypeError::new_err("image must be cubin bytes or PTX text"));
        }
        .map_err(to_py)?;
        let num_args = params.iter().map(|p| if let Some(r) = p.desc { 2 * r + 1 } else { p.kind.is_some() as usize }).sum();
        Ok(CudaKernel { kernel, params, num_args, maps, global_scratch })
    }

    /// Launches on `stream` with `args` (every parameter, in order; constexpr
    /// positions are skipped).
    fn launch(&self, gx: u64, gy: u64, gz: u64, stream: u64, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let mut pack = self.pack(args)?;
        let mut _scratch = None;
        if self.global_scratch > 0 {
            let (buffer, address) = global_scratch(args.py(), self.global_scratch, [gx, gy, gz], stream, &self.kernel.name)?;
            _scratch = Some(buffer);
            pack.push_after_maps(address);
        }
        self.kernel.launch([gx, gy, gz], stream, &mut pack).map_err(to_py)
    }

    /// Bytes of global scratch each program gets (device-built tensor maps).
    #[getter]
    fn global_scratch(&self) -> u64 {
        self.global_scratch
    }

    #[getter]
    fn name(&self) -> &str {
        &self.kernel.name
    }
    #[getter]
    fn num_regs(&self) -> i32 {
        self.kernel.attributes.num_regs
    }
    #[getter]
    fn local_bytes(&self) -> i32 {
        self.kernel.attributes.local_bytes
    }
    #[getter]
    fn static_shared_bytes(&self) -> i32 {
        self.kernel.attributes.static_shared_bytes
    }
    #[getter]
    fn shared_bytes(&self) -> u32 {
        self.kernel.shared_bytes
    }
    /// The driver's limit on this function's dynamic shared memory (what
    /// loading set for kernels over 48 KiB).
    #[getter]
    fn max_dynamic_shared_bytes(&self) -> PyResult<i32> {
        self.kernel.max_dynamic_shared_bytes().map_err(to_py)
    }
    #[getter]
    fn num_warps(&self) -> u32 {
        self.kernel.threads_per_block / 32
    }
    /// Tensor maps encoded so far, per tensor-map parameter (the cache
    /// that keeps launches with the same descriptors cheap).
    #[getter]
    fn tensormaps_cached(&self) -> Vec<usize> {
        self.maps.iter().map(MapParam::cached).collect()
    }
    #[getter]
    fn device(&self) -> i32 {
        self.kernel.device
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CudaError", py.get_type::<CudaError>())?;
    m.add("CudaUnavailableError", py.get_type::<CudaUnavailableError>())?;
    m.add("PtxasError", py.get_type::<PtxasError>())?;
    m.add_class::<CudaKernel>()?;
    m.add_function(wrap_pyfunction!(cuda_driver_status, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_device_count, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_device_info, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(find_ptxas, m)?)?;
    m.add_function(wrap_pyfunction!(ptxas_version, m)?)?;
    m.add_function(wrap_pyfunction!(ptxas_compile, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_device_attribute, m)?)?;
    Ok(())
}
