//! Functions and calls: a kernel becomes a PTX `.entry`; a noinline function
//! an internal LLVM function marked `noinline` (a PTX `.func`, reached with
//! `call.uni`). A tensor crosses a call as the registers the calling thread
//! owns under the callee's canonical layout for its rank (layout assignment
//! converts the caller's value first when it is held otherwise); results come
//! back the same way in one struct return. Every function takes its shared-memory base as a last
//! i32 argument: its scratch lives at `base + offset`, and a call passes
//! `base + virtual offset of the call site` (see `tritium_analysis::allocation`).
use std::collections::HashMap;

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue};
use tritium_analysis::BufferKind;
use tritium_ir::{Attr, Func, Module, Op};

use super::{llvm_scalar_type, Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::TensorLayout;
use crate::llvm::Llvm;
use crate::target::{Axis, Target};

/// How one function was lowered: what its callers need (signature, layouts)
/// and what module allocation and membar need.
pub struct FunctionInfo<'c> {
    pub function: FunctionValue<'c>,
    pub result_layouts: Vec<Option<TensorLayout>>,
    /// Shared-memory accesses and candidate barriers, decided by membar once
    /// the module's allocation is known.
    pub(crate) barriers: super::barriers::BarrierTrace<'c>,
}

/// What the function walk carries besides `Lowering`'s per-op state.
pub(crate) struct CallState<'a, 'c> {
    pub callees: &'a HashMap<Func, FunctionInfo<'c>>,
}

/// A function's shared memory, planned and allocated before lowering.
#[derive(Clone, Debug, Default)]
pub struct FuncShared {
    pub alloc: tritium_analysis::Allocation,
    pub plan: crate::smem_plan::FuncSmem,
}

/// Lowers function `func_id` of `module` into `llvm.module`, launched with
/// `options.num_warps` warps, with the layouts layout assignment gave its values.
/// Callees must already be in `callees` (callees first).
#[allow(clippy::too_many_arguments)]
pub fn lower_function<'c>(
    llvm: &Llvm<'c>,
    target: &dyn Target,
    module: &Module,
    func_id: Func,
    options: &crate::Options,
    layouts: tritium_transforms::LayoutMap,
    shared: FuncShared,
    callees: &HashMap<Func, FunctionInfo<'c>>,
    facts: tritium_analysis::FuncAxisInfo,
) -> Result<FunctionInfo<'c>> {
    let func = &module.funcs[func_id];
    let unsupported = |reason: String| CodegenError::Unsupported {
        op: "func".to_string(),
        loc: Default::default(),
        target: target.name(),
        reason,
    };
    if func.kernel && !func.results.is_empty() {
        return Err(unsupported(format!("kernel @{} returns values", func.name)));
    }
    let layout_of = |ty| {
        let dims = module.types.dims(ty);
        if dims.is_empty() {
            return Ok(None);
        }
        let l = layouts.canonical(dims.len()).and_then(|l| TensorLayout::new(&l, dims));
        l.map(Some).ok_or_else(|| unsupported(format!("@{}: no layout for a tensor of rank {}", func.name, dims.len())))
    };
    let arg_layouts: Vec<Option<TensorLayout>> = func.args().iter().map(|&a| layout_of(func.value_type(a))).collect::<Result<_>>()?;
    let result_layouts: Vec<Option<TensorLayout>> = func.results.iter().map(|&t| layout_of(t)).collect::<Result<_>>()?;

    // parameters: each argument's registers, then (device functions) the shared-memory base
    let mut params: Vec<BasicMetadataTypeEnum> = Vec::new();
    let maps = super::tma::tensormap_params(target, func).map_err(&unsupported)?;
    for (i, (&arg, layout)) in func.args().iter().zip(&arg_layouts).enumerate() {
        let ty = func.value_type(arg);
        if func.kernel && layout.is_some() {
            return Err(unsupported(format!("kernel @{} has a tensor argument", func.name)));
        }
        if maps.contains(&i) {
            params.push(llvm.context.ptr_type(inkwell::AddressSpace::default()).into());
            continue;
        }
        params.extend(reg_types(llvm, module, ty, layout).map_err(&unsupported)?.into_iter().map(BasicMetadataTypeEnum::from));
    }
    let name = crate::symbol::symbol_name(&func.name);
    let f = if func.kernel {
        let f = llvm.module.add_function(&name, llvm.context.void_type().fn_type(&params, false), None);
        target.mark_kernel(llvm, f, options.num_warps * target.warp_size())?;
        super::tma::mark_tensormap_params(llvm, f, &maps)?;
        f
    } else {
        params.push(llvm.context.i32_type().into());
        let fn_type = match result_struct(llvm, module, &func.results, &result_layouts).map_err(&unsupported)? {
            Some(st) => st.fn_type(&params, false),
            None => llvm.context.void_type().fn_type(&params, false),
        };
        let f = llvm.module.add_function(&name, fn_type, Some(Linkage::Internal));
        let kind = Attribute::get_named_enum_kind_id("noinline");
        f.add_attribute(AttributeLoc::Function, llvm.context.create_enum_attribute(kind, 0));
        f
    };
    // `entry` only branches to `body`: the barrier a device function may need
    // before its first shared access is known once the body is lowered
    let entry = llvm.context.append_basic_block(f, "entry");
    let body = llvm.context.append_basic_block(f, "body");
    llvm.builder.position_at_end(body);
    let tid = target.thread_id(llvm, Axis::X)?;
    let smem_base = if func.kernel {
        llvm.context.i32_type().const_zero()
    } else {
        f.get_last_param().ok_or_else(|| CodegenError::Internal("missing shared-memory base".into()))?.into_int_value()
    };
    let mut lw = Lowering {
        llvm,
        target,
        module,
        func_id,
        func,
        layouts,
        smem: Default::default(),
        facts,
        values: HashMap::new(),
        tid,
        warpgroup: None,
        proxy_fence: options.proxy_fence_after_copies,
        ldmatrix: options.ldmatrix,
        smem_base,
        calls: CallState { callees },
        shared,
    };
    let mut p = 0u32;
    for (i, (&arg, layout)) in func.args().iter().zip(&arg_layouts).enumerate() {
        let n = reg_count(layout);
        let mut regs = Regs::with_capacity(n as usize);
        for _ in 0..n {
            regs.push(f.get_nth_param(p).ok_or_else(|| CodegenError::Internal("missing parameter".into()))?);
            p += 1;
        }
        // an integer specialized as equal to 1 is the constant 1 (the launch
        // still passes it), so LLVM folds `x * stride` to `x`
        let one = func.arg_attrs.get(i).and_then(|a| a.get("equal_to_1")).and_then(Attr::as_bool) == Some(true);
        if let (true, [BasicValueEnum::IntValue(v)]) = (one, regs.as_slice()) {
            regs = vec![v.get_type().const_int(1, false).into()];
        }
        if let (true, [BasicValueEnum::PointerValue(p)]) = (maps.contains(&i), regs.as_slice()) {
            // the map's generic address (LLVM takes it with cvta.param)
            regs = vec![llvm.builder.build_ptr_to_int(*p, llvm.context.i64_type(), "")?.into()];
        }
        lw.values.insert(arg, regs);
    }
    for &op in &func.region_block(func.body).ops {
        lw.lower_op(op)?;
    }
    let barriers = lw.take_barrier_trace();
    llvm.builder.position_at_end(entry);
    llvm.builder.build_unconditional_branch(body)?;
    Ok(FunctionInfo { function: f, result_layouts, barriers })
}

/// The struct a device function returns its results' registers in (None when it returns nothing).
fn result_struct<'c>(
    llvm: &Llvm<'c>,
    module: &Module,
    results: &[tritium_ir::Type],
    layouts: &[Option<TensorLayout>],
) -> std::result::Result<Option<inkwell::types::StructType<'c>>, String> {
    if results.is_empty() {
        return Ok(None);
    }
    let mut fields: Vec<BasicTypeEnum<'c>> = Vec::new();
    for (&ty, l) in results.iter().zip(layouts) {
        fields.extend(reg_types(llvm, module, ty, l)?);
    }
    Ok(Some(llvm.context.struct_type(&fields, false)))
}

/// Registers a value crosses a call in: one per element the thread owns
/// under its `layout` (a tensor), or one (a scalar).
fn reg_count(layout: &Option<TensorLayout>) -> u32 {
    layout.as_ref().map_or(1, TensorLayout::elems_per_thread)
}

/// The LLVM types of those registers, for a value of IR type `ty`.
fn reg_types<'c>(llvm: &Llvm<'c>, module: &Module, ty: tritium_ir::Type, layout: &Option<TensorLayout>) -> std::result::Result<Vec<BasicTypeEnum<'c>>, String> {
    let elem = llvm_scalar_type(llvm, module, module.types.elem(ty))?;
    Ok(vec![elem; reg_count(layout) as usize])
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// `call @f(args)`: arguments converted to the callee's layouts, then one
    /// call with the caller's shared-memory base plus the site's virtual offset.
    pub(super) fn lower_call(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let name = data.attrs.get("callee").and_then(Attr::as_str).unwrap_or("");
        let callee_id = self.module.func_by_name(name).ok_or_else(|| self.unsupported(op, format!("unknown function @{name}")))?;
        let callees = self.calls.callees;
        let info = callees.get(&callee_id).ok_or_else(|| {
            let why = if self.module.funcs[callee_id].kernel { "a kernel cannot be called" } else { "callee not lowered before its caller" };
            self.unsupported(op, format!("@{name}: {why}"))
        })?;
        let mut args: Vec<BasicMetadataValueEnum<'c>> = Vec::new();
        for &v in &data.operands {
            args.extend(self.regs(v)?.iter().copied().map(BasicMetadataValueEnum::from));
        }
        // the callee's shared memory starts at this site's virtual offset
        let off = self.shared.alloc.offset_of(op, BufferKind::Virtual).unwrap_or(0);
        let base: IntValue<'c> = self.llvm.builder.build_int_add(self.smem_base, self.i32_const(off as u64), "")?;
        args.push(base.into());
        // membar decides, from the callee's summary, whether the candidate
        // barrier before the call stays (see lower/barriers.rs)
        self.smem_call(callee_id, op)?;
        let call = self.llvm.builder.build_call(info.function, &args, "")?;
        let results = self.op(op).results.clone();
        if results.is_empty() {
            return Ok(());
        }
        let ret = call.try_as_basic_value().basic().ok_or_else(|| CodegenError::Internal("call returns no value".into()))?;
        let ret = ret.into_struct_value();
        let mut field = 0u32;
        for (&r, layout) in results.iter().zip(&info.result_layouts) {
            let n = reg_count(layout);
            let mut regs = Regs::with_capacity(n as usize);
            for _ in 0..n {
                regs.push(self.llvm.builder.build_extract_value(ret, field, "")?);
                field += 1;
            }
            self.values.insert(r, regs);
        }
        Ok(())
    }

    /// `return`: nothing from a kernel; a device function's results' registers as one struct.
    pub(super) fn lower_return(&mut self, op: Op) -> Result<()> {
        let operands = self.op(op).operands.clone();
        if self.func.kernel {
            if !operands.is_empty() {
                return Err(self.unsupported(op, "kernels return no values"));
            }
            self.llvm.builder.build_return(None)?;
            return Ok(());
        }
        if operands.is_empty() {
            self.llvm.builder.build_return(None)?;
            return Ok(());
        }
        let mut fields: Vec<BasicValueEnum<'c>> = Vec::new();
        for &v in &operands {
            fields.extend(self.regs(v)?.iter().copied());
        }
        self.llvm.builder.build_aggregate_return(&fields)?;
        Ok(())
    }
}
