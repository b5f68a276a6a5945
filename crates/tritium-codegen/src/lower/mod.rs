//! Shared lowering: walks a kernel's tile IR and emits per-thread LLVM IR
//! through a `Target`. A tensor value becomes the registers its thread owns
//! under the tensor's `BlockedLayout` (a Vec of LLVM scalars); a scalar is a
//! Vec of one. One file per op family; this one owns the walk and dispatch.
mod arith;
mod asm;
mod async_copy;
mod atomic;
mod barriers;
mod buffer;
mod call;
mod cast;
mod convert;
mod debug;
mod control;
mod dot;
mod dot_amd;
mod extern_fn;
mod fp8;
mod fp8_amd;
mod ldmatrix;
mod lookup;
mod math;
mod mbarrier;
pub(crate) mod memory;
mod reduce;
mod scan;
mod shared;
mod shuffle;
mod shape;
mod tensor;
mod tma;
mod wgmma;

use std::collections::HashMap;

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::AddressSpace;
use tritium_ir::{Func, Function, Module, Op, OpData, Opcode, ScalarKind, Type, TypeData, Value};

use crate::error::{CodegenError, Result};
use crate::layout::TensorLayout;
use crate::llvm::Llvm;
use crate::target::Target;

pub(crate) type Regs<'c> = Vec<BasicValueEnum<'c>>;

pub(crate) struct Lowering<'a, 'c> {
    pub llvm: &'a Llvm<'c>,
    pub target: &'a dyn Target,
    pub module: &'a Module,
    pub func_id: Func,
    pub func: &'a Function,
    /// Every tensor value's layout (tritium-transforms' layout assignment):
    /// operands are always in the layout their op needs.
    pub layouts: tritium_transforms::LayoutMap,
    pub smem: convert::SmemState<'c>,
    /// AxisInfo of this function (tritium-analysis), read by memory.rs for vector widths.
    pub facts: tritium_analysis::FuncAxisInfo,
    pub values: HashMap<Value, Regs<'c>>,
    /// Flat thread id within the block (blocks are 1-D: warps × 32 threads).
    pub tid: IntValue<'c>,
    /// `tid / 128` broadcast from lane 0, made at the function's entry on
    /// first use (wgmma's warpgroup index; see `uniform_warpgroup`).
    pub warpgroup: Option<IntValue<'c>>,
    /// `Options::proxy_fence_after_copies`.
    pub proxy_fence: bool,
    /// `Options::ldmatrix`.
    pub ldmatrix: bool,
    /// Byte offset of this function's shared memory in the kernel's dynamic
    /// shared array (0 in a kernel; an argument of a device function).
    pub smem_base: IntValue<'c>,
    pub calls: call::CallState<'a, 'c>,
    /// This function's planned and allocated shared memory (offsets of
    /// scratch, staged values and call sites).
    pub shared: call::FuncShared,
}

pub use call::{lower_function, FuncShared};
pub(crate) use tma::MBARRIER_BYTES;
pub(crate) use memory::{access_bytes, transposed_accesses};

/// The LLVM type of a scalar or pointer IR type; `Err` names why not.
pub(crate) fn llvm_scalar_type<'c>(llvm: &Llvm<'c>, module: &Module, ty: Type) -> std::result::Result<BasicTypeEnum<'c>, String> {
    let cx = llvm.context;
    Ok(match module.types.data(ty) {
        TypeData::Ptr { addrspace, .. } => cx.ptr_type(AddressSpace::from(*addrspace as u16)).into(),
        TypeData::Scalar(k) => match k {
            ScalarKind::I1 => cx.bool_type().into(),
            // fp8 lives as its bits too (see fp8.rs)
            ScalarKind::I8
            | ScalarKind::U8
            | ScalarKind::F8E4M3
            | ScalarKind::F8E5M2
            | ScalarKind::F8E4B15
            | ScalarKind::F8E4B8
            | ScalarKind::F8E5B16 => cx.i8_type().into(),
            // bf16 lives as its bits: inkwell 0.7 cannot wrap LLVM `bfloat` values,
            // so arithmetic widens to f32 (exact) and rounds back once (see arith.rs)
            ScalarKind::I16 | ScalarKind::U16 | ScalarKind::BF16 => cx.i16_type().into(),
            ScalarKind::I32 | ScalarKind::U32 => cx.i32_type().into(),
            ScalarKind::I64 | ScalarKind::U64 => cx.i64_type().into(),
            ScalarKind::F16 => cx.f16_type().into(),
            ScalarKind::F32 => cx.f32_type().into(),
            ScalarKind::F64 => cx.f64_type().into(),
        },
        TypeData::Tensor { .. } => return Err("nested tensor type".into()),
    })
}

impl<'a, 'c> Lowering<'a, 'c> {
    pub fn op(&self, op: Op) -> &'a OpData {
        &self.func.ops[op]
    }

    pub fn invalid(&self, op: Op, reason: impl Into<String>) -> CodegenError {
        CodegenError::Invalid { op: self.op(op).opcode.name().to_string(), loc: self.module.loc_of(self.func_id, op), reason: reason.into() }
    }

    pub fn unsupported(&self, op: Op, reason: impl Into<String>) -> CodegenError {
        CodegenError::Unsupported {
            op: self.op(op).opcode.name().to_string(),
            loc: self.module.loc_of(self.func_id, op),
            target: self.target.name(),
            reason: reason.into(),
        }
    }

    pub fn regs(&self, v: Value) -> Result<&Regs<'c>> {
        self.values.get(&v).ok_or_else(|| CodegenError::Internal(format!("value %{} used before it was lowered", v.0)))
    }

    pub fn ty(&self, v: Value) -> Type {
        self.func.value_type(v)
    }

    /// Element scalar kind of `v` (None for pointers).
    pub fn kind(&self, v: Value) -> Option<ScalarKind> {
        self.module.types.scalar_kind(self.ty(v))
    }

    /// The element's LLVM type of `v`'s type.
    pub fn elem_type(&self, op: Op, ty: Type) -> Result<BasicTypeEnum<'c>> {
        let elem = self.module.types.elem(ty);
        llvm_scalar_type(self.llvm, self.module, elem).map_err(|r| self.unsupported(op, r))
    }

    /// The layout of tensor value `v` applied to its shape (None for scalars
    /// and values in shared memory).
    pub fn tl(&self, v: Value) -> Option<TensorLayout> {
        let dims = self.module.types.dims(self.ty(v));
        if dims.is_empty() {
            return None;
        }
        TensorLayout::new(self.layouts.of(v)?, dims)
    }

    /// `tl`, for an operand or result that must be a tensor in registers.
    pub fn tl_of(&self, op: Op, v: Value) -> Result<TensorLayout> {
        self.tl(v).ok_or_else(|| CodegenError::Internal(format!("`{}`: %{} has no register layout", self.op(op).opcode, v.0)))
    }

    /// Registers value `v` occupies per thread.
    pub fn reg_count(&self, v: Value) -> usize {
        self.tl(v).map_or(1, |l| l.elems_per_thread() as usize)
    }

    pub fn set(&mut self, op: Op, regs: Regs<'c>) {
        let res = self.op(op).results[0];
        debug_assert_eq!(regs.len(), self.reg_count(res), "`{}` made the wrong number of registers", self.op(op).opcode);
        self.values.insert(res, regs);
    }

    /// bf16 bits (i16) to f32: exact.
    pub fn bf16_to_f32(&self, v: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        let i32t = self.llvm.context.i32_type();
        let wide = b.build_int_z_extend(v.into_int_value(), i32t, "")?;
        let bits = b.build_left_shift(wide, i32t.const_int(16, false), "")?;
        Ok(b.build_bit_cast(bits, self.llvm.context.f32_type(), "")?)
    }

    /// f32 to bf16 bits (i16), rounded to nearest even.
    pub fn f32_to_bf16(&self, v: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        self.target.narrow_f32(self.llvm, v, true, false)
    }

    pub fn i32_const(&self, v: u64) -> IntValue<'c> {
        self.llvm.context.i32_type().const_int(v, false)
    }

    /// The one dispatch from op to lowering: exhaustive, so an op added to
    /// the table without a lowering (or an explicit `Unsupported`) does not
    /// compile. Operands arrive in the layouts layout assignment chose.
    fn lower_op(&mut self, op: Op) -> Result<()> {
        match self.op(op).opcode {
            Opcode::Arange => self.lower_arange(op),
            Opcode::Broadcast | Opcode::ExpandDims | Opcode::Permute => self.lower_relabel(op),
            Opcode::Reshape | Opcode::Join | Opcode::Split | Opcode::Cat => self.lower_gather_op(op),
            Opcode::ConvertLayout => self.lower_convert_layout(op),
            Opcode::Reduce => self.lower_reduce(op),
            Opcode::Scan => self.lower_scan(op),
            Opcode::Call => self.lower_call(op),
            Opcode::Const | Opcode::Splat | Opcode::ProgramId | Opcode::NumPrograms | Opcode::Addptr
            | Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy => self.lower_tensor_op(op),
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::DivRn | Opcode::Rem | Opcode::And
            | Opcode::Or | Opcode::Xor | Opcode::Shl | Opcode::Shr | Opcode::Min | Opcode::Max | Opcode::Umulhi
            | Opcode::Cmp | Opcode::Neg | Opcode::Not | Opcode::Abs | Opcode::Floor | Opcode::Ceil | Opcode::SqrtRn
            | Opcode::Fma | Opcode::Select | Opcode::Clamp => self.lower_arith(op),
            Opcode::Exp | Opcode::Exp2 | Opcode::Log | Opcode::Log2 | Opcode::Sqrt | Opcode::Rsqrt | Opcode::Sin
            | Opcode::Cos | Opcode::Erf => self.lower_math(op),
            Opcode::Cast | Opcode::Bitcast | Opcode::PtrToInt | Opcode::IntToPtr => self.lower_cast(op),
            Opcode::For => self.lower_for(op),
            Opcode::If => self.lower_if(op),
            Opcode::While => self.lower_while(op),
            Opcode::Load => self.lower_load(op),
            Opcode::Store => self.lower_store(op),
            Opcode::AtomicRmw | Opcode::AtomicCas => self.lower_atomic(op),
            Opcode::Print => self.lower_print(op),
            Opcode::Assert => self.lower_assert(op),
            Opcode::InlineAsm => self.lower_inline_asm(op),
            Opcode::Return => self.lower_return(op),
            Opcode::Barrier => self.smem_fixed_barrier(),
            Opcode::Dot => self.lower_dot(op),
            Opcode::Assume => self.lower_assume(op),
            Opcode::Gather => self.lower_gather(op),
            Opcode::Histogram => self.lower_histogram(op),
            Opcode::ExternElementwise => self.lower_extern(op),
            // lowered with the op that owns their region (control.rs, reduce.rs)
            Opcode::Yield | Opcode::Condition => {
                Err(CodegenError::Internal(format!("`{}` lowered outside its region's op", self.op(op).opcode)))
            }
            Opcode::LocalAlloc | Opcode::LocalView => self.lower_local_buffer(op),
            Opcode::AsyncCopy => self.lower_async_copy(op),
            Opcode::AsyncCommit => self.lower_async_commit(op),
            Opcode::AsyncWait => self.lower_async_wait(op),
            Opcode::DotWait => self.lower_dot_wait(op),
            Opcode::TmaLoad => self.lower_tma_load(op),
            Opcode::TmaStore => self.lower_tma_store(op),
            Opcode::TmaCopy => self.lower_tma_copy(op),
            Opcode::TensormapCreate => self.lower_tensormap_create(op),
            Opcode::MbarrierInit => self.lower_mbarrier_init(op),
            Opcode::MbarrierWait => self.lower_mbarrier_wait(op),
            Opcode::MbarrierInval => self.lower_mbarrier_inval(op),
            // compile_ptx runs tritium_transforms::expand_block_memory before lowering
            Opcode::BlockLoad | Opcode::BlockStore | Opcode::BlockAtomic => {
                Err(CodegenError::Internal(format!("`{}` reached lowering unexpanded", self.op(op).opcode)))
            }
        }
    }
}
