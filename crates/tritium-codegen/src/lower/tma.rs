//! TMA on sm_90a (`tma_load`, `tma_store`: host tensor descriptors claimed
//! by `tritium_transforms::claim_tma`). Operand 0 is the tensor map's
//! generic address (a `__grid_constant__` kernel parameter); the block op's
//! operands follow, of which only the offsets matter here (the map holds
//! the base, shape, strides, box, swizzle and padding).
//!
//! A load: thread 0 initialises the tile's mbarrier (8 bytes after the
//! tile in its shared buffer), every thread passes a barrier, thread 0 arms
//! it with the tile's byte count (`mbarrier.arrive.expect_tx`) and issues
//! the box copies (`cp.async.bulk.tensor`, out-of-bounds elements filled by
//! the hardware: zeros, or NaN for a "nan" descriptor), and every thread
//! waits for phase 0 (`mbarrier.try_wait.parity`). The tile is then in the
//! NVMMA layout of the box's swizzle, where the conversion after the load
//! reads it. Each load initialises its barrier afresh, so one waited on
//! in an earlier iteration needs no phase tracking; membar's barrier before
//! the tile is written again (the previous reads conflict) also keeps
//! thread 0 from re-initialising it while others still wait.
//!
//! A store: the value is already in shared memory in the box's layout (its
//! conversion fenced the generic-proxy writes); after membar's barrier
//! thread 0 issues the box copies, commits them and waits until they are
//! done, so the buffer may be written again and the data is in global
//! memory before the kernel ends.
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::AnyType;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue};
use tritium_analysis::{Access, BufferKind};
use tritium_ir::ops::{GLOBAL_SCRATCH_ATTR, TENSORMAP_ATTR};
use tritium_ir::{Attr, Function, Op, ScalarKind, Value, ValueDef};
use tritium_transforms::layout::Layout;
use tritium_transforms::tma::TENSORMAP_BYTES;
use tritium_transforms::{tma_box, MmaSupport, TmaBox};

use super::Lowering;
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;
use crate::smem_plan::smem_elem_bytes;
use crate::target::{Axis, Target};

/// Bytes an mbarrier takes (it follows the tile in a `tma_load`'s buffer).
pub const MBARRIER_BYTES: u32 = 8;

/// The kernel arguments of `func` that are tensor maps (`tensormap`):
/// NVIDIA sm_90a only, i64 in the IR.
pub(super) fn tensormap_params(target: &dyn Target, func: &Function) -> std::result::Result<Vec<usize>, String> {
    let maps: Vec<usize> = (0..func.arg_attrs.len())
        .filter(|&i| func.arg_attrs[i].get(TENSORMAP_ATTR).and_then(Attr::as_bool) == Some(true))
        .collect();
    if maps.is_empty() {
        return Ok(maps);
    }
    if !func.kernel || target.mma() != MmaSupport::V3 {
        return Err(format!("@{}: tensor map arguments need a kernel on NVIDIA sm_90a, not {}", func.name, target.name()));
    }
    Ok(maps)
}

/// Makes each tensor-map parameter a 128-byte by-value parameter aligned to
/// 128 bytes and marks it `grid_constant` (CUDA's `const __grid_constant__
/// CUtensorMap`), so the kernel reads it where the launch put it.
pub(super) fn mark_tensormap_params<'c>(llvm: &Llvm<'c>, f: FunctionValue<'c>, maps: &[usize]) -> Result<()> {
    if maps.is_empty() {
        return Ok(());
    }
    let cx = llvm.context;
    let map_ty = cx.i8_type().array_type(TENSORMAP_BYTES);
    let byval = cx.create_type_attribute(Attribute::get_named_enum_kind_id("byval"), map_ty.as_any_type_enum());
    let align = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("align"), TENSORMAP_BYTES as u64);
    let i32t = cx.i32_type();
    let mut indices = Vec::new();
    for &i in maps {
        f.add_attribute(AttributeLoc::Param(i as u32), byval);
        f.add_attribute(AttributeLoc::Param(i as u32), align);
        indices.push(i32t.const_int(i as u64 + 1, false).into());
    }
    let list = cx.metadata_node(&indices);
    let node = cx.metadata_node(&[
        f.as_global_value().as_pointer_value().into(),
        cx.metadata_string("grid_constant").into(),
        list.into(),
    ]);
    llvm.module.add_global_metadata("nvvm.annotations", &node).map_err(|e| CodegenError::Llvm(e.to_string()))
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// The box of `op`'s block `block` and the block's rank-2 shape.
    fn tma_box_of(&self, op: Op, block: Value) -> Result<(TmaBox, Vec<u32>, u32)> {
        let dims = self.module.types.dims(self.ty(block)).to_vec();
        let eb = smem_elem_bytes(self.kind(block));
        let b = tma_box(eb, &dims).map_err(|why| self.invalid(op, format!("no TMA box for this block: {why}")))?;
        Ok((b, dims, eb))
    }

    /// The offsets (i32 registers) of a TMA op's box, innermost first as
    /// the instruction takes them, for copy `j` (shifted by `j` box widths).
    fn tma_coords(&self, op: Op, rank: usize, b: &TmaBox, j: u32) -> Result<Vec<IntValue<'c>>> {
        self.tma_coords_from(op, 0, rank, b, j)
    }

    /// `tma_coords` of an op whose tensor map is operand `map_at`.
    pub(super) fn tma_coords_from(&self, op: Op, map_at: usize, rank: usize, b: &TmaBox, j: u32) -> Result<Vec<IntValue<'c>>> {
        let first = map_at + 2 + 2 * rank; // map, base, shapes, strides
        let mut coords = Vec::with_capacity(rank);
        for d in (0..rank).rev() {
            let v = self.op(op).operands[first + d];
            let mut c = self.regs(v)?[0].into_int_value();
            if d == rank - 1 && j > 0 {
                c = self.llvm.builder.build_int_add(c, self.i32_const((j * b.box_dims[rank - 1]) as u64), "")?;
            }
            coords.push(c);
        }
        Ok(coords)
    }

    fn tma_map(&self, op: Op) -> Result<BasicValueEnum<'c>> {
        Ok(self.regs(self.op(op).operands[0])?[0])
    }

    /// One asm statement: where `$0 <test> 0` holds for `guard` (`test`:
    /// "eq" or "ne"), arm mbarrier `bar` with `tile` bytes, then issue
    /// `b`'s box copies into shared memory at `dst` (copy `j` at `j` box
    /// sizes), through the tensor map that is operand `map_at` of `op`.
    /// `tma_load` (thread 0, its own buffer) and the pipeliner's `tma_copy`
    /// (thread 0 where the trip guard holds, a ring stage) share it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn arm_and_copy_boxes(
        &self,
        op: Op,
        map_at: usize,
        (guard, test): (IntValue<'c>, &str),
        bar: IntValue<'c>,
        dst: IntValue<'c>,
        b: &TmaBox,
        eb: u32,
        tile: u32,
    ) -> Result<()> {
        let rank = b.box_dims.len();
        let map = self.regs(self.op(op).operands[map_at])?[0];
        let mut asm = format!("{{ .reg .pred p; setp.{test}.u32 p, $0, 0; @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {tile};");
        let mut args: Vec<BasicValueEnum<'c>> = vec![guard.into(), bar.into(), map];
        let box_bytes = b.box_dims.iter().product::<u32>() * eb;
        for j in 0..b.copies {
            let at = self.llvm.builder.build_int_add(dst, self.i32_const((j * box_bytes) as u64), "")?;
            let n = args.len();
            args.push(at.into());
            let coords = self.tma_coords_from(op, map_at, rank, b, j)?;
            args.extend(coords.iter().map(|&c| BasicValueEnum::from(c)));
            asm.push_str(&format!(
                " @p cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes [${n}], [$2, {}], [$1];",
                Self::coord_list(n + 1, rank)
            ));
        }
        asm.push_str(" }");
        let constraints = format!("r,r,l{},~{{memory}}", ",r".repeat(args.len() - 3));
        self.llvm.inline_asm(&asm, &constraints, None, &args, true)?;
        Ok(())
    }

    /// `{$a, $b}` naming operands `first..first + n`.
    pub(super) fn coord_list(first: usize, n: usize) -> String {
        let names: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
        format!("{{{}}}", names.join(", "))
    }

    pub(super) fn lower_tma_load(&mut self, op: Op) -> Result<()> {
        let res = self.op(op).results[0];
        let (b, dims, eb) = self.tma_box_of(op, res)?;
        if !matches!(self.layouts.of(res), Some(Layout::Shared(_))) {
            return Err(CodegenError::Internal("tma_load: the result is not in shared memory".into()));
        }
        let offset = self
            .shared
            .alloc
            .offset_of(op, BufferKind::Explicit)
            .ok_or_else(|| CodegenError::Internal(format!("no shared buffer allocated for %{}", res.0)))?;
        let tile: u32 = dims.iter().product::<u32>() * eb;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(offset, offset + tile + MBARRIER_BYTES));
        let i32t = self.llvm.context.i32_type();
        let dst = self.llvm.builder.build_ptr_to_int(self.smem_at(offset)?, i32t, "")?;
        let bar = self.llvm.builder.build_int_add(dst, self.i32_const(tile as u64), "")?;
        let leader = [self.tid.into(), bar.into()];
        self.llvm.inline_asm(
            "{ .reg .pred p; setp.eq.u32 p, $0, 0; @p mbarrier.init.shared::cta.b64 [$1], 1; @p fence.mbarrier_init.release.cluster; }",
            "r,r,~{memory}",
            None,
            &leader,
            true,
        )?;
        self.smem_fixed_barrier()?;
        // arm the barrier with the tile's bytes, then the copies (thread 0)
        self.arm_and_copy_boxes(op, 0, (self.tid, "eq"), bar, dst, &b, eb, tile)?;
        // every thread waits for the copies' bytes (phase 0 of a fresh barrier)
        self.llvm.inline_asm(
            "{ .reg .pred done; tma_wait: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], 0; @!done bra tma_wait; }",
            "r,~{memory}",
            None,
            &[bar.into()],
            true,
        )?;
        // consumers address the buffer (the conversion after the load)
        self.values.insert(res, Vec::new());
        Ok(())
    }

    pub(super) fn lower_tma_store(&mut self, op: Op) -> Result<()> {
        let value = *self.op(op).operands.last().ok_or_else(|| CodegenError::Internal("tma_store without a value".into()))?;
        let (b, dims, eb) = self.tma_box_of(op, value)?;
        let rank = dims.len();
        let buf = self.shared_buffer(op, value)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::read(buf.range.0, buf.range.1));
        let i32t = self.llvm.context.i32_type();
        let src = self.llvm.builder.build_ptr_to_int(buf.ptr, i32t, "")?;
        let map = self.tma_map(op)?;
        let mut asm = "{ .reg .pred p; setp.eq.u32 p, $0, 0;".to_string();
        let mut args: Vec<BasicValueEnum<'c>> = vec![self.tid.into(), map];
        let box_bytes = b.box_dims.iter().product::<u32>() * eb;
        for j in 0..b.copies {
            let at = self.llvm.builder.build_int_add(src, self.i32_const((j * box_bytes) as u64), "")?;
            let n = args.len();
            args.push(at.into());
            let coords = self.tma_coords(op, rank, &b, j)?;
            args.extend(coords.iter().map(|&c| BasicValueEnum::from(c)));
            asm.push_str(&format!(
                " @p cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [$1, {}], [${n}];",
                Self::coord_list(n + 1, rank)
            ));
        }
        asm.push_str(" @p cp.async.bulk.commit_group; @p cp.async.bulk.wait_group 0; }");
        let constraints = format!("r,l{},~{{memory}}", ",r".repeat(args.len() - 2));
        self.llvm.inline_asm(&asm, &constraints, None, &args, true)?;
        Ok(())
    }
}

/// The `elemtype` code `tensormap.replace` takes for a tensor map of
/// `kind` elements (the PTX ISA's numbering, which differs from the
/// driver's `CUtensorMapDataType` from f64 on: f32.ftz sits between).
/// 8-bit floats move as bytes, as host maps encode them.
fn ptx_elemtype(kind: ScalarKind) -> Option<u32> {
    Some(match kind {
        ScalarKind::I8 | ScalarKind::U8 | ScalarKind::F8E4M3 | ScalarKind::F8E5M2 | ScalarKind::F8E4B15 | ScalarKind::F8E4B8
        | ScalarKind::F8E5B16 => 0,
        ScalarKind::I16 | ScalarKind::U16 => 1,
        ScalarKind::U32 => 2,
        ScalarKind::I32 => 3,
        ScalarKind::U64 => 4,
        ScalarKind::I64 => 5,
        ScalarKind::F16 => 6,
        ScalarKind::F32 => 7,
        ScalarKind::F64 => 9,
        ScalarKind::BF16 => 10,
        ScalarKind::I1 => return None,
    })
}

/// `tensormap.replace`'s `swizzle_mode` code for a swizzle span in bytes.
fn ptx_swizzle_mode(bytes: i64) -> Option<u32> {
    Some(match bytes {
        0 => 0,
        32 => 1,
        64 => 2,
        128 => 3,
        _ => return None,
    })
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// `tensormap_create`: this program's slot of the global scratch
    /// (`scratch + (x + nx * (y + ny * z)) * per_program + slot * 128`) gets
    /// a tensor map written by thread 0, the only thread that issues TMA
    /// copies: zeroed with 16-byte stores, every field the driver's encoder
    /// would set written with `tensormap.replace` (global address, rank,
    /// box, extents, byte strides, element strides of 1, element type, no
    /// interleave, swizzle, fill), then a tensormap-proxy release fence and
    /// the acquire fence on the map's address, which also drops whatever
    /// the TMA unit cached for that address from an earlier launch. The
    /// result is the map's generic address, which the copies take.
    pub(super) fn lower_tensormap_create(&mut self, op: Op) -> Result<()> {
        if self.target.mma() != MmaSupport::V3 {
            return Err(self.unsupported(op, "tensor maps are built on NVIDIA sm_90a only"));
        }
        let d = self.op(op);
        let r = (d.operands.len() - 1) / 2;
        let (scratch, base) = (d.operands[0], d.operands[1]);
        let attrs = &d.attrs;
        let slot = attrs.get("slot").and_then(Attr::as_int).unwrap_or(0) as u64;
        let box_dims: Vec<i64> = attrs.get("box").and_then(Attr::as_int_array).unwrap_or(&[]).to_vec();
        let swizzle = attrs.get("swizzle").and_then(Attr::as_int).and_then(ptx_swizzle_mode);
        let swizzle = swizzle.ok_or_else(|| self.invalid(op, "swizzle must be 0, 32, 64 or 128 bytes"))?;
        let nan = attrs.get("nan").and_then(Attr::as_bool) == Some(true);
        let types = &self.module.types;
        let elem = types.pointee(self.ty(base)).and_then(|e| types.scalar_kind(e));
        let code = elem.and_then(ptx_elemtype).ok_or_else(|| self.invalid(op, "no TMA element type for this base"))?;
        let eb = elem.map_or(1, |k| k.bits().div_ceil(8)) as u64;
        let ValueDef::BlockArg(_, arg) = self.func.values[scratch].def else {
            return Err(self.invalid(op, "operand 0 must be the kernel's global scratch argument"));
        };
        let per_program = self.func.arg_attrs.get(arg as usize).and_then(|a| a.get(GLOBAL_SCRATCH_ATTR)).and_then(Attr::as_int);
        let per_program = per_program.ok_or_else(|| self.invalid(op, "operand 0 must be the kernel's global scratch argument"))? as u64;
        let llvm = self.llvm;
        let b = &llvm.builder;
        let i64t = llvm.context.i64_type();
        let wide = |v: IntValue<'c>| b.build_int_z_extend_or_bit_cast(v, i64t, "");
        let (x, y, z) = (self.target.block_id(llvm, Axis::X)?, self.target.block_id(llvm, Axis::Y)?, self.target.block_id(llvm, Axis::Z)?);
        let (nx, ny) = (self.target.num_blocks(llvm, Axis::X)?, self.target.num_blocks(llvm, Axis::Y)?);
        let yz = b.build_int_add(wide(y)?, b.build_int_mul(wide(ny)?, wide(z)?, "")?, "")?;
        let program = b.build_int_add(wide(x)?, b.build_int_mul(wide(nx)?, yz, "")?, "")?;
        let offset = b.build_int_add(
            b.build_int_mul(program, i64t.const_int(per_program, false), "")?,
            i64t.const_int(slot * TENSORMAP_BYTES as u64, false),
            "",
        )?;
        let at = b.build_int_add(self.regs(scratch)?[0].into_int_value(), offset, "")?;
        let base_reg = match self.regs(base)?[0] {
            BasicValueEnum::PointerValue(p) => b.build_ptr_to_int(p, i64t, "")?,
            v => v.into_int_value(),
        };
        let mut args: Vec<BasicValueEnum<'c>> = vec![self.tid.into(), at.into(), base_reg.into()];
        // one branch around thread 0's work (per-instruction predicates
        // made ptxas branch around each instruction), one instruction a line
        // (the PTX reads as a listing); `g` is the map's global address
        let mut asm: Vec<String> = [
            "{ .reg .pred p; .reg .b64 g, z;",
            "setp.ne.u32 p, $0, 0;",
            "@p bra tensormap_done;",
            "cvta.to.global.u64 g, $1;",
            "mov.b64 z, 0;",
        ]
        .map(String::from)
        .to_vec();
        for i in 0..TENSORMAP_BYTES / 16 {
            asm.push(format!("st.global.v2.b64 [g+{}], {{z, z}};", 16 * i));
        }
        let field = |name: &str, ty: &str| format!("tensormap.replace.tile.{name}.global.b1024.{ty} [g],");
        asm.push(format!("{} $2;", field("global_address", "b64")));
        asm.push(format!("{} {};", field("rank", "b32"), r - 1));
        // TMA numbers dimensions innermost first
        for i in 0..r {
            asm.push(format!("{} {i}, {};", field("box_dim", "b32"), box_dims.get(r - 1 - i).copied().unwrap_or(1)));
        }
        for i in 0..r {
            let v = self.regs(self.op(op).operands[2 + r - 1 - i])?[0].into_int_value();
            let v = if v.get_type().get_bit_width() == 32 { v } else { b.build_int_truncate(v, llvm.context.i32_type(), "")? };
            asm.push(format!("{} {i}, ${};", field("global_dim", "b32"), args.len()));
            args.push(v.into());
        }
        for i in 0..r - 1 {
            let v = self.regs(self.op(op).operands[2 + r + (r - 2 - i)])?[0].into_int_value();
            let bytes = b.build_int_mul(wide(v)?, i64t.const_int(eb, false), "")?;
            asm.push(format!("{} {i}, ${};", field("global_stride", "b64"), args.len()));
            args.push(bytes.into());
        }
        for i in 0..r {
            asm.push(format!("{} {i}, 1;", field("element_stride", "b32")));
        }
        asm.push(format!("{} {code};", field("elemtype", "b32")));
        asm.push(format!("{} 0;", field("interleave_layout", "b32")));
        asm.push(format!("{} {swizzle};", field("swizzle_mode", "b32")));
        asm.push(format!("{} {};", field("fill_mode", "b32"), nan as u32));
        asm.push("fence.proxy.tensormap::generic.release.gpu;".into());
        asm.push(format!("fence.proxy.tensormap::generic.acquire.gpu [$1], {TENSORMAP_BYTES};"));
        asm.push("tensormap_done: }".into());
        let asm = asm.join("\n\t");
        let mut constraints = String::from("r,l,l");
        for a in &args[3..] {
            constraints.push_str(if a.into_int_value().get_type().get_bit_width() == 32 { ",r" } else { ",l" });
        }
        constraints.push_str(",~{memory}");
        self.llvm.inline_asm(&asm, &constraints, None, &args, true)?;
        let res = self.op(op).results[0];
        self.values.insert(res, vec![at.into()]);
        Ok(())
    }
}
