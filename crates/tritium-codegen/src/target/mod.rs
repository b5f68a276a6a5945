//! What differs between GPU targets, behind one trait: the LLVM triple and data
//! layout, ids, barriers, shuffles, predicated global memory access, kernel
//! marking and object emission. Shared lowering (`crate::lower`) calls only this.
//! A target is data, `(backend, arch, warp size)` as Triton's `GPUTarget`;
//! `lookup` finds one by name (`cuda:90`, `hip:gfx942`).
pub mod amdgpu;
mod amdgpu_arch;
mod amdgpu_buffer;
mod amdgpu_ir;
mod libdevice;
pub mod nvptx;
mod ptx_text;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use inkwell::targets::TargetMachine;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};

use crate::error::Result;
use crate::llvm::Llvm;

pub use amdgpu::{AmdArch, Amdgpu};
pub use nvptx::{NvArch, Nvptx};

/// The module's dynamic shared-memory array (every function's shared memory
/// is a byte range of it).
pub const SHARED_ARRAY: &str = "tritium_smem";

/// A compilation target by name: `cuda:90`, `sm_90a`, `90` (NVIDIA) or
/// `hip:gfx942`, `gfx1100` (AMD).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Nvidia(NvArch),
    Amd(AmdArch),
}

impl Arch {
    pub fn parse(s: &str) -> Result<Arch> {
        if let Some(a) = AmdArch::parse(s) {
            // LLVM 19 (what this build links) has no gfx950 processor: it falls
            // back to a generic one that cannot select 16-bit global loads or
            // MFMA and aborts the process, so the target is refused by name
            if a == AmdArch::Gfx950 {
                return Err(crate::error::CodegenError::Option(
                    "hip:gfx950 needs LLVM 20 or newer; this build links LLVM 19, which has no gfx950 processor (gfx942 code objects do not load on gfx950)".into(),
                ));
            }
            return Ok(Arch::Amd(a));
        }
        let t = s.trim().to_ascii_lowercase();
        if t.starts_with("hip:") || t.starts_with("gfx") {
            let names: Vec<&str> = AmdArch::ALL.iter().map(|a| a.name()).collect();
            return Err(crate::error::CodegenError::Option(format!("unknown AMD architecture {s:?}; expected one of {}", names.join(", "))));
        }
        NvArch::parse(s).map(Arch::Nvidia)
    }
    /// Triton's `GPUTarget` spelling: `cuda:90a`, `hip:gfx942`.
    pub fn name(self) -> String {
        match self {
            Arch::Nvidia(a) => format!("cuda:{}", &a.name()[3..]),
            Arch::Amd(a) => format!("hip:{}", a.name()),
        }
    }
    /// The backend's `Target` for this architecture.
    pub fn target(self) -> Box<dyn Target> {
        self.target_with(None)
    }
    /// `target`, with NVIDIA's libdevice.10.bc to link where calls need it
    /// (AMD links no device library).
    pub fn target_with(self, libdevice: Option<std::path::PathBuf>) -> Box<dyn Target> {
        match self {
            Arch::Nvidia(a) => Box::new(Nvptx::new(a).with_libdevice(libdevice)),
            Arch::Amd(a) => Box::new(Amdgpu::new(a)),
        }
    }
}

thread_local! {
    /// This thread's target machines by triple, CPU and features: creating
    /// one builds the subtarget's tables (AMDGPU's are large), a cost paid
    /// again on every compile before they were kept. Per thread, because LLVM
    /// does not let two threads generate code with one machine at a time.
    static MACHINES: RefCell<HashMap<(String, String, String), Rc<TargetMachine>>> = RefCell::new(HashMap::new());
}

/// This thread's target machine for `triple`, `cpu` and `features`, made by
/// `make` the first time. Code generation reads only the module and the
/// machine's fixed options, so one machine serves every compilation for
/// its target (tests/amdgpu.rs: two architectures in turn, each its own code).
pub(crate) fn cached_machine(triple: &str, cpu: &str, features: &str, make: impl FnOnce() -> Result<TargetMachine>) -> Result<Rc<TargetMachine>> {
    let key = (triple.to_string(), cpu.to_string(), features.to_string());
    if let Some(m) = MACHINES.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(m);
    }
    let machine = Rc::new(make()?);
    MACHINES.with(|c| c.borrow_mut().insert(key, machine.clone()));
    Ok(machine)
}

/// The `Target` named `name` (see `Arch::parse`).
pub fn lookup(name: &str) -> Result<Box<dyn Target>> {
    Ok(Arch::parse(name)?.target())
}

/// Grid axis of a thread/block id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn from_index(i: i64) -> Option<Axis> {
        match i {
            0 => Some(Axis::X),
            1 => Some(Axis::Y),
            2 => Some(Axis::Z),
            _ => None,
        }
    }
    pub fn letter(self) -> char {
        match self {
            Axis::X => 'x',
            Axis::Y => 'y',
            Axis::Z => 'z',
        }
    }
}

/// One global-memory access of `words` machine words of `word_bits` each
/// (8, 16, 32 or 64): the unit a target can move in one instruction. Words
/// are floats (f32/f64) when the elements are, so no bit casts are needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub word_bits: u32,
    pub words: u32,
    pub float: bool,
}

/// Cache hints of a load or store, spelled as in `docs/ir.md` (`.cg`, `evict_first`, ...).
#[derive(Clone, Debug, Default)]
pub struct MemHints {
    pub cache: String,
    pub eviction: String,
    pub volatile: bool,
}

/// Read-modify-write operation of one global atomic (`atomic_rmw`'s `kind`, or CAS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
    And,
    Or,
    Xor,
    Xchg,
    Cas,
}

/// Memory ordering of an atomic, as `docs/ir.md` spells `sem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicSem {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

/// Threads an atomic is coherent with, as `docs/ir.md` spells `scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicScope {
    Cta,
    Gpu,
    Sys,
}

/// One global atomic on an element of `bits` bits; `float` and `signed`
/// pick the arithmetic (add of floats, signed or unsigned max/min).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicAccess {
    pub op: AtomicOp,
    pub sem: AtomicSem,
    pub scope: AtomicScope,
    pub bits: u32,
    pub float: bool,
    pub signed: bool,
    /// bf16 (carried as i16 bits), so float adds need the bf16 instruction.
    pub bf16: bool,
}

/// Approximate f32 functions with one target instruction each (Triton's fast math).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApproxFn {
    Exp2,
    /// `exp2` flushing subnormal inputs and results to zero: what `tl.math.exp2`
    /// on f32 compiles to in Triton (`ex2.approx.ftz.f32`), one instruction
    /// shorter than the subnormal-preserving form `tl.exp` keeps.
    Exp2Ftz,
    Sqrt,
    Rsqrt,
}

pub trait Target {
    /// Human name for messages ("NVPTX sm_90a").
    fn name(&self) -> String;
    fn triple(&self) -> &'static str;
    fn data_layout(&self) -> &'static str;
    fn cpu(&self) -> &str;
    fn features(&self) -> String;
    fn warp_size(&self) -> u32;
    fn global_addrspace(&self) -> u16;
    fn shared_addrspace(&self) -> u16;
    /// Widest single global access in bytes (vectorisation limit).
    fn max_access_bytes(&self) -> u32;
    /// Which tensor-core (MMA) instructions dots may use.
    fn mma(&self) -> tritium_transforms::MmaSupport;
    /// Whether the ISA version this target emits has a hardware f32/f16 → fp8
    /// convert that rounds to nearest even and saturates to max finite, as
    /// the fp8 lowering's integer algorithm does (else that algorithm runs).
    fn has_fp8_convert(&self) -> bool;
    /// Whether the target converts the fnuz fp8 formats (e4m3fnuz, e5m2fnuz)
    /// to and from f32 in hardware (gfx942's `v_cvt_*_fp8/bf8`).
    fn has_fnuz_fp8_convert(&self) -> bool {
        false
    }
    /// Shared memory one block may use, in bytes (the opt-in maximum).
    fn max_shared_bytes(&self) -> u32 {
        48 * 1024
    }
    /// Whether global-to-shared copies can run asynchronously (`cp.async`),
    /// which the software pipeliner needs.
    fn has_async_copy(&self) -> bool {
        false
    }
    /// Whether a layout conversion's scratch rows are padded apart
    /// (`smem_plan::convert_row_pad`): NVIDIA's tensor-core accumulators
    /// store 8 rows at once onto 32 banks, 8-way conflicts unpadded. AMD's
    /// LDS keeps them unpadded: the MFMA/WMMA epilogue stores are at most
    /// 4-way (4 rows of 16 columns), once per kernel, while the padding costs
    /// occupancy (a 128x128 fp16 matmul's 32 KiB grows to 34 KiB: one
    /// workgroup per 64 KiB CU instead of two) and code (padded rows are
    /// not a power of two: llc on that matmul 145 -> 220 ms on gfx942).
    fn pads_conversion_rows(&self) -> bool {
        false
    }

    /// The target's own lowering of library function `symbol` (an
    /// `extern_elementwise` call) on `args`, or None when it has none (the
    /// default: a target without a device library lowers nothing itself).
    fn lower_library_call<'c>(
        &self,
        _llvm: &Llvm<'c>,
        _symbol: &str,
        _args: &[BasicValueEnum<'c>],
        _ret: BasicTypeEnum<'c>,
    ) -> Result<Option<BasicValueEnum<'c>>> {
        Ok(None)
    }
    /// Calls `symbol` from a library `link_libraries` will link, or says why
    /// it cannot (no such library, or none was given); by default the target
    /// links none, so the call is a compile error naming the function.
    fn call_library<'c>(
        &self,
        _llvm: &Llvm<'c>,
        _symbol: &str,
        _args: &[BasicValueEnum<'c>],
        _ret: BasicTypeEnum<'c>,
    ) -> std::result::Result<Result<BasicValueEnum<'c>>, String> {
        Err(format!("the {} target links no device library", self.name()))
    }
    /// Links the libraries the module's `call_library` calls need, before optimisation.
    fn link_libraries(&self, _llvm: &Llvm<'_>) -> Result<()> {
        Ok(())
    }

    /// The machine that optimises and emits code for this target: this
    /// thread's one (`cached_machine`), made on first use.
    fn target_machine(&self) -> Result<Rc<TargetMachine>>;
    /// The LLVM pass pipeline run on the lowered module (new pass manager syntax).
    fn optimization_pipeline(&self) -> &'static str {
        "default<O3>"
    }
    /// Marks `f` as a kernel entry launched with at most `max_threads` threads per block.
    fn mark_kernel<'c>(&self, llvm: &Llvm<'c>, f: FunctionValue<'c>, max_threads: u32) -> Result<()>;
    /// Emits the module as the target's assembly text (PTX, AMDGCN).
    fn emit(&self, llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<Vec<u8>>;
    /// The loadable binary built in-process, if the target makes one (AMDGPU's HSACO;
    /// NVPTX leaves PTX to ptxas or the driver).
    fn binary(&self, _llvm: &Llvm<'_>, _machine: &TargetMachine) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }
    /// Whether `binary` makes one (then the assembly text is optional: `Options::assembly`).
    fn builds_binary(&self) -> bool {
        false
    }
    /// Module-level settings before anything is lowered (flags, metadata).
    fn prepare_module(&self, _llvm: &Llvm<'_>) -> Result<()> {
        Ok(())
    }
    /// After lowering, once the kernels' shared-memory size is known.
    fn finish_module(&self, _llvm: &Llvm<'_>, _shared_bytes: u32) -> Result<()> {
        Ok(())
    }

    fn thread_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>>;
    fn block_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>>;
    fn num_blocks<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>>;
    /// Block-wide barrier (all threads of the CTA).
    fn barrier(&self, llvm: &Llvm<'_>) -> Result<()>;
    /// Warp shuffle of an i32: lane `l` receives `value` from lane `l ^ lane_mask`.
    fn shuffle_xor<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, lane_mask: u32) -> Result<IntValue<'c>>;
    /// Warp shuffle of an i32: every lane receives `value` from lane `src_lane`.
    fn shuffle_idx<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, src_lane: IntValue<'c>) -> Result<IntValue<'c>>;

    /// Loads `access` from global `addr` when `pred` (None = always); lanes
    /// whose predicate is false get `other` (one word each; None = zeros).
    fn load_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: Access,
        pred: Option<IntValue<'c>>,
        other: Option<&[BasicValueEnum<'c>]>,
        hints: &MemHints,
    ) -> Result<Vec<BasicValueEnum<'c>>>;
    /// Stores `words` (one `access`) to global `addr` when `pred`.
    fn store_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: Access,
        words: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
        hints: &MemHints,
    ) -> Result<()>;
    /// Whether the target has buffer instructions (`load_buffer`, `store_buffer`).
    fn has_buffer_ops(&self) -> bool {
        false
    }
    /// Loads `access` at byte `offset` (i32) of the buffer starting at `base`
    /// when `pred`; masked-off lanes get `other` (None = zeros). `Ok(None)`:
    /// this access cannot be a buffer access (the caller loads globally).
    #[allow(clippy::too_many_arguments)]
    fn load_buffer<'c>(
        &self,
        _llvm: &Llvm<'c>,
        _base: PointerValue<'c>,
        _offset: IntValue<'c>,
        _access: Access,
        _pred: Option<IntValue<'c>>,
        _other: Option<&[BasicValueEnum<'c>]>,
        _hints: &MemHints,
    ) -> Result<Option<Vec<BasicValueEnum<'c>>>> {
        Ok(None)
    }
    /// Stores `words` at byte `offset` of the buffer at `base` when `pred`;
    /// `Ok(false)`: not as a buffer access (the caller stores globally).
    #[allow(clippy::too_many_arguments)]
    fn store_buffer<'c>(
        &self,
        _llvm: &Llvm<'c>,
        _base: PointerValue<'c>,
        _offset: IntValue<'c>,
        _access: Access,
        _words: &[BasicValueEnum<'c>],
        _pred: Option<IntValue<'c>>,
        _hints: &MemHints,
    ) -> Result<bool> {
        Ok(false)
    }
    /// Float division as Triton's `/` (fast, not IEEE-rounded): f32 only.
    fn fast_div_f32<'c>(&self, llvm: &Llvm<'c>, a: BasicValueEnum<'c>, b: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>>;
    /// f32 → f16 (a `half`) or bf16 (its bits as i16, see `lower`), rounded
    /// to nearest even or toward zero (`rtz`).
    fn narrow_f32<'c>(&self, llvm: &Llvm<'c>, value: BasicValueEnum<'c>, to_bf16: bool, rtz: bool) -> Result<BasicValueEnum<'c>>;
    /// Two f32 values rounded to nearest even into f16 (`half`s) or bf16
    /// (i16 bits) with one instruction, when the target has a paired
    /// conversion (NVPTX `cvt.rn.{f16x2,bf16x2}.f32`); None: one `narrow_f32` each.
    fn narrow_f32_pair<'c>(&self, _llvm: &Llvm<'c>, _lo: BasicValueEnum<'c>, _hi: BasicValueEnum<'c>, _to_bf16: bool) -> Result<Option<[BasicValueEnum<'c>; 2]>> {
        Ok(None)
    }
    /// `value` (an integer of kind `from`, or f64) rounded once to bf16 bits
    /// (i16), when the target has that conversion; None: the caller goes
    /// through f32, rounding twice as Triton does there.
    fn round_to_bf16<'c>(&self, _llvm: &Llvm<'c>, _value: BasicValueEnum<'c>, _from: tritium_ir::ScalarKind) -> Result<Option<BasicValueEnum<'c>>> {
        Ok(None)
    }
    /// Atomic `access` on global `addr` when `pred` (None = always): `operands`
    /// is `[value]`, or `[compare, value]` for CAS, in their lowering types
    /// (bf16 as i16 bits). Returns the old value (zero where `pred` is false).
    fn atomic_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: AtomicAccess,
        operands: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
    ) -> Result<BasicValueEnum<'c>>;
    /// Device-side printf of `format` (C syntax) with `args` (already
    /// promoted: i32, i64 or f64), from the calling thread.
    fn printf<'c>(&self, llvm: &Llvm<'c>, format: &str, args: &[BasicValueEnum<'c>]) -> Result<()>;
    /// Reports a failed device assertion (message, file, line, function) and
    /// stops the kernel; the current block ends here (it is terminated).
    fn assert_fail(&self, llvm: &Llvm<'_>, msg: &str, file: &str, line: u32, function: &str) -> Result<()>;
    /// The target's approximate f32 `func` of `x` (NVPTX: `ex2.approx`, `sqrt.approx`, `rsqrt.approx`).
    fn approx_f32<'c>(&self, llvm: &Llvm<'c>, func: ApproxFn, x: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>>;
}
