//! Python bindings of tritium-codegen: `compile_ptx`. Codegen errors become
//! `CodegenError` (a ValueError), so an unsupported op reads as a user error
//! naming the kernel's source line.
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(_core, CodegenError, PyValueError, "A kernel the code generator cannot lower (yet), or bad options.");

fn codegen_err(e: tritium_codegen::CodegenError) -> PyErr {
    match e {
        tritium_codegen::CodegenError::Verify(v) => crate::IRVerifyError::new_err(v.to_string()),
        other => CodegenError::new_err(other.to_string()),
    }
}

/// Compiles binary tile IR for `arch` (sm_80, sm_89, sm_90, sm_90a, or an AMD
/// target: hip:gfx90a, gfx942, gfx950, gfx1100, gfx1200) and `num_warps`
/// warps (waves) per block, loops feeding dots pipelined over `num_stages`
/// shared-memory stages (unless their `tl.range` says otherwise); returns {"llir": str, "ptx": str (the target's
/// assembly: PTX or AMDGCN), "binary": bytes (the HSACO; empty for NVIDIA), "shared": int
/// (dynamic shared memory bytes), "kernels": [str]}, and with `dump_stages`
/// also "stages": [(stage, tile IR text)], the IR as the frontend built it
/// ("frontend") and after each tile-level pass. `libdevice` is the path of
/// NVIDIA's libdevice.10.bc for libdevice calls the target does not lower.
/// `assembly=False` leaves an AMD target's "ptx" (AMDGCN) empty, saving a
/// second run of code generation (`assembly_from_llir` makes it later).
#[pyfunction]
#[pyo3(signature = (ir_bytes, arch = "sm_90", num_warps = None, dump_stages = false, libdevice = None, num_stages = 3, assembly = true))]
fn compile_ptx<'py>(
    py: Python<'py>,
    ir_bytes: &[u8],
    arch: &str,
    num_warps: Option<&Bound<'py, PyAny>>,
    dump_stages: bool,
    libdevice: Option<std::path::PathBuf>,
    num_stages: i64,
    assembly: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (out, stages) = crate::guarded(|| {
        // options first: a bad one is reported whatever the IR holds
        let warps = match num_warps {
            None => 4,
            Some(n) => n.extract::<i64>().map_err(|_| {
                CodegenError::new_err(format!("invalid compile option: num_warps must be a power of two from 1 to 32, got {n}"))
            })?,
        };
        let mut options = tritium_codegen::Options::with_warps(arch, warps).map_err(codegen_err)?;
        options.libdevice = libdevice;
        options.num_stages = num_stages.clamp(0, 8) as u32;
        options.assembly = assembly;
        let mut module = crate::decode(ir_bytes)?;
        let mut stages: Vec<(String, String)> = Vec::new();
        if dump_stages {
            tritium_ir::verify(&module).map_err(|e| crate::IRVerifyError::new_err(e.to_string()))?;
            stages.push(("frontend".into(), tritium_ir::print(&module)));
            let target = options.arch.target();
            if tritium_codegen::claim_accesses(&mut module, target.as_ref(), &options) > 0 {
                stages.push(("claim_tma".into(), tritium_ir::print(&module)));
            }
            let mut dump = |name: &str, m: &tritium_ir::Module| stages.push((name.to_string(), tritium_ir::print(m)));
            let passes = options.passes.clone();
            tritium_codegen::run_passes(&mut module, &passes, Some(&mut dump))
                .map_err(|e| crate::IRVerifyError::new_err(e.to_string()))?;
            // the passes already ran: codegen takes their result as it is
            options.passes = tritium_codegen::PassOptions::none();
        }
        // LLVM work holds no Python objects: let other threads run meanwhile
        let out = py.allow_threads(|| tritium_codegen::compile_ptx(&module, &options)).map_err(codegen_err)?;
        Ok((out, stages))
    })?;
    let d = PyDict::new(py);
    d.set_item("llir", out.llir)?;
    d.set_item("ptx", out.ptx)?;
    // AMD targets: the HSACO lld linked in-process (empty for NVPTX)
    d.set_item("binary", pyo3::types::PyBytes::new(py, &out.binary))?;
    d.set_item("shared", out.shared)?;
    d.set_item("kernels", out.kernels)?;
    d.set_item("allocation", out.allocation)?;
    d.set_item("tensormaps", crate::batch::tensormap_list(&out.tensormaps))?;
    d.set_item("global_scratch", out.global_scratch)?;
    // [(stage, seconds)] in pipeline order (tritium_codegen::StageTimes)
    d.set_item("timings", out.timings.stages)?;
    if dump_stages {
        d.set_item("stages", stages)?;
    }
    Ok(d)
}

/// The assembly text (AMDGCN, PTX) of `llir`, the optimised LLVM IR that
/// `compile_ptx` returned for `arch`: code generation only.
#[pyfunction]
fn assembly_from_llir(py: Python<'_>, llir: &str, arch: &str) -> PyResult<String> {
    crate::guarded(|| py.allow_threads(|| tritium_codegen::emit::assembly_from_llir(llir, arch)).map_err(codegen_err))
}

/// What code generation for `arch` will make of the module's memory
/// accesses and loops (tritium-codegen `report`): ({"accesses": [{"file",
/// "line", "col", "op", "elem_bytes", "width", "limit", "contiguity",
/// "divisibility", "mask_constancy"}], "loops": [{"file", "line", "col",
/// "trip_count"}]}).
#[pyfunction]
#[pyo3(signature = (ir_bytes, arch = "sm_90"))]
fn access_report<'py>(py: Python<'py>, ir_bytes: &[u8], arch: &str) -> PyResult<Bound<'py, PyDict>> {
    let (accesses, loops) = crate::guarded(|| {
        let target = tritium_codegen::target::lookup(arch).map_err(codegen_err)?;
        let module = crate::decode(ir_bytes)?;
        tritium_codegen::report::report(&module, target.max_access_bytes()).map_err(codegen_err)
    })?;
    let loc = |d: &Bound<'py, PyDict>, l: &tritium_ir::LocData| -> PyResult<()> {
        d.set_item("file", &l.file)?;
        d.set_item("line", l.line)?;
        d.set_item("col", l.col)
    };
    let mut acc = Vec::new();
    for a in accesses {
        let d = PyDict::new(py);
        loc(&d, &a.loc)?;
        d.set_item("op", a.op)?;
        d.set_item("elem_bytes", a.elem_bytes)?;
        d.set_item("width", a.width)?;
        d.set_item("limit", a.limit)?;
        d.set_item("contiguity", a.contiguity)?;
        d.set_item("divisibility", a.divisibility)?;
        d.set_item("mask_constancy", a.mask_constancy)?;
        acc.push(d);
    }
    let mut lps = Vec::new();
    for l in loops {
        let d = PyDict::new(py);
        loc(&d, &l.loc)?;
        d.set_item("trip_count", l.trip_count)?;
        lps.push(d);
    }
    let out = PyDict::new(py);
    out.set_item("accesses", acc)?;
    out.set_item("loops", lps)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CodegenError", m.py().get_type::<CodegenError>())?;
    m.add_function(wrap_pyfunction!(compile_ptx, m)?)?;
    m.add_function(wrap_pyfunction!(access_report, m)?)?;
    m.add_function(wrap_pyfunction!(assembly_from_llir, m)?)?;
    Ok(())
}
