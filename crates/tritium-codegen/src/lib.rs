//! tritium-codegen: lowers verified tile IR to LLVM IR through inkwell (LLVM 19,
//! linked statically) and emits target code. `compile_ptx` runs the tile
//! passes and layout assignment, then lowers every function reachable from a
//! kernel (callees first: noinline calls are real calls), allocates shared
//! memory module-wide, lets membar keep the barriers it needs, and runs the
//! target's LLVM pipeline (O3 less DSE for NVPTX, O1's passes that matter for AMDGPU) and emitter (PTX; an
//! HSACO linked in-process, and the AMDGCN text when asked for).
//! Everything target-specific sits behind `target::Target` (NVPTX, AMDGPU),
//! looked up by name (`cuda:90`, `hip:gfx942`); `lower/` is shared, one file per op
//! family, and every op of the table has an arm in its dispatch (`dot` an
//! explicit `Unsupported` until tensor cores).
pub mod emit;
pub mod error;
pub mod layout;
pub mod report;
pub mod symbol;
pub mod llvm;
mod lower;
mod options;
pub mod smem_plan;
pub mod target;

use inkwell::context::Context;
use inkwell::targets::TargetTriple;

pub use error::{CodegenError, Result};
pub use options::{Options, TMA_BY_DEFAULT, TMA_DEVICE_BY_DEFAULT};
pub use target::{AmdArch, Amdgpu, Arch, NvArch, Nvptx, Target};
/// The tile-level passes `compile_ptx` runs first (re-exported for tools).
pub use tritium_transforms::{run_passes, PassOptions};

/// The artefacts of one compilation (the name is from when NVPTX was the only target).
#[derive(Clone, Debug)]
pub struct CompiledPtx {
    /// Optimised LLVM IR text.
    pub llir: String,
    /// The target's assembly: PTX, or AMDGCN for AMD targets.
    pub ptx: String,
    /// The loadable binary the target builds in-process (AMD: the HSACO); empty for NVPTX.
    pub binary: Vec<u8>,
    /// Dynamic shared memory the kernel needs, in bytes (the largest kernel's).
    pub shared: u32,
    /// The PTX entry name of each kernel, in module order (`symbol::symbol_name`).
    pub kernels: Vec<String>,
    /// Shared-memory allocation of every lowered function, as text
    /// (`ModuleAllocation::dump`): buffers with offsets and sizes, call paths with bases.
    pub allocation: String,
    /// Every lowered function's shared-memory access trace with the barriers
    /// membar kept and dropped (`tritium_analysis::membar::render`), callees first.
    pub membar: String,
    /// The tensor maps the first kernel takes after its other arguments
    /// (TMA on sm_90a), in order: what the launcher must encode.
    pub tensormaps: Vec<TensorMapParam>,
    /// Bytes of global scratch each program of the first kernel needs (its
    /// device-built tensor maps, 128 bytes each), passed as its last
    /// argument; 0 when it takes none.
    pub global_scratch: u32,
    /// Wall time of each stage this compilation ran, in pipeline order
    /// (`StageTimes`): where a cold compile's time goes.
    pub timings: StageTimes,
    /// The module's IR after software pipelining, when
    /// `Options::keep_pipelined` asked for it (else empty).
    pub pipelined: String,
}

/// Wall-clock seconds per compiler stage, in the order the stages ran:
/// `verify`, `tile_passes` (TMA claims and fold/canonicalize/cse/dce),
/// `llvm_setup` (target machine, context, module), `layouts` (axis info,
/// layout assignment, software pipelining), `lower` (shared-memory plan and
/// allocation, lowering to LLVM IR, membar), `link` (libraries, module
/// finish), `llvm_optimize` (verifier and the target's pass pipeline), then
/// for NVPTX `emit` (PTX) and `llir_text` (from a copy made before it), for
/// AMD `llir_text`, `emit` (AMDGCN text, when asked) and `binary` (the
/// HSACO). Callers add their own stages (`ptxas`).
#[derive(Clone, Debug, Default)]
pub struct StageTimes {
    pub stages: Vec<(&'static str, f64)>,
    last: Option<std::time::Instant>,
}

impl StageTimes {
    /// Starts the clock of the first stage.
    pub fn start() -> StageTimes {
        StageTimes { stages: Vec::new(), last: Some(std::time::Instant::now()) }
    }

    /// Ends stage `name` (begun when the previous one ended) and starts the next.
    pub fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        let since = self.last.unwrap_or(now);
        self.stages.push((name, now.duration_since(since).as_secs_f64()));
        self.last = Some(now);
    }

    /// The seconds stage `name` took (summed if it ran more than once).
    pub fn get(&self, name: &str) -> Option<f64> {
        let mut found = self.stages.iter().filter(|(n, _)| *n == name).map(|(_, t)| t).peekable();
        found.peek()?;
        Some(found.sum())
    }

    /// The sum of every stage.
    pub fn total(&self) -> f64 {
        self.stages.iter().map(|(_, t)| t).sum()
    }
}

/// A tensor-map kernel parameter: the host descriptor it describes (the
/// index of the descriptor's base among the kernel's arguments as the
/// frontend made them) and the box and swizzle to encode it with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapParam {
    pub base_arg: usize,
    pub box_dims: Vec<u32>,
    pub swizzle_bytes: u32,
}

/// The block accesses `target` does whole, claimed before the tile passes
/// expand the rest: host tensor descriptors through TMA on sm_90a
/// (`tritium_transforms::claim_tma`). Returns how many it claimed.
/// Only accesses whose last-dimension offset axis info proves 16-byte
/// aligned are claimed (the hardware faults on others); none when
/// `options.tma` is off.
pub fn claim_accesses(module: &mut tritium_ir::Module, target: &dyn Target, options: &Options) -> usize {
    if !options.tma || target.mma() != tritium_transforms::MmaSupport::V3 {
        return 0;
    }
    tritium_transforms::claim_tma(module, &offset_divisibility, options.tma_device)
}

/// Axis info's divisibility of scalars of kernel `func` (its arguments'
/// facts from their attributes: a kernel has no caller).
pub fn offset_divisibility(module: &tritium_ir::Module, func: &tritium_ir::Function, values: &[tritium_ir::Value]) -> Vec<u64> {
    let args = tritium_analysis::arg_facts_from_attrs(module, func);
    let info = tritium_analysis::FuncAxisInfo::compute(module, func, &args);
    values.iter().map(|&v| info.get(v).divisibility).collect()
}

/// Where `compile_ptx_until` stops: after generating LLVM IR, after LLVM's
/// optimization pipeline, or after PTX emission (the whole of `compile_ptx`).
/// Exists so benchmarks can time each stage (as differences of prefixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopAfter {
    Lower,
    Optimize,
    Emit,
}

/// Compiles every kernel of `module` (verified first) for `options.arch`:
/// one PTX module, or one AMDGCN module and its HSACO.
pub fn compile_ptx(module: &tritium_ir::Module, options: &Options) -> Result<CompiledPtx> {
    compile_ptx_until(module, options, StopAfter::Emit)
}

/// `compile_ptx`, calling `after_emit` with the result as soon as the PTX
/// exists and making the LLVM IR text only after it returns: a caller that
/// starts ptxas (another process) there has it assemble while the text is
/// printed (`timings` then has `emit` before `llir_text`). The text comes
/// from a copy of the optimised module taken before emission rewrites it.
/// Targets that build their binary in-process (AMD) run as `compile_ptx`
/// and call `after_emit` at the end.
pub fn compile_ptx_overlapped<T>(
    module: &tritium_ir::Module,
    options: &Options,
    after_emit: impl FnOnce(&CompiledPtx) -> T,
) -> Result<(CompiledPtx, T)> {
    let mut hook = Some(after_emit);
    let mut result = None;
    let out = compile_inner(module, options, StopAfter::Emit, &mut |out: &CompiledPtx| {
        if let Some(f) = hook.take() {
            result = Some(f(out));
        }
    })?;
    let result = match result {
        Some(r) => r,
        None => hook.take().map(|f| f(&out)).ok_or_else(|| CodegenError::Internal("after_emit was not called".into()))?,
    };
    Ok((out, result))
}

/// `compile_ptx`, stopped after `stop`; `llir` and `ptx` are empty for the
/// stages not reached.
pub fn compile_ptx_until(module: &tritium_ir::Module, options: &Options, stop: StopAfter) -> Result<CompiledPtx> {
    compile_inner(module, options, stop, &mut |_| {})
}

/// The pipeline; NVPTX calls `after_emit` between emission and the LLVM IR text.
fn compile_inner(
    module: &tritium_ir::Module,
    options: &Options,
    stop: StopAfter,
    after_emit: &mut dyn FnMut(&CompiledPtx),
) -> Result<CompiledPtx> {
    let mut times = StageTimes::start();
    tritium_ir::verify(module)?;
    times.lap("verify");
    // the passes rewrite the IR; the caller's module stays as it was
    let mut owned = module.clone();
    let target = options.arch.target_with(options.libdevice.clone());
    let target: &dyn Target = target.as_ref();
    claim_accesses(&mut owned, target, options);
    run_passes(&mut owned, &options.passes, None)?;
    times.lap("tile_passes");
    let machine = target.target_machine()?;
    let context = Context::create();
    let llvm = llvm::Llvm::new(&context, "tritium");
    llvm.module.set_triple(&TargetTriple::create(target.triple()));
    llvm.module.set_data_layout(&machine.get_target_data().get_data_layout());
    target.prepare_module(&llvm)?;
    times.lap("llvm_setup");
    let mut out = lower_module(&llvm, target, &mut owned, options, &mut times)?;
    target.link_libraries(&llvm)?;
    target.finish_module(&llvm, out.shared)?;
    times.lap("link");
    if stop == StopAfter::Lower {
        out.timings = times;
        return Ok(out);
    }
    let pipeline = options.llvm_pipeline.as_deref().unwrap_or(target.optimization_pipeline());
    emit::optimize(&llvm, pipeline, &machine)?;
    times.lap("llvm_optimize");
    if stop == StopAfter::Optimize {
        out.timings = times;
        return Ok(out);
    }
    if !target.builds_binary() {
        // emission rewrites the module (CodeGenPrepare, strength reduction):
        // the text is printed from a copy taken before it. The module that
        // went through O3 is the one emitted: NVPTX caches kernel
        // annotations per module address until its emission ends, and a
        // module dropped with its entries still cached would lend them to
        // the next module allocated there (vprintf declared `.entry`)
        let copy = llvm.module.clone();
        out.ptx = emit::emit_text(&llvm, target, &machine)?;
        times.lap("emit");
        after_emit(&out);
        out.llir = copy.print_to_string().to_string();
        drop(copy);
        times.lap("llir_text");
        out.timings = times;
        return Ok(out);
    }
    out.llir = llvm.module.print_to_string().to_string();
    times.lap("llir_text");
    if options.assembly {
        out.ptx = emit::emit_text(&llvm, target, &machine)?;
        times.lap("emit");
    }
    if let Some(binary) = target.binary(&llvm, &machine)? {
        out.binary = binary;
        times.lap("binary");
    }
    out.timings = times;
    Ok(out)
}

/// Lowers every function reachable from a kernel, callees first (a caller
/// needs its callees' signatures, layouts and shared-memory use), then
/// allocates shared memory module-wide: each call site's virtual offset is
/// written into the constant its call reads. Returns everything but the
/// LLVM IR and PTX text: the largest kernel's shared bytes, the kernels'
/// symbols in module order, the allocation and membar dumps.
fn lower_module(
    llvm: &llvm::Llvm<'_>,
    target: &dyn Target,
    module: &mut tritium_ir::Module,
    options: &Options,
    times: &mut StageTimes,
) -> Result<CompiledPtx> {
    use std::collections::{HashMap, HashSet};
    use tritium_analysis::{BufferKind, CallGraph, MembarOptions, ModuleAllocation, ModuleMembar};

    let mut graph = CallGraph::build(module).map_err(CodegenError::CallGraph)?;
    // reachable from kernels; other functions are inlined helpers the frontend kept
    let mut reachable: HashSet<tritium_ir::Func> = module.funcs.iter().filter(|(_, f)| f.kernel).map(|(id, _)| id).collect();
    if reachable.is_empty() {
        return Err(CodegenError::CallGraph("the module has no kernel function".into()));
    }
    for &f in graph.post_order.iter().rev() {
        if reachable.contains(&f) {
            for &(_, callee) in &graph.calls[&f] {
                if module.funcs[callee].kernel {
                    let (caller, name) = (&module.funcs[f].name, &module.funcs[callee].name);
                    return Err(CodegenError::CallGraph(format!("@{caller} calls kernel @{name}: kernels cannot be called")));
                }
                reachable.insert(callee);
            }
        }
    }
    // unreached functions are helpers the frontend inlined: no analysis sees them
    // (their call sites must not weaken a callee's facts or ask for allocation)
    graph.retain(|f| reachable.contains(&f));
    let (mut layouts, narrow_loads) = assign_all_layouts(target, module, &graph, options.num_warps);
    if target.has_async_copy() {
        // whatever else lives across a loop (a staged operand, scratch) keeps room
        let budget = target.max_shared_bytes().saturating_sub(32 * 1024);
        let mut pipelined = 0;
        for &f in &graph.post_order {
            if let Some(map) = layouts.get_mut(&f) {
                let synchronous = narrow_loads.iter().filter(|(g, _)| *g == f).map(|&(_, op)| op).collect();
                let opts = tritium_transforms::PipelineOptions {
                    num_stages: options.num_stages,
                    smem_budget: budget,
                    synchronous,
                    commit_per_load: options.commit_per_load,
                };
                pipelined += tritium_transforms::pipeline_loops(module, f, map, &opts);
            }
        }
        if pipelined > 0 {
            tritium_ir::verify(module).map_err(|e| CodegenError::Internal(format!("software pipelining left IR that does not verify: {e}")))?;
        }
    }
    let pipelined_ir = if options.keep_pipelined { tritium_ir::print(module) } else { String::new() };
    if std::env::var("TRITIUM_DEBUG_CONVERTS").is_ok() {
        print_converts(module, &graph, &layouts);
    }
    times.lap("layouts");
    let module: &tritium_ir::Module = module;
    // shared memory is planned and allocated on the IR, before lowering:
    // every scratch area, staged operand and call site gets its real offset
    let mut plans = HashMap::new();
    for &f in &graph.post_order {
        let empty = tritium_transforms::LayoutMap::default();
        plans.insert(f, smem_plan::plan_function(module, &module.funcs[f], layouts.get(&f).unwrap_or(&empty), target.pads_conversion_rows())?);
    }
    let positions: HashMap<tritium_ir::Func, HashMap<tritium_ir::Op, u32>> =
        graph.post_order.iter().map(|&f| (f, tritium_analysis::allocation::op_positions(&module.funcs[f]))).collect();
    let mut requests = HashMap::new();
    for (&f, plan) in &plans {
        requests.insert(f, plan.requests(&module.funcs[f]).map_err(CodegenError::Allocation)?);
    }
    let alloc = ModuleAllocation::compute(
        module,
        &graph,
        |f| requests.remove(&f).unwrap_or_default(),
        |f, op| positions[&f].get(&op).copied().unwrap_or(0),
    )
    .map_err(CodegenError::Allocation)?;
    // callers first, so a callee's argument facts join all its call sites;
    // after layout assignment, so conversions and recomputed values have facts
    let mut axis = tritium_analysis::ModuleAxisInfo::compute(module, &graph);
    let mut infos = HashMap::new();
    for &f in &graph.post_order {
        let facts = axis.funcs.remove(&f).ok_or_else(|| CodegenError::Internal(format!("no axis info for @{}", module.funcs[f].name)))?;
        let map = layouts.remove(&f).unwrap_or_default();
        let smem = lower::FuncShared { alloc: alloc.funcs[&f].clone(), plan: plans.remove(&f).unwrap_or_default() };
        let info = lower::lower_function(llvm, target, module, f, options, map, smem, &infos, facts)?;
        infos.insert(f, info);
    }
    // barriers: membar over every function's trace, callees first, with each
    // call at its site's offset; candidates it does not keep are erased
    let mut traces = HashMap::new();
    for (&f, info) in &infos {
        let a = &alloc.funcs[&f];
        traces.insert(f, info.barriers.trace(|op| a.offset_of(op, BufferKind::Virtual).unwrap_or(0))?);
    }
    let membar = ModuleMembar::compute(&graph, |f| traces[&f].as_slice(), MembarOptions { cross_call_barriers: options.cross_call_barriers })?;
    for (f, info) in infos.iter_mut() {
        info.barriers.erase_unneeded(&membar.funcs[f].needed);
    }
    let mut membar_dump = String::new();
    for f in &graph.post_order {
        let name = |g: tritium_ir::Func| module.funcs[g].name.clone();
        membar_dump.push_str(&format!("@{}\n", module.funcs[*f].name));
        membar_dump.push_str(&tritium_analysis::membar::render(&traces[f], &membar.funcs[f], name));
    }
    let mut shared = 0;
    let mut kernels = Vec::new();
    for (id, f) in module.funcs.iter().filter(|(_, f)| f.kernel) {
        shared = shared.max(alloc.funcs[&id].total);
        kernels.push(symbol::symbol_name(&f.name));
    }
    let allocation = alloc.dump(module, &graph);
    let tensormaps = module
        .funcs
        .iter()
        .find(|(_, f)| f.kernel)
        .map(|(_, f)| tritium_transforms::tma::tensormap_args(f))
        .unwrap_or_default()
        .into_iter()
        .map(|(_, base_arg, box_dims, swizzle_bytes)| TensorMapParam { base_arg, box_dims, swizzle_bytes })
        .collect();
    let global_scratch = module
        .funcs
        .iter()
        .find(|(_, f)| f.kernel)
        .and_then(|(_, f)| f.arg_attrs.iter().find_map(|a| a.get(tritium_ir::ops::GLOBAL_SCRATCH_ATTR)?.as_int()))
        .unwrap_or(0) as u32;
    times.lap("lower");
    Ok(CompiledPtx {
        llir: String::new(),
        ptx: String::new(),
        binary: Vec::new(),
        shared,
        kernels,
        allocation,
        membar: membar_dump,
        tensormaps,
        global_scratch,
        timings: StageTimes::default(),
        pipelined: pipelined_ir,
    })
}

/// `TRITIUM_DEBUG_CONVERTS=1`: every layout conversion left after layout
/// assignment and pipelining, with its source line, on stderr (each one
/// costs registers or a trip through shared memory; this is where to look
/// when a kernel is slower than it should be).
fn print_converts(
    module: &tritium_ir::Module,
    graph: &tritium_analysis::CallGraph,
    layouts: &std::collections::HashMap<tritium_ir::Func, tritium_transforms::LayoutMap>,
) {
    for &f in &graph.post_order {
        let (func, Some(map)) = (&module.funcs[f], layouts.get(&f)) else { continue };
        for (_, op) in func.ops_preorder() {
            let d = &func.ops[op];
            if d.opcode == tritium_ir::Opcode::ConvertLayout {
                let line = module.locs.get(d.loc).map_or(0, |l| l.line);
                eprintln!("@{} line {line}: convert {:?}\n    to {:?}", func.name, map.of(d.operands[0]), map.of(d.results[0]));
            }
        }
    }
}

/// Layout assignment for every function reachable from a kernel, callees
/// first (a call's operands are converted to its callee's argument layouts).
/// Canonical layouts are sized for the widest global access each function
/// makes, which needs axis info of the module as it is before assignment;
/// the same facts name the loads too narrow for `cp.async` (returned, for
/// the pipeliner).
fn assign_all_layouts(
    target: &dyn Target,
    module: &mut tritium_ir::Module,
    graph: &tritium_analysis::CallGraph,
    num_warps: u32,
) -> (std::collections::HashMap<tritium_ir::Func, tritium_transforms::LayoutMap>, std::collections::HashSet<(tritium_ir::Func, tritium_ir::Op)>) {
    let axis = tritium_analysis::ModuleAxisInfo::compute(module, graph);
    let mut maps = std::collections::HashMap::new();
    let mut narrow = std::collections::HashSet::new();
    let max = target.max_access_bytes();
    for &f in &graph.post_order {
        let (access, fast_dims, scalar_accesses) = match axis.funcs.get(&f) {
            Some(facts) => {
                let func = &module.funcs[f];
                let best = lower::access_bytes(module, func, facts, max, true);
                let is_load = |op: &tritium_ir::Op| func.ops[*op].opcode == tritium_ir::Opcode::Load;
                narrow.extend(best.iter().filter(|&(op, &b)| is_load(op) && b < 4).map(|(&op, _)| (f, op)));
                // one element at a time along the best dim: per element along every dim
                let elem_bytes = |op: &tritium_ir::Op| {
                    let ptr = func.ops[*op].operands.first().map(|&p| func.value_type(p));
                    ptr.and_then(|t| module.types.pointee_bytes(t))
                };
                let scalar = best.iter().filter(|&(op, &b)| elem_bytes(op).is_some_and(|eb| b <= eb)).map(|(&op, _)| op).collect();
                let widest = lower::access_bytes(module, func, facts, max, false).into_values().max().unwrap_or(max);
                (widest, lower::transposed_accesses(module, func, facts), scalar)
            }
            None => (max, Default::default(), Default::default()),
        };
        let opts = tritium_transforms::LayoutOptions {
            num_warps,
            warp_size: target.warp_size(),
            max_access_bytes: access,
            mma: target.mma(),
            fast_dims,
            scalar_accesses,
        };
        let map = tritium_transforms::assign_layouts(module, f, &opts, &maps);
        maps.insert(f, map);
    }
    (maps, narrow)
}

/// Parses tile IR text, then `compile_ptx` (for tests and tools).
pub fn compile_ptx_text(text: &str, options: &Options) -> std::result::Result<CompiledPtx, String> {
    let module = tritium_ir::parse(text).map_err(|e| e.to_string())?;
    compile_ptx(&module, options).map_err(|e| e.to_string())
}
