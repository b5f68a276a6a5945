//! Shared lowering: walks a kernel's tile IR and emits per-thread LLVM IR
//! through a `Target`. A tensor value becomes the registers its thread owns
//! under the tensor's `BlockedLayout` (a Vec of LLVM scalars); a scalar is a
//! Vec of one. One file per op family; this one owns the walk and dispatch.
mod arith;
mod asm;
mod atomic;
mod barriers;
mod call;
mod cast;
mod convert;
mod debug;
mod control;
mod fp8;
mod math;
mod memory;
mod reduce;
mod remat;
mod scan;
mod shuffle;
mod shape;
mod tensor;

use std::collections::HashMap;

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::AddressSpace;
use tritium_ir::{Func, Function, Module, Op, OpData, ScalarKind, Type, TypeData, Value};

use crate::error::{CodegenError, Result};
use crate::layout::BlockedLayout;
use crate::llvm::Llvm;
use crate::target::Target;

pub(crate) type Regs<'c> = Vec<BasicValueEnum<'c>>;

pub(crate) struct Lowering<'a, 'c> {
    pub llvm: &'a Llvm<'c>,
    pub target: &'a dyn Target,
    pub module: &'a Module,
    pub func_id: Func,
    pub func: &'a Function,
    pub layouts: tritium_transforms::LayoutMap,
    /// Values held in a layout other than their rank's canonical one (see convert.rs).
    pub native: HashMap<Value, (BlockedLayout, Regs<'c>)>,
    pub smem: convert::SmemState<'c>,
    /// AxisInfo of this function (tritium-analysis), read by memory.rs for vector widths.
    pub facts: tritium_analysis::FuncAxisInfo,
    pub values: HashMap<Value, Regs<'c>>,
    /// Flat thread id within the block (blocks are 1-D: warps × 32 threads).
    pub tid: IntValue<'c>,
    /// Byte offset of this function's shared memory in the kernel's dynamic
    /// shared array (0 in a kernel; an argument of a device function).
    pub smem_base: IntValue<'c>,
    pub calls: call::CallState<'a, 'c>,
}

pub use call::lower_function;

/// The LLVM type of a scalar or pointer IR type; `Err` names why not.
pub(crate) fn llvm_scalar_type<'c>(llvm: &Llvm<'c>, module: &Module, ty: Type) -> std::result::Result<BasicTypeEnum<'c>, String> {
    let cx = llvm.context;
    Ok(match module.types.data(ty) {
        TypeData::Ptr { addrspace, .. } => cx.ptr_type(AddressSpace::from(*addrspace as u16)).into(),
        TypeData::Scalar(k) => match k {
            ScalarKind::I1 => cx.bool_type().into(),
            // fp8 lives as its bits too (see fp8.rs)
            ScalarKind::I8 | ScalarKind::U8 | ScalarKind::F8E4M3 | ScalarKind::F8E5M2 => cx.i8_type().into(),
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
        self.values.get(&v).ok_or_else(|| CodegenError::Llvm(format!("value %{} used before it was lowered", v.0)))
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

    /// The layout of tensor type `ty` (None for scalars).
    pub fn layout(&self, ty: Type) -> Option<BlockedLayout> {
        let dims = self.module.types.dims(ty);
        if dims.is_empty() {
            return None;
        }
        BlockedLayout::new(self.layouts.canonical(dims.len())?, dims)
    }

    /// Registers a value of type `ty` occupies per thread.
    pub fn reg_count(&self, ty: Type) -> usize {
        self.layout(ty).map(|l| l.elems_per_thread() as usize).unwrap_or(1)
    }

    pub fn set(&mut self, op: Op, regs: Regs<'c>) {
        let res = self.op(op).results[0];
        debug_assert_eq!(regs.len(), self.current_layout(res).map_or(1, |l| l.elems_per_thread() as usize));
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

    fn lower_op(&mut self, op: Op) -> Result<()> {
        if self.lower_layout_op(op)? {
            return Ok(());
        }
        // scan keeps its operand's layout (native or not), so it skips prepare_operands
        if self.op(op).opcode.name() == "scan" {
            return self.lower_scan(op);
        }
        // a call converts its operands to the callee's layouts itself
        if self.op(op).opcode.name() == "call" {
            return self.lower_call(op);
        }
        self.prepare_operands(op)?;
        let data = self.op(op);
        if !data.regions.is_empty() && !matches!(data.opcode.name(), "for" | "if" | "while") {
            return Err(self.unsupported(op, "ops with regions (control flow, reductions, scans) are not lowered yet"));
        }
        match data.opcode.name() {
            "const" | "splat" | "program_id" | "num_programs" | "addptr" | "multiple_of" | "max_contiguous"
            | "max_constancy" => self.lower_tensor_op(op),
            "add" | "sub" | "mul" | "div" | "div_rn" | "rem" | "and" | "or" | "xor" | "shl" | "shr" | "min" | "max"
            | "umulhi" | "cmp" | "neg" | "not" | "abs" | "floor" | "ceil" | "sqrt_rn" | "fma" | "select" | "clamp" => {
                self.lower_arith(op)
            }
            "exp" | "exp2" | "log" | "log2" | "sqrt" | "rsqrt" | "sin" | "cos" | "erf" => self.lower_math(op),
            "cast" | "bitcast" | "ptr_to_int" | "int_to_ptr" => self.lower_cast(op),
            "for" => self.lower_for(op),
            "if" => self.lower_if(op),
            "while" => self.lower_while(op),
            "load" => self.lower_load(op),
            "store" => self.lower_store(op),
            "barrier" => self.smem_fixed_barrier(),
            "atomic_rmw" | "atomic_cas" => self.lower_atomic(op),
            "print" => self.lower_print(op),
            "assert" => self.lower_assert(op),
            "inline_asm" => self.lower_inline_asm(op),
            "return" => self.lower_return(op),
            name => Err(self.unsupported(op, format!("no lowering for `{name}` yet"))),
        }
    }
}
