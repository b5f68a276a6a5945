//! The LLVM objects one compilation writes into (context, module, builder),
//! with helpers for intrinsics and inline assembly shared by every target.
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue};
use inkwell::intrinsics::Intrinsic;
use inkwell::InlineAsmDialect;

use crate::error::{CodegenError, Result};

pub struct Llvm<'c> {
    pub context: &'c Context,
    pub module: Module<'c>,
    pub builder: Builder<'c>,
}

impl<'c> Llvm<'c> {
    pub fn new(context: &'c Context, name: &str) -> Self {
        Llvm { context, module: context.create_module(name), builder: context.create_builder() }
    }

    /// The declaration of intrinsic `name`, overloaded on `types`.
    pub fn intrinsic(&self, name: &str, types: &[BasicTypeEnum<'c>]) -> Result<FunctionValue<'c>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(&self.module, types))
            .ok_or_else(|| CodegenError::Internal(format!("LLVM 19 has no intrinsic {name} for {types:?}")))
    }

    /// Calls intrinsic `name` (overloaded on `types`) and returns its result.
    pub fn call_intrinsic(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'c>],
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>> {
        let f = self.intrinsic(name, types)?;
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        self.builder
            .build_call(f, &args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| CodegenError::Internal(format!("intrinsic {name} returns no value")))
    }

    /// Calls intrinsic `name` for its side effect.
    pub fn call_intrinsic_void(&self, name: &str, args: &[BasicValueEnum<'c>]) -> Result<()> {
        let f = self.intrinsic(name, &[])?;
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        self.builder.build_call(f, &args, "")?;
        Ok(())
    }

    /// Emits inline assembly. `ret` is `None` for no outputs, one type for one
    /// output, or a struct of the outputs (then the result is that struct).
    pub fn inline_asm(
        &self,
        asm: &str,
        constraints: &str,
        ret: Option<BasicTypeEnum<'c>>,
        args: &[BasicValueEnum<'c>],
        side_effects: bool,
    ) -> Result<Option<BasicValueEnum<'c>>> {
        let params: Vec<BasicMetadataTypeEnum> = args.iter().map(|a| a.get_type().into()).collect();
        let fn_type = match ret {
            Some(t) => t.fn_type(&params, false),
            None => self.context.void_type().fn_type(&params, false),
        };
        let asm_ptr = self.context.create_inline_asm(
            fn_type,
            asm.to_string(),
            constraints.to_string(),
            side_effects,
            false,
            Some(InlineAsmDialect::ATT),
            false,
        );
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        let call = self.builder.build_indirect_call(fn_type, asm_ptr, &args, "")?;
        Ok(call.try_as_basic_value().basic())
    }
}

impl<'c> Llvm<'c> {
    /// The function `name`, defined (once per module) by linking in `ir`, a
    /// module in LLVM's text form that defines it. For what inkwell's builder
    /// cannot spell (fences and atomics in a target's synchronisation scope).
    /// `ir` defines it with external linkage (the linker drops unreferenced
    /// internal definitions); it is made internal here, and helpers are
    /// `alwaysinline`, so after O3 nothing of the call remains.
    pub fn ir_helper(&self, name: &str, ir: &str) -> Result<FunctionValue<'c>> {
        if let Some(f) = self.module.get_function(name) {
            return Ok(f);
        }
        let buffer = inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), name);
        let helper = self
            .context
            .create_module_from_ir(buffer)
            .map_err(|e| CodegenError::Internal(format!("helper {name} does not parse: {e}")))?;
        helper.set_triple(&self.module.get_triple());
        helper.set_data_layout(&self.module.get_data_layout());
        self.module
            .link_in_module(helper)
            .map_err(|e| CodegenError::Internal(format!("helper {name} does not link: {e}")))?;
        let f = self.module.get_function(name).ok_or_else(|| CodegenError::Internal(format!("helper IR does not define @{name}")))?;
        f.set_linkage(inkwell::module::Linkage::Internal);
        Ok(f)
    }
}
