//! The AMDGPU target (CDNA gfx90a/gfx942/gfx950 in wave64, RDNA gfx1100/gfx1200
//! in wave32): ids through `llvm.amdgcn.*` intrinsics, global memory through
//! ordinary LLVM loads and stores under a branch (masked-off lanes leave the
//! exec mask, so they never touch memory), atomics and barriers in the
//! workgroup/agent synchronisation scopes, wave shuffles through DPP, LDS
//! swizzles and `ds_bpermute`, and a code object (HSACO) linked by lld inside
//! the process. No ROCm device library is linked: math is the project's own
//! (`mathlib/`) plus single-instruction `llvm.amdgcn` intrinsics.
use std::rc::Rc;
use std::sync::Once;

use inkwell::module::{FlagBehavior, Linkage};
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, OptimizationLevel};

pub use super::amdgpu_arch::AmdArch;
use super::amdgpu_ir::{atomic_helper_ir, BARRIER_HELPER, BARRIER_IR};
use super::{Access, ApproxFn, AtomicAccess, AtomicOp, Axis, MemHints, Target};
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;
use tritium_lld::{with_codegen_options, CodegenOption};

pub struct Amdgpu {
    pub arch: AmdArch,
}

impl Amdgpu {
    pub fn new(arch: AmdArch) -> Self {
        Amdgpu { arch }
    }

    /// The LLVM options this target's code generation runs with.
    fn codegen_options(&self) -> &'static [CodegenOption] {
        match self.arch {
            AmdArch::Gfx942 => GFX942_OPTIONS,
            AmdArch::Gfx90a | AmdArch::Gfx950 | AmdArch::Gfx1100 | AmdArch::Gfx1200 => &[],
        }
    }

    fn i32_const<'c>(llvm: &Llvm<'c>, v: u64) -> IntValue<'c> {
        llvm.context.i32_type().const_int(v, false)
    }

    /// This lane's index in its wave (`mbcnt` counts the set bits of the
    /// all-ones mask below the lane).
    fn lane_id<'c>(&self, llvm: &Llvm<'c>) -> Result<IntValue<'c>> {
        let ones = llvm.context.i32_type().const_all_ones();
        let lo = llvm.call_intrinsic("llvm.amdgcn.mbcnt.lo", &[], &[ones.into(), Self::i32_const(llvm, 0).into()])?;
        if self.arch.wave_size() == 32 {
            return Ok(lo.into_int_value());
        }
        Ok(llvm.call_intrinsic("llvm.amdgcn.mbcnt.hi", &[], &[ones.into(), lo])?.into_int_value())
    }

    /// `ds_bpermute`: lane `l` reads `value` from lane `src[l]`.
    fn bpermute<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, src: IntValue<'c>) -> Result<IntValue<'c>> {
        let addr = llvm.builder.build_left_shift(src, Self::i32_const(llvm, 2), "")?;
        Ok(llvm.call_intrinsic("llvm.amdgcn.ds.bpermute", &[], &[addr.into(), value.into()])?.into_int_value())
    }

    /// `v_mov_b32_dpp` with control `ctrl` over all rows and banks.
    fn dpp<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, ctrl: u64) -> Result<IntValue<'c>> {
        let i32t = llvm.context.i32_type();
        let args = [value.into(), value.into(), Self::i32_const(llvm, ctrl).into(), Self::i32_const(llvm, 0xf).into(),
            Self::i32_const(llvm, 0xf).into(), llvm.context.bool_type().const_zero().into()];
        Ok(llvm.call_intrinsic("llvm.amdgcn.update.dpp", &[i32t.into()], &args)?.into_int_value())
    }

    /// Runs `body` only where `pred` holds (None: always); returns the values
    /// it yields there and `otherwise` elsewhere.
    fn guarded<'c>(
        &self,
        llvm: &Llvm<'c>,
        pred: Option<IntValue<'c>>,
        otherwise: Vec<BasicValueEnum<'c>>,
        body: impl FnOnce() -> Result<Vec<BasicValueEnum<'c>>>,
    ) -> Result<Vec<BasicValueEnum<'c>>> {
        let Some(pred) = pred else { return body() };
        let b = &llvm.builder;
        let here = b.get_insert_block().ok_or_else(|| CodegenError::Internal("guarded access outside a block".into()))?;
        let f = here.get_parent().ok_or_else(|| CodegenError::Internal("block without a function".into()))?;
        let then = llvm.context.append_basic_block(f, "on");
        let after = llvm.context.append_basic_block(f, "on_end");
        b.build_conditional_branch(pred, then, after)?;
        b.position_at_end(then);
        let vals = body()?;
        let then_end = b.get_insert_block().unwrap_or(then);
        b.build_unconditional_branch(after)?;
        b.position_at_end(after);
        let mut out = Vec::with_capacity(vals.len());
        for (v, o) in vals.iter().zip(otherwise) {
            let phi = b.build_phi(v.get_type(), "")?;
            phi.add_incoming(&[(v, then_end), (&o, here)]);
            out.push(phi.as_basic_value());
        }
        Ok(out)
    }
}

static INIT: Once = Once::new();

/// Code generation at -O2, not -O3: at -O3 the AMDGPU backend runs GVN in
/// its IR passes where -O2 runs EarlyCSE, which on the test corpus cost
/// time and gave 0-12% more instructions, never fewer VGPRs.
const CODEGEN_LEVEL: OptimizationLevel = OptimizationLevel::Default;

/// Code generation options for gfx942. No loop strength reduction: on the
/// bench matmul's K loop, whose operand pointers are already one induction
/// variable each (advanced by a uniform stride, in SGPRs), LSR's cost model,
/// which cannot tell SGPRs from VGPRs, made them two pointers plus 32
/// loop-invariant 64-bit per-lane offsets: without it 212 -> 172 VGPRs and
/// 1543 -> 1429 instructions; the corpus matmul 32 -> 28 VGPRs, attention
/// 64 -> 60, softmax and loop kernels 2-4 instructions fewer, nothing worse.
/// And the schedulers' ready lists hold 16 instructions, not 256: the post-RA
/// scheduler checks each ready instruction against the MFMA hazards every
/// cycle, looking back over the block, which made it a fifth of the matmul's
/// code generation (22 ms -> 10 ms with `llc`); same instructions, VGPRs and
/// spills on every bench and corpus kernel (the matmul one SGPR more than
/// without the limit, one fewer than before; 8 cost it three). gfx1100 keeps
/// LSR (its matmul spilled 158 VGPRs without it); gfx90a is not in the bench
/// table and its corpus matmul got 4 instructions more without LSR; gfx950
/// is unmeasured (LLVM 19's `llc` has no such processor).
const GFX942_OPTIONS: &[CodegenOption] = &[("disable-lsr", "true"), ("misched-limit", "16")];

/// LLVM's pipeline for AMDGPU: the passes of `default<O1>` that change
/// what our lowered IR compiles to, found by taking each of O1's passes out
/// in turn over the AMD test corpus and the bench kernels (VGPRs, SGPRs,
/// scratch, instructions; docs/performance.md). The lowering already emits
/// vectorized, unrolled tile code, so what is left is cleanup: InstCombine
/// once before inlining and once after, CSE, reassociation (address sums),
/// loop rotation (the backend's LICM then hoists out of the K loop), the
/// inliner for the math library's internal functions, and the attributor
/// that tells the backend which implicit kernel inputs go unused (fewer
/// SGPRs and VGPRs reserved). O1's other seven InstCombines, three LICMs,
/// IPSCCP, the vectorizers and unrollers found nothing and cost two thirds
/// of its time. Its EarlyCSE before the first InstCombine is left out too:
/// without it the MFMA matmul's IR generates code 15% faster (its K loop the
/// same, one instruction less; 1% more instructions around it).
const AMDGPU_PIPELINE: &str = "function(instcombine<max-iterations=1;no-verify-fixpoint>,simplifycfg),always-inline,\
    cgscc(inline,function(infer-address-spaces,early-cse<memssa>,reassociate,loop-mssa(loop-rotate),\
    instcombine<max-iterations=1;no-verify-fixpoint>)),amdgpu-attributor,globaldce";

/// The LLVM type of one word of `access`.
fn word_type<'c>(llvm: &Llvm<'c>, access: Access) -> Result<BasicTypeEnum<'c>> {
    Ok(match (access.word_bits, access.float) {
        (32, true) => llvm.context.f32_type().into(),
        (64, true) => llvm.context.f64_type().into(),
        (8 | 16 | 32 | 64, false) => llvm.context.custom_width_int_type(access.word_bits).into(),
        (bits, _) => return Err(CodegenError::Internal(format!("no AMDGPU access of {bits}-bit float words"))),
    })
}

impl Target for Amdgpu {
    fn name(&self) -> String {
        format!("AMDGPU {}", self.arch.name())
    }
    fn triple(&self) -> &'static str {
        "amdgcn-amd-amdhsa"
    }
    fn data_layout(&self) -> &'static str {
        "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
    }
    fn cpu(&self) -> &str {
        self.arch.name()
    }
    fn features(&self) -> String {
        format!("+wavefrontsize{}", self.arch.wave_size())
    }
    fn warp_size(&self) -> u32 {
        self.arch.wave_size()
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
    fn mma(&self) -> tritium_transforms::MmaSupport {
        use tritium_transforms::MmaSupport;
        match self.arch {
            AmdArch::Gfx90a | AmdArch::Gfx942 | AmdArch::Gfx950 => MmaSupport::Mfma,
            AmdArch::Gfx1100 => MmaSupport::Wmma,
            // RDNA 4's WMMA spreads operands differently: not built yet, dots run as FMAs
            AmdArch::Gfx1200 => MmaSupport::None,
        }
    }
    fn has_fp8_convert(&self) -> bool {
        false
    }
    fn has_fnuz_fp8_convert(&self) -> bool {
        // CDNA3's conversions are the fnuz ones; gfx950's are the OCP formats
        self.arch == AmdArch::Gfx942
    }

    // lower_library_call and link_libraries: the trait's defaults (no device library)
    fn call_library<'c>(
        &self,
        _llvm: &Llvm<'c>,
        symbol: &str,
        _args: &[BasicValueEnum<'c>],
        _ret: BasicTypeEnum<'c>,
    ) -> std::result::Result<Result<BasicValueEnum<'c>>, String> {
        Err(format!("{symbol} is a device-library function, and AMD targets link none (tritium does not ship ROCm's ocml)"))
    }
    fn target_machine(&self) -> Result<Rc<TargetMachine>> {
        INIT.call_once(|| LlvmTarget::initialize_amd_gpu(&InitializationConfig::default()));
        super::cached_machine(self.triple(), self.cpu(), &self.features(), || {
            let triple = TargetTriple::create(self.triple());
            let target = LlvmTarget::from_triple(&triple).map_err(|e| CodegenError::Llvm(e.to_string()))?;
            target
                .create_target_machine(&triple, self.cpu(), &self.features(), CODEGEN_LEVEL, RelocMode::PIC, CodeModel::Default)
                .ok_or_else(|| CodegenError::Llvm(format!("LLVM cannot create a target machine for {}", self.name())))
        })
    }

    fn optimization_pipeline(&self) -> &'static str {
        AMDGPU_PIPELINE
    }

    fn prepare_module(&self, llvm: &Llvm<'_>) -> Result<()> {
        // code object v5: the implicit kernel arguments `num_blocks` reads
        // start with the grid's block counts
        llvm.module.add_basic_value_flag("amdhsa_code_object_version", FlagBehavior::Error, llvm.context.i32_type().const_int(500, false));
        Ok(())
    }

    fn finish_module(&self, llvm: &Llvm<'_>, shared_bytes: u32) -> Result<()> {
        if shared_bytes > self.arch.lds_bytes() {
            return Err(CodegenError::Allocation(format!(
                "the kernel needs {shared_bytes} bytes of shared memory (LDS); {} has {} per workgroup",
                self.arch.name(),
                self.arch.lds_bytes()
            )));
        }
        // the dynamic shared array becomes a static one of the kernel's size,
        // so the code object's descriptor states the LDS it needs
        let Some(old) = llvm.module.get_global(super::SHARED_ARRAY) else { return Ok(()) };
        let ty = llvm.context.i8_type().array_type(shared_bytes.max(4));
        let new = llvm.module.add_global(ty, Some(AddressSpace::from(self.shared_addrspace())), "tritium_smem_sized");
        new.set_initializer(&ty.get_undef());
        new.set_linkage(Linkage::Internal);
        new.set_alignment(16);
        old.as_pointer_value().replace_all_uses_with(new.as_pointer_value());
        // SAFETY: every use now refers to `new`
        unsafe { old.delete() };
        new.set_name(super::SHARED_ARRAY);
        Ok(())
    }

    fn mark_kernel<'c>(&self, llvm: &Llvm<'c>, f: FunctionValue<'c>, max_threads: u32) -> Result<()> {
        // amdgpu_kernel calling convention: arguments come from the kernarg segment
        f.set_call_conventions(91);
        f.set_linkage(Linkage::External);
        let attr = llvm.context.create_string_attribute("amdgpu-flat-work-group-size", &format!("1,{max_threads}"));
        f.add_attribute(inkwell::attributes::AttributeLoc::Function, attr);
        Ok(())
    }

    fn emit(&self, llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<Vec<u8>> {
        // code generation rewrites the module (LDS lowering): assemble a copy
        let copy = llvm.module.clone();
        let buf = with_codegen_options(self.codegen_options(), || machine.write_to_memory_buffer(&copy, FileType::Assembly))
            .map_err(CodegenError::Llvm)?
            .map_err(|e| CodegenError::Llvm(format!("AMDGCN emission failed: {e}")))?;
        Ok(buf.as_slice().to_vec())
    }

    fn builds_binary(&self) -> bool {
        true
    }

    fn binary(&self, llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<Option<Vec<u8>>> {
        // the module's last use (compile_ptx_until emits the assembly, from
        // a copy, before this): code generation may rewrite it in place
        let object = with_codegen_options(self.codegen_options(), || machine.write_to_memory_buffer(&llvm.module, FileType::Object))
            .map_err(CodegenError::Llvm)?
            .map_err(|e| CodegenError::Llvm(format!("AMDGPU object emission failed: {e}")))?;
        let hsaco = tritium_lld::link_hsaco(object.as_slice()).map_err(|e| CodegenError::Llvm(format!("linking the HSACO failed: {e}")))?;
        Ok(Some(hsaco))
    }

    fn thread_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        Ok(llvm.call_intrinsic(&format!("llvm.amdgcn.workitem.id.{}", axis.letter()), &[], &[])?.into_int_value())
    }
    fn block_id<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        Ok(llvm.call_intrinsic(&format!("llvm.amdgcn.workgroup.id.{}", axis.letter()), &[], &[])?.into_int_value())
    }
    fn num_blocks<'c>(&self, llvm: &Llvm<'c>, axis: Axis) -> Result<IntValue<'c>> {
        // code object v5's hidden arguments begin with block_count_{x,y,z} (u32 each)
        let base = llvm.call_intrinsic("llvm.amdgcn.implicitarg.ptr", &[], &[])?.into_pointer_value();
        let index = match axis {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        };
        let i32t = llvm.context.i32_type();
        // SAFETY: the implicit argument block holds the three counts
        let at = unsafe { llvm.builder.build_gep(i32t, base, &[Self::i32_const(llvm, index)], "")? };
        let load = llvm.builder.build_load(i32t, at, "num_blocks")?;
        if let Some(i) = load.as_instruction_value() {
            let _ = i.set_alignment(4);
        }
        Ok(load.into_int_value())
    }
    fn barrier(&self, llvm: &Llvm<'_>) -> Result<()> {
        let f = llvm.ir_helper(BARRIER_HELPER, BARRIER_IR)?;
        llvm.builder.build_call(f, &[], "")?;
        Ok(())
    }
    fn shuffle_xor<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, lane_mask: u32) -> Result<IntValue<'c>> {
        match lane_mask {
            // DPP quad permutations: [1,0,3,2] and [2,3,0,1] in two-bit fields
            1 => self.dpp(llvm, value, 0xb1),
            2 => self.dpp(llvm, value, 0x4e),
            // DPP row_xmask (gfx10+): lane ^ mask within a row of 16
            4 | 8 if self.arch.has_row_xmask() => self.dpp(llvm, value, 0x160 + lane_mask as u64),
            // ds_swizzle in bit-mask mode: and 0x1f, or 0, xor mask, within 32 lanes
            4 | 8 | 16 => {
                let offset = 0x1f | ((lane_mask as u64) << 10);
                let args = [value.into(), Self::i32_const(llvm, offset).into()];
                Ok(llvm.call_intrinsic("llvm.amdgcn.ds.swizzle", &[], &args)?.into_int_value())
            }
            _ => {
                let lane = self.lane_id(llvm)?;
                let src = llvm.builder.build_xor(lane, Self::i32_const(llvm, lane_mask as u64), "")?;
                self.bpermute(llvm, value, src)
            }
        }
    }
    fn shuffle_idx<'c>(&self, llvm: &Llvm<'c>, value: IntValue<'c>, src_lane: IntValue<'c>) -> Result<IntValue<'c>> {
        self.bpermute(llvm, value, src_lane)
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
        let word = word_type(llvm, access)?;
        let n = access.words;
        let otherwise: Vec<BasicValueEnum> = match other {
            Some(o) => o.to_vec(),
            None => (0..n).map(|_| zero_of(word)).collect(),
        };
        self.guarded(llvm, pred, otherwise, || {
            let b = &llvm.builder;
            let ty: BasicTypeEnum = if n == 1 { word } else { vector_of(word, n) };
            let v = b.build_load(ty, addr, "")?;
            if let Some(i) = v.as_instruction_value() {
                let _ = i.set_alignment(access.word_bits / 8 * n);
                if hints.volatile {
                    let _ = i.set_volatile(true);
                }
            }
            if n == 1 {
                return Ok(vec![v]);
            }
            (0..n).map(|w| Ok(b.build_extract_element(v.into_vector_value(), Self::i32_const(llvm, w as u64), "")?)).collect()
        })
    }

    fn store_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: Access,
        words: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
        _hints: &MemHints,
    ) -> Result<()> {
        let word = word_type(llvm, access)?;
        let n = access.words;
        self.guarded(llvm, pred, vec![], || {
            let b = &llvm.builder;
            let value: BasicValueEnum = if n == 1 {
                words[0]
            } else {
                let mut v = vector_of(word, n).into_vector_type().get_undef();
                for (w, &x) in words.iter().enumerate() {
                    v = b.build_insert_element(v, x, Self::i32_const(llvm, w as u64), "")?;
                }
                v.into()
            };
            let st = b.build_store(addr, value)?;
            let _ = st.set_alignment(access.word_bits / 8 * n);
            Ok(vec![])
        })?;
        Ok(())
    }

    fn has_buffer_ops(&self) -> bool {
        true
    }
    fn load_buffer<'c>(
        &self,
        llvm: &Llvm<'c>,
        base: PointerValue<'c>,
        offset: IntValue<'c>,
        access: Access,
        pred: Option<IntValue<'c>>,
        other: Option<&[BasicValueEnum<'c>]>,
        hints: &MemHints,
    ) -> Result<Option<Vec<BasicValueEnum<'c>>>> {
        if hints.volatile {
            return Ok(None);
        }
        super::amdgpu_buffer::load(llvm, self.arch, base, offset, access, pred, other)
    }
    fn store_buffer<'c>(
        &self,
        llvm: &Llvm<'c>,
        base: PointerValue<'c>,
        offset: IntValue<'c>,
        access: Access,
        words: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
        _hints: &MemHints,
    ) -> Result<bool> {
        super::amdgpu_buffer::store(llvm, self.arch, base, offset, access, words, pred)
    }

    fn fast_div_f32<'c>(&self, llvm: &Llvm<'c>, a: BasicValueEnum<'c>, b: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        // v_rcp_f32 (1 ulp) then a multiply: Triton's fast `/` on this hardware
        let f32t = llvm.context.f32_type();
        let r = llvm.call_intrinsic("llvm.amdgcn.rcp", &[f32t.into()], &[b])?;
        Ok(llvm.builder.build_float_mul(a.into_float_value(), r.into_float_value(), "")?.into())
    }

    fn narrow_f32<'c>(&self, llvm: &Llvm<'c>, value: BasicValueEnum<'c>, to_bf16: bool, rtz: bool) -> Result<BasicValueEnum<'c>> {
        let b = &llvm.builder;
        let cx = llvm.context;
        if !to_bf16 {
            if !rtz {
                return Ok(b.build_float_trunc(value.into_float_value(), cx.f16_type(), "")?.into());
            }
            // v_cvt_pkrtz_f16_f32 rounds toward zero
            let pair = llvm.call_intrinsic("llvm.amdgcn.cvt.pkrtz", &[], &[value, cx.f32_type().const_zero().into()])?;
            return Ok(b.build_extract_element(pair.into_vector_value(), Self::i32_const(llvm, 0), "")?);
        }
        // bf16 is the top half of the f32's bits: round (to nearest even, or
        // toward zero) in integers; NaNs become the quiet NaN of their sign
        let i32t = cx.i32_type();
        let bits = b.build_bit_cast(value, i32t, "")?.into_int_value();
        let rounded = if rtz {
            bits
        } else {
            let odd = b.build_and(b.build_right_shift(bits, Self::i32_const(llvm, 16), false, "")?, Self::i32_const(llvm, 1), "")?;
            let bias = b.build_int_add(odd, Self::i32_const(llvm, 0x7fff), "")?;
            b.build_int_add(bits, bias, "")?
        };
        let top = b.build_right_shift(rounded, Self::i32_const(llvm, 16), false, "")?;
        let is_nan = b.build_float_compare(inkwell::FloatPredicate::UNO, value.into_float_value(), value.into_float_value(), "")?;
        let sign = b.build_and(b.build_right_shift(bits, Self::i32_const(llvm, 16), false, "")?, Self::i32_const(llvm, 0x8000), "")?;
        let nan = b.build_or(sign, Self::i32_const(llvm, 0x7fc0), "")?;
        let out = b.build_select(is_nan, nan, top, "")?.into_int_value();
        Ok(b.build_int_truncate(out, cx.i16_type(), "")?.into())
    }

    fn atomic_global<'c>(
        &self,
        llvm: &Llvm<'c>,
        addr: PointerValue<'c>,
        access: AtomicAccess,
        operands: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
    ) -> Result<BasicValueEnum<'c>> {
        let name = format!(
            "tritium_amdgpu_atomic_{:?}_{:?}_{:?}_{}{}{}{}",
            access.op,
            access.sem,
            access.scope,
            if access.float { "f" } else { "i" },
            access.bits,
            if access.signed { "s" } else { "u" },
            if access.bf16 { "bf" } else { "" }
        )
        .to_ascii_lowercase();
        let ir = atomic_helper_ir(access, &name).map_err(|reason| CodegenError::Unsupported {
            op: if access.op == AtomicOp::Cas { "atomic_cas" } else { "atomic_rmw" }.into(),
            loc: Default::default(),
            target: self.name(),
            reason,
        })?;
        let helper = llvm.ir_helper(&name, &ir)?;
        let ty = operands.first().map(|v| v.get_type()).ok_or_else(|| CodegenError::Internal("atomic without operands".into()))?;
        let out = self.guarded(llvm, pred, vec![zero_of(ty)], || {
            let mut args: Vec<inkwell::values::BasicMetadataValueEnum> = vec![addr.into()];
            args.extend(operands.iter().map(|&v| inkwell::values::BasicMetadataValueEnum::from(v)));
            let r = llvm
                .builder
                .build_call(helper, &args, "")?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| CodegenError::Internal("atomic helper returned nothing".into()))?;
            Ok(vec![r])
        })?;
        Ok(out[0])
    }

    fn printf<'c>(&self, _llvm: &Llvm<'c>, _format: &str, _args: &[BasicValueEnum<'c>]) -> Result<()> {
        Err(CodegenError::Unsupported {
            op: "print".into(),
            loc: Default::default(),
            target: self.name(),
            reason: "device printing on AMD GPUs goes through the ROCm device library's hostcall buffer, which tritium does not link; \
                     use the interpreter (TRITIUM_INTERPRET=1) to print from a kernel"
                .into(),
        })
    }

    fn assert_fail(&self, llvm: &Llvm<'_>, _msg: &str, _file: &str, _line: u32, _function: &str) -> Result<()> {
        // no device printf here (see `printf`): the failing wave traps, which
        // aborts the dispatch, and the HIP runtime reports the kernel failed
        llvm.call_intrinsic_void("llvm.trap", &[])?;
        llvm.builder.build_unreachable()?;
        Ok(())
    }

    fn approx_f32<'c>(&self, llvm: &Llvm<'c>, func: ApproxFn, x: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        let name = match func {
            ApproxFn::Exp2 | ApproxFn::Exp2Ftz => "llvm.amdgcn.exp2",
            ApproxFn::Sqrt => "llvm.amdgcn.sqrt",
            ApproxFn::Rsqrt => "llvm.amdgcn.rsq",
        };
        llvm.call_intrinsic(name, &[llvm.context.f32_type().into()], &[x])
    }
}

fn zero_of(ty: BasicTypeEnum<'_>) -> BasicValueEnum<'_> {
    match ty {
        BasicTypeEnum::IntType(t) => t.const_zero().into(),
        BasicTypeEnum::FloatType(t) => t.const_zero().into(),
        BasicTypeEnum::PointerType(t) => t.const_null().into(),
        BasicTypeEnum::VectorType(t) => t.const_zero().into(),
        BasicTypeEnum::ArrayType(t) => t.const_zero().into(),
        BasicTypeEnum::StructType(t) => t.const_zero().into(),
        BasicTypeEnum::ScalableVectorType(t) => t.const_zero().into(),
    }
}

fn vector_of(word: BasicTypeEnum<'_>, n: u32) -> BasicTypeEnum<'_> {
    match word {
        BasicTypeEnum::IntType(t) => t.vec_type(n).into(),
        BasicTypeEnum::FloatType(t) => t.vec_type(n).into(),
        other => other,
    }
}
