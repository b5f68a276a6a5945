//! Options of one compilation (`Options`): the target, warps and stages,
//! and the switches read from the environment when they are made
//! (`TRITIUM_TMA`, `TRITIUM_TMA_DEVICE`, `TRITIUM_DEBUG_*`).
use tritium_transforms::PassOptions;

use crate::error::{CodegenError, Result};
use crate::target::Arch;

/// Whether sm_90a compiles host tensor descriptors' accesses to TMA when
/// `TRITIUM_TMA` does not say.
pub const TMA_BY_DEFAULT: bool = true;

/// Whether sm_90a also compiles device-side descriptors
/// (`tl.make_tensor_descriptor`) to TMA, through tensor maps the kernel
/// builds in its global scratch, when `TRITIUM_TMA_DEVICE` does not say.
/// On since tests/gpu/test_tma_gpu.py -k device passed on an H100 (61
/// tests: edges, padding, the masked fallback, persistent matmul).
pub const TMA_DEVICE_BY_DEFAULT: bool = true;

/// Options of one compilation.
#[derive(Clone, Debug)]
pub struct Options {
    pub arch: Arch,
    pub num_warps: u32,
    /// The barriers membar keeps only because of a callee's summary (before
    /// a call, and before the caller's next shared access after it). Off only
    /// to show they matter: `TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER=1`.
    pub cross_call_barriers: bool,
    /// On sm_90a, `fence.proxy.async` after each `cp.async` wait: the copies
    /// write through the generic proxy and wgmma reads through the async
    /// one, which PTX's memory model fences (Triton 3.6 emits none for
    /// cp.async operands). Off only to measure what it costs a loop:
    /// `TRITIUM_DEBUG_NO_PROXY_FENCE=1`.
    pub proxy_fence_after_copies: bool,
    /// Pipelined loops commit one `cp.async` group per staged load and
    /// stage, as Triton 3.6 does, instead of one per stage
    /// (`PipelineOptions::commit_per_load`). Off unless
    /// `TRITIUM_DEBUG_COMMIT_PER_LOAD=1`: an experiment on the issue-16
    /// matmul until the GPU shows which is faster.
    pub commit_per_load: bool,
    /// mma.sync reads its operand fragments with `ldmatrix` where the staged
    /// layout allows it; off, element by element with `ld.shared` (to tell
    /// whether a wrong result comes from ldmatrix):
    /// `TRITIUM_DEBUG_NO_LDMATRIX=1`.
    pub ldmatrix: bool,
    /// On sm_90a, host tensor descriptors' loads and stores through TMA
    /// (`claim_accesses`); off, they are the masked loads and stores of
    /// every other target. `TRITIUM_TMA=1` / `TRITIUM_TMA=0` set it either
    /// way; unset, it is `TMA_BY_DEFAULT`.
    pub tma: bool,
    /// With `tma`, device-side descriptors' loads and stores too, through
    /// tensor maps built in the kernel (`tensormap_create`) in the global
    /// scratch Triton's `set_allocator` provides. `TRITIUM_TMA_DEVICE=1` /
    /// `=0`; unset, `TMA_DEVICE_BY_DEFAULT`.
    pub tma_device: bool,
    /// Tile-level passes run before layout assignment.
    pub passes: PassOptions,
    /// NVIDIA's libdevice.10.bc, linked when a kernel calls a libdevice
    /// function the target does not lower itself (None: such calls fail).
    pub libdevice: Option<std::path::PathBuf>,
    /// Shared-memory stages of loops that load dot operands (below 2: none),
    /// for loops whose `tl.range` does not set its own.
    pub num_stages: u32,
    /// Targets that build a binary (AMD: the HSACO) also write their assembly
    /// text (AMDGCN), which costs a second run of LLVM's code generator; off,
    /// `ptx` stays empty and `emit::assembly_from_llir` makes it from `llir`
    /// when someone asks. NVPTX's assembly (PTX) is its product: always made.
    pub assembly: bool,
    /// LLVM's pass pipeline in the new pass manager's syntax; None runs the
    /// target's (`Target::optimization_pipeline`). Set only to compare
    /// pipelines on the same kernels (tests/amdgpu.rs against `default<O1>`).
    pub llvm_pipeline: Option<String>,
    /// Keep the module's IR as software pipelining left it
    /// (`CompiledPtx::pipelined`; the filetests' `pipelined` stage).
    pub keep_pipelined: bool,
}

impl Options {
    /// `num_warps` as callers outside Rust give it (any integer), checked.
    pub fn with_warps(arch: &str, num_warps: i64) -> Result<Options> {
        match u32::try_from(num_warps) {
            Ok(n) => Options::new(arch, n),
            Err(_) => Err(num_warps_error(num_warps)),
        }
    }

    pub fn new(arch: &str, num_warps: u32) -> Result<Options> {
        if !(1..=32).contains(&num_warps) || !num_warps.is_power_of_two() {
            return Err(num_warps_error(num_warps as i64));
        }
        let set = |name: &str| std::env::var(name).is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
        let off = set("TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER");
        let no_fence = set("TRITIUM_DEBUG_NO_PROXY_FENCE");
        let no_ldmatrix = set("TRITIUM_DEBUG_NO_LDMATRIX");
        let commit_per_load = set("TRITIUM_DEBUG_COMMIT_PER_LOAD");
        let switch = |name: &str, default: bool| match std::env::var(name).map(|v| v.to_ascii_lowercase()) {
            Ok(v) if matches!(v.as_str(), "1" | "true" | "yes" | "on") => true,
            Ok(v) if matches!(v.as_str(), "0" | "false" | "no" | "off") => false,
            _ => default,
        };
        let tma = switch("TRITIUM_TMA", TMA_BY_DEFAULT);
        let tma_device = switch("TRITIUM_TMA_DEVICE", TMA_DEVICE_BY_DEFAULT);
        let arch = Arch::parse(arch)?;
        let wave = arch.target().warp_size();
        if num_warps * wave > 1024 {
            return Err(CodegenError::Option(format!(
                "num_warps={num_warps} makes {} threads per block on {}; at most 1024 fit ({} warps of {wave})",
                num_warps * wave,
                arch.name(),
                1024 / wave
            )));
        }
        Ok(Options {
            arch,
            num_warps,
            cross_call_barriers: !off,
            proxy_fence_after_copies: !no_fence,
            commit_per_load,
            ldmatrix: !no_ldmatrix,
            tma,
            tma_device,
            passes: PassOptions::default(),
            libdevice: None,
            num_stages: 3,
            assembly: true,
            llvm_pipeline: None,
            keep_pipelined: false,
        })
    }
}

fn num_warps_error(num_warps: i64) -> CodegenError {
    CodegenError::Option(format!("num_warps must be a power of two from 1 to 32, got {num_warps}"))
}
