//! The NVPTX target (sm_80, sm_89, sm_90, sm_90a): special registers through
//! NVVM intrinsics, global memory through predicated inline PTX (`@p ld.global`),
//! so masked-off lanes never touch memory and vector widths are exactly ours.
use std::sync::Once;

use inkwell::module::Linkage;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple,
};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::OptimizationLevel;

use super::{Access, ApproxFn, Axis, MemHints, Target};
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;

/// NVIDIA architectures this backend emits PTX for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvArch {
    Sm80,
    Sm89,
    Sm90,
    Sm90a,
}

impl NvArch {
    pub const ALL: [NvArch; 4] = [NvArch::Sm80, NvArch::Sm89, NvArch::Sm90, NvArch::Sm90a];

    /// Parses `sm_90a`, `90a`, `cuda:90a` and the like.
    pub fn parse(s: &str) -> Result<NvArch> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix("cuda:").unwrap_or(&t);
        let t = t.strip_prefix("sm_").unwrap_or(t);
        NvArch::ALL.into_iter().find(|a| &a.name()[3..] == t).ok_or_else(|| {
            CodegenError::Option(format!("unknown NVIDIA architecture {s:?}; expected one of sm_80, sm_89, sm_90, sm_90a"))
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            NvArch::Sm80 => "sm_80",
            NvArch::Sm89 => "sm_89",
            NvArch::Sm90 => "sm_90",
            NvArch::Sm90a => "sm_90a",
        }
    }
    /// PTX ISA version: the lowest that has every instruction we emit for the
    /// arch (7.4 brings `L1::evict_*`; sm_89 needs 7.8; sm_90a needs 8.0), so
    /// older drivers can still JIT the PTX.
    pub fn ptx_version(self) -> u32 {
        match self {
            NvArch::Sm80 => 74,
            NvArch::Sm89 => 78,
            NvArch::Sm90 | NvArch::Sm90a => 80,
        }
    }
}

pub struct Nvptx {
    pub arch: NvArch,
}

impl Nvptx {
    pub fn new(arch: NvArch) -> Self {
        Nvptx { arch }
    }

    fn sreg<'c>(&self, llvm: &Llvm<'c>, reg: &str, axis: Axis) -> Result<IntValue<'c>> {
        let name = format!("llvm.nvvm.read.ptx.sreg.{reg}.{}", axis.letter());
        Ok(llvm.call_intrinsic(&name, &[], &[])?.into_int_value())
    }
}

static INIT: Once = Once::new();

/// PTX register class letter, type suffix and zero of a word.
fn word_constraint(access: Access) -> Result<(&'static str, &'static str, &'static str)> {
    match (access.word_bits, access.float) {
        // bytes travel in 16-bit registers: PTX allows ld/st.b8 on wider registers
        (8, false) => Ok(("h", "b8", "0")),
        (16, false) => Ok(("h", "b16", "0")),
        (32, false) => Ok(("r", "b32", "0")),
        (64, false) => Ok(("l", "b64", "0")),
        (32, true) => Ok(("f", "f32", "0f00000000")),
        (64, true) => Ok(("d", "f64", "0d0000000000000000")),
        (bits, _) => Err(CodegenError::Llvm(format!("no PTX register for {bits}-bit words"))),
    }
}

/// The LLVM type of a word's register (bytes live in i16 registers).
fn word_type<'c>(llvm: &Llvm<'c>, access: Access) -> BasicTypeEnum<'c> {
    match (access.word_bits, access.float) {
        (32, true) => llvm.context.f32_type().into(),
        (64, true) => llvm.context.f64_type().into(),
        (8, _) => llvm.context.i16_type().into(),
        (bits, _) => llvm.context.custom_width_int_type(bits).into(),
    }
}

fn vec_suffix(words: u32) -> Result<&'static str> {
    match words {
        1 => Ok(""),
        2 => Ok(".v2"),
        4 => Ok(".v4"),
        _ => Err(CodegenError::Llvm(format!("no PTX vector access of {words} words"))),
    }
}

/// The qualifiers after `ld.global`/`st.global`: cache operator then L1 eviction priority.
fn hint_suffix(hints: &MemHints) -> String {
    let mut s = String::new();
    if !hints.cache.is_empty() {
        s.push('.');
        s.push_str(hints.cache.trim_start_matches('.'));
    }
    match hints.eviction.as_str() {
        "evict_first" | "evict_last" => s.push_str(&format!(".L1::{}", hints.eviction)),
        _ => {}
    }
    s
}

fn brace_list(first: u32, n: u32) -> String {
    let items: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    if n == 1 {
        items[0].clone()
    } else {
        format!("{{{}}}", items.join(", "))
    }
}

impl Target for Nvptx {
    fn name(&self) -> String {
        format!("NVPTX {}", self.arch.name())
    }
    fn triple(&self) -> &'static str {
        "nvptx64-nvidia-cuda"
    }
    fn data_layout(&self) -> &'static str {
        "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
    }
    fn cpu(&self) -> &str {
        self.arch.name()
    }
    fn features(&self) -> String {
        format!("+ptx{}", self.arch.ptx_version())
    }
    fn warp_size(&self) -> u32 {
        32
    }
    fn global_addrspace(&self) -> u16 {
        1
    }
    fn shared_addrspace(&self) -> u16 {
        3
    }
    fn max_access_bytes(&self) -> u32 {
        16
    }

    fn target_machine(&self) -> Result<TargetMachine> {
        INIT.call_once(|| LlvmTarget::initialize_nvptx(&InitializationConfig::default()));
        let triple = TargetTriple::create(self.triple());
        let target = LlvmTarget::from_triple(&triple).map_err(|e| CodegenError::Llvm(e.to_string()))?;
        target
            .create_target_machine(
                &triple,
                self.cpu(),
                &self.features(),
                OptimizationLevel::Aggressive,
                RelocMode::Default,
                CodeModel::Default,
            )
            .ok_or_else(|| CodegenError::Llvm(format!("LLVM cannot create a target machine for {}", self.name())))
    }

    fn mark_kernel<'c>(&self, llvm: &Llvm<'c>, f: FunctionValue<'c>, max_threads: u32) -> Result<()> {
        // LLVM 19's NVPTX backend finds kernels and launch bounds in
        // `nvvm.annotations`; the calling convention (ptx_kernel = 71) says the same.
        f.set_call_conventions(71);
        f.set_linkage(Linkage::External);
        let ptr = f.as_global_value().as_pointer_value();
        let i32t = llvm.context.i32_type();
        for (key, value) in [("kernel", 1), ("maxntidx", max_threads)] {
            let node = llvm.context.metadata_node(&[
                ptr.into(),
                llvm.context.metadata_string(key).into(),
                i32t.const_int(value as u64, false).into(),
            ]);
            llvm.module
                .add_global_metadata("nvvm.annotations", &node)
                .map_err(|e| CodegenError::Llvm(e.to_string()))?;
        }
        Ok(())
    }

    fn emit(&self, llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<Vec<u8>> {
        let buf = machine
            .write_to_memory_buffer(&llvm.module, FileType::Assembly)
            .map_err(|e| CodegenError::Llvm(format!("PTX emission failed: {e}")))?;
        Ok(buf.as_slice().to_vec())
    }

    fn thread_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        self.sreg(llvm, "tid", axis)
    }
    fn block_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        self.sreg(llvm, "ctaid", axis)
    }
    fn num_blocks<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        self.sreg(llvm, "nctaid", axis)
    }
    fn barrier(&self, llvm: &Llvm<'_>) -> Result<()> {
        llvm.call_intrinsic_void("llvm.nvvm.barrier0", &[])
    }
    fn shuffle_xor<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, lane_mask: u32) -> Result<IntValue<'c>> {
        let i32t = llvm.context.i32_type();
        let args = [i32t.const_all_ones().into(), value.into(), i32t.const_int(lane_mask as u64, false).into(),
            i32t.const_int(0x1f, false).into()];
        Ok(llvm.call_intrinsic("llvm.nvvm.shfl.sync.bfly.i32", &[], &args)?.into_int_value())
    }
    fn shuffle_idx<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, src_lane: IntValue<'c>) -> Result<IntValue<'c>> {
        let i32t = llvm.context.i32_type();
        let args = [i32t.const_all_ones().into(), value.into(), src_lane.into(), i32t.const_int(0x1f, false).into()];
        Ok(llvm.call_intrinsic("llvm.nvvm.shfl.sync.idx.i32", &[], &args)?.into_int_value())
    }

    fn load_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: Access,
        pred: Option<IntValue<'c>>,
        other: Option<&[BasicValueEnum<'c>]>,
        hints: &MemHints,
    ) -> Result<Vec<BasicValueEnum<'c>>> {
        let (reg, ty, zero) = word_constraint(access)?;
        let n = access.words;
        let reg_ty = word_type(llvm, access);
        let mov = if access.float { ty.to_string() } else { format!("b{}", access.word_bits.max(16)) };
        let qualifiers = if hints.volatile { ".volatile.global".to_string() } else { format!(".global{}", hint_suffix(hints)) };
        let addr_i64 = llvm.builder.build_ptr_to_int(addr, llvm.context.i64_type(), "")?;
        let mut constraints: Vec<String> = (0..n).map(|_| format!("={reg}")).collect();
        constraints.push("l".into());
        let mut args: Vec<BasicValueEnum> = vec![addr_i64.into()];
        let mut asm = String::new();
        let ld = format!("ld{qualifiers}{}.{ty} {}, [ ${} + 0 ];", vec_suffix(n)?, brace_list(0, n), n);
        match pred {
            None => asm.push_str(&ld),
            Some(p) => {
                // masked-off lanes keep `other` (or zero): set before the predicated load
                constraints.push("b".into());
                args.push(p.into());
                for w in 0..n {
                    match other {
                        Some(o) => {
                            let v = o[w as usize];
                            let v = if access.word_bits == 8 {
                                llvm.builder.build_int_z_extend(v.into_int_value(), llvm.context.i16_type(), "")?.into()
                            } else {
                                v
                            };
                            constraints.push(reg.into());
                            args.push(v);
                            asm.push_str(&format!("mov.{mov} ${w}, ${};\n\t", n + 2 + w));
                        }
                        None => asm.push_str(&format!("mov.{mov} ${w}, {zero};\n\t")),
                    }
                }
                asm.push_str(&format!("@${} {ld}", n + 1));
            }
        }
        let ret: BasicTypeEnum = if n == 1 {
            reg_ty
        } else {
            let fields: Vec<BasicTypeEnum> = (0..n).map(|_| reg_ty).collect();
            llvm.context.struct_type(&fields, false).into()
        };
        let out = llvm
            .inline_asm(&asm, &constraints.join(","), Some(ret), &args, true)?
            .ok_or_else(|| CodegenError::Llvm("load asm returned nothing".into()))?;
        let mut words = Vec::with_capacity(n as usize);
        for w in 0..n {
            let v = if n == 1 { out } else { llvm.builder.build_extract_value(out.into_struct_value(), w, "")? };
            let v = if access.word_bits == 8 {
                llvm.builder.build_int_truncate(v.into_int_value(), llvm.context.i8_type(), "")?.into()
            } else {
                v
            };
            words.push(v);
        }
        Ok(words)
    }

    fn store_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: Access,
        words: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
        hints: &MemHints,
    ) -> Result<()> {
        let (reg, ty, _) = word_constraint(access)?;
        let n = access.words;
        let addr_i64 = llvm.builder.build_ptr_to_int(addr, llvm.context.i64_type(), "")?;
        let mut constraints = vec!["l".to_string()];
        let mut args: Vec<BasicValueEnum> = vec![addr_i64.into()];
        let first_word = if pred.is_some() { 2 } else { 1 };
        if let Some(p) = pred {
            constraints.push("b".into());
            args.push(p.into());
        }
        for &w in words {
            let w = if access.word_bits == 8 {
                llvm.builder.build_int_z_extend(w.into_int_value(), llvm.context.i16_type(), "")?.into()
            } else {
                w
            };
            constraints.push(reg.into());
            args.push(w);
        }
        let st = format!("st.global{}{}.{ty} [ $0 + 0 ], {};", hint_suffix(hints), vec_suffix(n)?, brace_list(first_word, n));
        let asm = if pred.is_some() { format!("@$1 {st}") } else { st };
        llvm.inline_asm(&asm, &constraints.join(","), None, &args, true)?;
        Ok(())
    }

    fn fast_div_f32<'c>(&self, llvm: &Llvm<'c>, a: BasicValueEnum<'c>, b: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        let f32t = llvm.context.f32_type();
        llvm.inline_asm("div.full.f32 $0, $1, $2;", "=f,f,f", Some(f32t.into()), &[a, b], false)?
            .ok_or_else(|| CodegenError::Llvm("div asm returned nothing".into()))
    }

    fn narrow_f32<'c>(&self, llvm: &Llvm<'c>, value: BasicValueEnum<'c>, to_bf16: bool, rtz: bool) -> Result<BasicValueEnum<'c>> {
        let asm = format!("cvt.{}.{}.f32 $0, $1;", if rtz { "rz" } else { "rn" }, if to_bf16 { "bf16" } else { "f16" });
        let bits = llvm
            .inline_asm(&asm, "=h,f", Some(llvm.context.i16_type().into()), &[value], false)?
            .ok_or_else(|| CodegenError::Llvm("cvt asm returned nothing".into()))?;
        if to_bf16 {
            Ok(bits)
        } else {
            Ok(llvm.builder.build_bit_cast(bits, llvm.context.f16_type(), "")?)
        }
    }

    fn approx_f32<'c>(&self, llvm: &Llvm<'c>, func: ApproxFn, x: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        let asm = match func {
            ApproxFn::Exp2 => "ex2.approx.f32 $0, $1;",
            ApproxFn::Sqrt => "sqrt.approx.f32 $0, $1;",
            ApproxFn::Rsqrt => "rsqrt.approx.f32 $0, $1;",
        };
        llvm.inline_asm(asm, "=f,f", Some(llvm.context.f32_type().into()), &[x], false)?
            .ok_or_else(|| CodegenError::Llvm("approx asm returned nothing".into()))
    }
}
