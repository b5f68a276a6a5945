//! `compile_batch`: many kernels' IR → PTX → cubin at once, on worker
//! threads with the GIL released. The autotuner hands it every config of a
//! tuning run (and `warmup` every specialization asked for); the frontend
//! already ran in Python, so a job is plain bytes and strings and nothing in
//! a worker touches a Python object. Each job succeeds or fails on its own:
//! the result list holds a dict or an exception instance per job, in order.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tritium_runtime::ptxas;

/// (tile IR bytes, codegen arch "sm_90", num_warps, ptxas path or None,
/// ptxas arch "sm_90a", the kernel's name when the PTX has no entry,
/// libdevice.10.bc path or None, num_stages).
type Job = (Vec<u8>, String, i64, Option<PathBuf>, String, String, Option<PathBuf>, i64);

struct Built {
    ptx: tritium_codegen::CompiledPtx,
    cubin: Option<(Vec<u8>, ptxas::PtxasInfo)>,
}

/// Why one job failed, without Python objects (workers hold no GIL); turned
/// into the exception `compile_ptx` / `ptxas_compile` would have raised.
enum Failure {
    Decode(String),
    Verify(String),
    Codegen(String),
    Ptxas(tritium_runtime::Error),
    Panic(String),
}

impl Failure {
    fn into_py(self) -> PyErr {
        match self {
            Failure::Decode(m) => crate::IRDecodeError::new_err(m),
            Failure::Verify(m) => crate::IRVerifyError::new_err(m),
            Failure::Codegen(m) => crate::codegen::CodegenError::new_err(m),
            Failure::Ptxas(e) => crate::runtime::to_py(e),
            Failure::Panic(m) => PyRuntimeError::new_err(format!("internal error in tritium-codegen: {m}")),
        }
    }
}

fn build(job: &Job) -> Result<Built, Failure> {
    let (ir, arch, warps, ptxas_path, sass_arch, name, libdevice, num_stages) = job;
    let mut options = tritium_codegen::Options::with_warps(arch, *warps).map_err(codegen_failure)?;
    options.libdevice = libdevice.clone();
    // as compile_ptx takes it
    options.num_stages = (*num_stages).clamp(0, 8) as u32;
    let module = tritium_ir::decode(ir).map_err(|e| Failure::Decode(e.to_string()))?;
    // ptxas starts as soon as the PTX exists and assembles while codegen prints the LLVM IR text
    let (mut ptx, running) = tritium_codegen::compile_ptx_overlapped(&module, &options, |out| {
        ptxas_path.as_ref().map(|path| {
            let symbol = out.kernels.first().unwrap_or(name);
            (std::time::Instant::now(), ptxas::spawn(path, &out.ptx, sass_arch, symbol))
        })
    })
    .map_err(codegen_failure)?;
    let cubin = match running {
        Some((start, running)) => {
            let built = running.and_then(|r| r.wait()).map_err(Failure::Ptxas)?;
            // from its start: it overlapped the llir_text stage before it
            ptx.timings.stages.push(("ptxas", start.elapsed().as_secs_f64()));
            Some(built)
        }
        None => None,
    };
    Ok(Built { ptx, cubin })
}

fn codegen_failure(e: tritium_codegen::CodegenError) -> Failure {
    match e {
        tritium_codegen::CodegenError::Verify(v) => Failure::Verify(v.to_string()),
        other => Failure::Codegen(other.to_string()),
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs every job on up to `threads` workers (each takes the next job not
/// yet taken, so a slow kernel does not hold back a queue behind it).
fn run_all(jobs: &[Job], threads: usize) -> Vec<Result<Built, Failure>> {
    let results: Vec<Mutex<Option<Result<Built, Failure>>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= jobs.len() {
            break;
        }
        let r = catch_unwind(AssertUnwindSafe(|| build(&jobs[i]))).unwrap_or_else(|p| Err(Failure::Panic(panic_text(p))));
        *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            // LLVM recurses deeply on large functions: the main thread's stack size, not 2 MiB.
            // A thread that cannot be spawned is one worker fewer; the jobs still run.
            let _ = std::thread::Builder::new().stack_size(8 << 20).spawn_scoped(s, work);
        }
        work(); // the calling thread works too (and alone if no thread could be spawned)
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(|| Err(Failure::Panic("job not run".into()))))
        .collect()
}

/// Compiles `jobs` (see `Job`) in parallel on `threads` workers (default:
/// the machine's cores, at most one per job). Returns, per job, either the
/// dict `compile_ptx` returns plus "cubin" (bytes) and "ptxas" ({registers,
/// spill_stores, spill_loads, stack_bytes, shared_bytes}) when a ptxas was
/// given (and a ("ptxas", seconds) entry at the end of "timings": from its
/// start, right after emission, so it overlaps "llir_text"), or the
/// exception that job raised (not raised here).
#[pyfunction]
#[pyo3(signature = (jobs, threads = None))]
fn compile_batch(py: Python<'_>, jobs: Vec<Job>, threads: Option<usize>) -> PyResult<Vec<PyObject>> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let threads = threads.unwrap_or(cores).clamp(1, jobs.len().max(1));
    let built = py.allow_threads(|| run_all(&jobs, threads));
    built
        .into_iter()
        .map(|r| match r {
            Ok(b) => to_dict(py, b).map(|d| d.into_any().unbind()),
            Err(f) => Ok(f.into_py().into_value(py).into_any()),
        })
        .collect()
}

/// The kernel's tensor-map parameters as (base argument, box, swizzle bytes).
pub(crate) fn tensormap_list(maps: &[tritium_codegen::TensorMapParam]) -> Vec<(usize, Vec<u32>, u32)> {
    maps.iter().map(|m| (m.base_arg, m.box_dims.clone(), m.swizzle_bytes)).collect()
}

fn to_dict(py: Python<'_>, b: Built) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("llir", b.ptx.llir)?;
    d.set_item("ptx", b.ptx.ptx)?;
    d.set_item("shared", b.ptx.shared)?;
    d.set_item("kernels", b.ptx.kernels)?;
    d.set_item("allocation", b.ptx.allocation)?;
    d.set_item("tensormaps", tensormap_list(&b.ptx.tensormaps))?;
    d.set_item("global_scratch", b.ptx.global_scratch)?;
    d.set_item("timings", b.ptx.timings.stages)?;
    if let Some((cubin, info)) = b.cubin {
        d.set_item("cubin", PyBytes::new(py, &cubin))?;
        let i = PyDict::new(py);
        i.set_item("registers", info.registers)?;
        i.set_item("spill_stores", info.spill_stores)?;
        i.set_item("spill_loads", info.spill_loads)?;
        i.set_item("stack_bytes", info.stack_bytes)?;
        i.set_item("shared_bytes", info.shared_bytes)?;
        d.set_item("ptxas", i)?;
    }
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile_batch, m)?)?;
    Ok(())
}
