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
use tritium_ir::ops::TENSORMAP_ATTR;
use tritium_ir::{Attr, Function, Op, Value};
use tritium_transforms::layout::Layout;
use tritium_transforms::{tma_box, MmaSupport, TmaBox};

use super::Lowering;
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;
use crate::smem_plan::smem_elem_bytes;
use crate::target::Target;

/// Bytes of a CUDA tensor map (CUtensorMap), and the alignment it is passed with.
pub const TENSORMAP_BYTES: u32 = 128;

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
