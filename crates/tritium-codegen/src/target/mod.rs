//! What differs between GPU targets, behind one trait: the LLVM triple and data
//! layout, ids, barriers, shuffles, predicated global memory access, kernel
//! marking and object emission. Shared lowering (`crate::lower`) calls only this.
mod libdevice;
pub mod nvptx;

use inkwell::targets::TargetMachine;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};

use crate::error::Result;
use crate::llvm::Llvm;

pub use nvptx::{NvArch, Nvptx};

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

    /// The target's own lowering of library function `symbol` (an
    /// `extern_elementwise` call) on `args`, or None when it has none.
    fn lower_library_call<'c>(
        &self,
        llvm: &Llvm<'c>,
        symbol: &str,
        args: &[BasicValueEnum<'c>],
        ret: BasicTypeEnum<'c>,
    ) -> Result<Option<BasicValueEnum<'c>>>;
    /// Calls `symbol` from a library `link_libraries` will link, or says why
    /// it cannot (no such library, or none was given).
    fn call_library<'c>(
        &self,
        llvm: &Llvm<'c>,
        symbol: &str,
        args: &[BasicValueEnum<'c>],
        ret: BasicTypeEnum<'c>,
    ) -> std::result::Result<Result<BasicValueEnum<'c>>, String>;
    /// Links the libraries the module's `call_library` calls need, before optimisation.
    fn link_libraries(&self, llvm: &Llvm<'_>) -> Result<()>;

    /// The machine that optimises and emits code for this target.
    fn target_machine(&self) -> Result<TargetMachine>;
    /// Marks `f` as a kernel entry launched with at most `max_threads` threads per block.
    fn mark_kernel<'c>(&self, llvm: &Llvm<'c>, f: FunctionValue<'c>, max_threads: u32) -> Result<()>;
    /// Emits the module as the target's loadable text or object (PTX for NVPTX).
    fn emit(&self, llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<Vec<u8>>;

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
    /// Float division as Triton's `/` (fast, not IEEE-rounded): f32 only.
    fn fast_div_f32<'c>(&self, llvm: &Llvm<'c>, a: BasicValueEnum<'c>, b: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>>;
    /// f32 → f16 (a `half`) or bf16 (its bits as i16, see `lower`), rounded
    /// to nearest even or toward zero (`rtz`).
    fn narrow_f32<'c>(&self, llvm: &Llvm<'c>, value: BasicValueEnum<'c>, to_bf16: bool, rtz: bool) -> Result<BasicValueEnum<'c>>;
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
