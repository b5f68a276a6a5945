//! Per-op typing rules of docs/ir.md: constants, elementwise arithmetic,
//! casts, memory, control flow, calls and debug ops. Each rule returns a plain
//! message; the caller attaches the op's name and location.
use crate::attrs::Attr;
use crate::entities::{Op, Region, Type};
use crate::error::VerifyError;
use crate::ops::{Opcode, CONTRACT};
use crate::types::{ScalarKind, TypeData};

use super::Checker;

pub(super) type Rule = Result<(), String>;

impl Checker<'_> {
    pub(super) fn op_rules(&self, op: Op, parent: Option<Op>) -> Result<(), VerifyError> {
        self.rule(op, parent).map_err(|msg| self.err(op, msg))
    }

    pub(super) fn operand_types(&self, op: Op) -> Vec<Type> {
        self.f.ops[op].operands.iter().map(|&v| self.ty(v)).collect()
    }
    pub(super) fn result_types(&self, op: Op) -> Vec<Type> {
        self.f.ops[op].results.iter().map(|&v| self.ty(v)).collect()
    }
    pub(super) fn attr(&self, op: Op, key: &str) -> Option<&Attr> {
        self.f.ops[op].attrs.get(key)
    }
    pub(super) fn kind(&self, t: Type) -> Option<ScalarKind> {
        self.m.types.scalar_kind(t)
    }
    pub(super) fn list(&self, ts: &[Type]) -> String {
        let v: Vec<String> = ts.iter().map(|&t| self.show(t)).collect();
        format!("({})", v.join(", "))
    }
    fn is_i1_like(&self, c: Type, like: Type) -> bool {
        self.m.types.same_shape(c, like) && self.kind(c) == Some(ScalarKind::I1)
    }
    pub(super) fn one_of(&self, op: Op, key: &str, allowed: &[&str]) -> Rule {
        match self.attr(op, key).and_then(|a| a.as_str()) {
            Some(s) if !allowed.contains(&s) => {
                Err(format!("attribute '{key}' is \"{s}\", expected one of {}", allowed.join(" ")))
            }
            _ => Ok(()),
        }
    }

    fn rule(&self, op: Op, parent: Option<Op>) -> Rule {
        let opcode = self.f.ops[op].opcode;
        let ops = self.operand_types(op);
        let res = self.result_types(op);
        let types = &self.m.types;
        self.buffer_uses(op)?;
        match opcode {
            Opcode::Const => self.constant(op, res[0]),
            Opcode::LocalAlloc => {
                if types.dims(res[0]).len() < 2 {
                    return Err(format!("result must be a tensor of stages x tile, got {}", self.show(res[0])));
                }
                Ok(())
            }
            Opcode::LocalView => {
                self.allocated(op)?;
                self.expect_scalar(ops[1], ScalarKind::I32, "stage")?;
                self.stage_of(ops[0], res[0])
            }
            Opcode::AsyncCopy => {
                self.allocated(op)?;
                self.expect_scalar(ops[1], ScalarKind::I32, "stage")?;
                let (buf, ptrs) = (ops[0], ops[2]);
                let tile = types.dims(buf).get(1..).unwrap_or(&[]);
                let elem = types.elem(buf);
                if types.dims(ptrs) != tile || types.pointee(ptrs) != Some(elem) {
                    return Err(format!("pointers {} do not address one stage of {}", self.show(ptrs), self.show(buf)));
                }
                if let Some(&mask) = ops.get(3) {
                    if !self.is_i1_like(mask, ptrs) {
                        return Err(format!("mask must be i1 shaped like the pointers, got {}", self.show(mask)));
                    }
                }
                if let Some(&other) = ops.get(4) {
                    if types.dims(other) != tile || types.elem(other) != elem {
                        return Err(format!("other must be one stage's tile, got {}", self.show(other)));
                    }
                }
                Ok(())
            }
            Opcode::AsyncCommit | Opcode::AsyncWait => Ok(()),
            Opcode::MbarrierInit | Opcode::MbarrierInval | Opcode::MbarrierWait => {
                self.allocated(op)?;
                let stages = types.dims(ops[0]).first().copied().unwrap_or(0);
                if types.dims(ops[0]) != [stages, 1] || self.kind(ops[0]) != Some(ScalarKind::I64) {
                    return Err(format!("the barriers must be a stages x 1 i64 buffer, got {}", self.show(ops[0])));
                }
                if opcode == Opcode::MbarrierWait {
                    self.expect_scalar(ops[1], ScalarKind::I32, "stage")?;
                    self.expect_scalar(ops[2], ScalarKind::I32, "phase")?;
                }
                Ok(())
            }
            Opcode::TmaCopy => self.tma_copy(op, &ops),
            Opcode::DotWait => {
                if ops.len() != res.len() {
                    return Err(format!("{} operands but {} results: each result is its operand", ops.len(), res.len()));
                }
                for (&o, &r) in ops.iter().zip(&res) {
                    self.result_is(r, o)?;
                }
                match self.f.ops[op].attrs.get("pending").and_then(crate::Attr::as_int) {
                    Some(p) if p < 0 => Err(format!("pending must not be negative, got {p}")),
                    _ => Ok(()),
                }
            }
            Opcode::ConvertLayout => {
                if !types.is_tensor(ops[0]) {
                    return Err(format!("operand must be a tensor, got {}", self.show(ops[0])));
                }
                self.result_is(res[0], ops[0])
            }
            Opcode::Splat => {
                if types.is_tensor(ops[0]) {
                    return Err(format!("operand must be a scalar, got {}", self.show(ops[0])));
                }
                if !types.is_tensor(res[0]) || types.elem(res[0]) != ops[0] {
                    return Err(format!("result must be a tensor of {}, got {}", self.show(ops[0]), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Arange => {
                let start = self.attr(op, "start").and_then(Attr::as_int).unwrap_or(0);
                let end = self.attr(op, "end").and_then(Attr::as_int).unwrap_or(0);
                let n = end.checked_sub(start).filter(|&n| n > 0 && (n as u64).is_power_of_two());
                let Some(n) = n else {
                    return Err(format!("end - start must be a positive power of two (start {start}, end {end})"));
                };
                if types.dims(res[0]) != [n as u32] || self.kind(res[0]) != Some(ScalarKind::I32) {
                    return Err(format!("result must be tensor<{n}xi32>, got {}", self.show(res[0])));
                }
                Ok(())
            }
            Opcode::ProgramId | Opcode::NumPrograms => {
                let axis = self.attr(op, "axis").and_then(Attr::as_int).unwrap_or(-1);
                if !(0..=2).contains(&axis) {
                    return Err(format!("axis must be 0, 1 or 2, got {axis}"));
                }
                self.expect_scalar(res[0], ScalarKind::I32, "result")
            }
            Opcode::Add | Opcode::Sub | Opcode::Mul => {
                self.elementwise(&ops, &res, Class::Numeric)?;
                if self.attr(op, CONTRACT).is_some() && !self.kind(res[0]).is_some_and(ScalarKind::is_float) {
                    return Err(format!("attribute '{CONTRACT}' is only for float add, sub and mul, not {}", self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Div | Opcode::Rem | Opcode::Min | Opcode::Max => self.elementwise(&ops, &res, Class::Numeric),
            Opcode::DivRn => self.elementwise(&ops, &res, Class::Float),
            Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Shl | Opcode::Shr | Opcode::Umulhi => {
                self.elementwise(&ops, &res, Class::Int)
            }
            Opcode::Neg | Opcode::Abs => self.elementwise(&ops, &res, Class::Numeric),
            Opcode::Not => self.elementwise(&ops, &res, Class::Int),
            Opcode::Exp | Opcode::Exp2 | Opcode::Log | Opcode::Log2 | Opcode::Sqrt | Opcode::SqrtRn | Opcode::Rsqrt
            | Opcode::Sin | Opcode::Cos | Opcode::Floor | Opcode::Ceil | Opcode::Erf | Opcode::Fma | Opcode::Clamp => {
                self.elementwise(&ops, &res, Class::Float)
            }
            Opcode::Cmp => {
                self.same_operands(&ops)?;
                self.one_of(op, "pred", &["eq", "ne", "lt", "le", "gt", "ge"])?;
                if !self.is_i1_like(res[0], ops[0]) {
                    return Err(format!("result must be i1 shaped like {}, got {}", self.show(ops[0]), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Select => {
                if !self.is_i1_like(ops[0], ops[1]) {
                    return Err(format!(
                        "condition must be i1 shaped like {}, got {}",
                        self.show(ops[1]),
                        self.show(ops[0])
                    ));
                }
                self.same_operands(&ops[1..])?;
                self.result_is(res[0], ops[1])
            }
            Opcode::Cast => {
                if !types.same_shape(ops[0], res[0]) {
                    return Err(format!("cast changes shape: {} to {}", self.show(ops[0]), self.show(res[0])));
                }
                if self.kind(ops[0]).is_none() || self.kind(res[0]).is_none() {
                    return Err("cast is between numeric types; use bitcast for pointers".into());
                }
                self.one_of(op, "rounding", &["rtne", "rtz"])
            }
            Opcode::Bitcast => {
                if !types.same_shape(ops[0], res[0]) {
                    return Err(format!("bitcast changes shape: {} to {}", self.show(ops[0]), self.show(res[0])));
                }
                match (self.kind(ops[0]), self.kind(res[0])) {
                    (Some(a), Some(b)) if a.bits() != b.bits() => Err(format!(
                        "bitcast changes bit width: {} to {}",
                        self.show(ops[0]),
                        self.show(res[0])
                    )),
                    (Some(_), None) | (None, Some(_)) => Err("bitcast between a pointer and a non-pointer".into()),
                    _ => Ok(()),
                }
            }
            Opcode::PtrToInt => {
                if types.pointee(ops[0]).is_none() {
                    return Err(format!("operand must be a pointer, got {}", self.show(ops[0])));
                }
                self.expect_shaped(res[0], ops[0], ScalarKind::I64)
            }
            Opcode::IntToPtr => {
                if self.kind(ops[0]) != Some(ScalarKind::I64) {
                    return Err(format!("operand must be i64, got {}", self.show(ops[0])));
                }
                if types.pointee(res[0]).is_none() || !types.same_shape(ops[0], res[0]) {
                    return Err(format!("result must be a pointer shaped like {}, got {}", self.show(ops[0]), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Addptr => {
                if types.pointee(ops[0]).is_none() {
                    return Err(format!("first operand must be a pointer, got {}", self.show(ops[0])));
                }
                if !types.same_shape(ops[0], ops[1]) || !self.kind(ops[1]).is_some_and(|k| k.is_int()) {
                    return Err(format!(
                        "offsets must be integers shaped like {}, got {}",
                        self.show(ops[0]),
                        self.show(ops[1])
                    ));
                }
                self.result_is(res[0], ops[0])
            }
            Opcode::Load => {
                let value = self.pointee_shaped(ops[0])?;
                self.mask(&ops, 1)?;
                if ops.len() == 3 && ops[2] != value {
                    return Err(format!("'other' must have the loaded type {}, got {}", self.show(value), self.show(ops[2])));
                }
                self.result_is(res[0], value)
            }
            Opcode::Store => {
                let value = self.pointee_shaped(ops[0])?;
                if ops[1] != value {
                    return Err(format!("stored value must be {}, got {}", self.show(value), self.show(ops[1])));
                }
                self.mask(&ops, 2)
            }
            Opcode::AtomicRmw => {
                let value = self.pointee_shaped(ops[0])?;
                if ops[1] != value {
                    return Err(format!("value must be {}, got {}", self.show(value), self.show(ops[1])));
                }
                self.mask(&ops, 2)?;
                self.one_of(op, "kind", &["add", "max", "min", "and", "or", "xor", "xchg"])?;
                self.atomic_attrs(op)?;
                self.result_is(res[0], value)
            }
            Opcode::AtomicCas => {
                let value = self.pointee_shaped(ops[0])?;
                if ops[1] != value || ops[2] != value {
                    return Err(format!("compare and value must be {}, got {}", self.show(value), self.list(&ops[1..])));
                }
                self.atomic_attrs(op)?;
                self.result_is(res[0], value)
            }
            Opcode::Broadcast | Opcode::ExpandDims | Opcode::Reshape | Opcode::Permute | Opcode::Join
            | Opcode::Split | Opcode::Cat | Opcode::Reduce | Opcode::Scan | Opcode::Dot | Opcode::MultipleOf
            | Opcode::MaxContiguous | Opcode::MaxConstancy => self.shape_rule(op, opcode, &ops, &res),
            Opcode::For => self.for_op(op, &ops, &res),
            Opcode::If => {
                self.expect_scalar(ops[0], ScalarKind::I1, "condition")?;
                let regions = self.f.ops[op].regions.clone();
                for (i, r) in regions.into_iter().enumerate() {
                    let which = if i == 0 { "then" } else { "else" };
                    self.block_args(r, &[], which)?;
                    self.yields(r, &res, which)?;
                }
                Ok(())
            }
            Opcode::While => {
                let regions = self.f.ops[op].regions.clone();
                self.block_args(regions[0], &ops, "before")?;
                if let Some(cond) = self.terminator(regions[0], Opcode::Condition) {
                    // This rule runs before the region's own ops are checked,
                    // so the terminator's arity is not known to be valid yet.
                    let c = self.operand_types(cond);
                    let Some(&flag) = c.first() else {
                        return Err("'condition' must start with an i1 scalar, got no operands".into());
                    };
                    if self.kind(flag) != Some(ScalarKind::I1) || self.m.types.is_tensor(flag) {
                        return Err(format!("'condition' must start with an i1 scalar, got {}", self.show(flag)));
                    }
                    if c[1..] != res[..] {
                        return Err(format!(
                            "'condition' forwards {} but the results are {}",
                            self.list(&c[1..]),
                            self.list(&res)
                        ));
                    }
                }
                self.block_args(regions[1], &res, "after")?;
                self.yields(regions[1], &ops, "after")
            }
            Opcode::Yield | Opcode::Condition => match parent {
                Some(_) => Ok(()),
                None => Err(format!("'{opcode}' outside an op's region")),
            },
            Opcode::Return => {
                if parent.is_some() {
                    return Err("'return' inside an op's region".into());
                }
                if ops != self.f.results {
                    return Err(format!(
                        "returns {} but the function's results are {}",
                        self.list(&ops),
                        self.list(&self.f.results)
                    ));
                }
                Ok(())
            }
            Opcode::Call => {
                let callee = self.attr(op, "callee").and_then(Attr::as_str).unwrap_or("");
                let Some(func) = self.m.func_by_name(callee) else {
                    return Err(format!("unknown callee @{callee}"));
                };
                let callee_f = &self.m.funcs[func];
                let params = callee_f.arg_types();
                if ops != params {
                    return Err(format!("arguments {} do not match @{callee}'s parameters {}", self.list(&ops), self.list(&params)));
                }
                if res != callee_f.results {
                    return Err(format!(
                        "results {} do not match @{callee}'s results {}",
                        self.list(&res),
                        self.list(&callee_f.results)
                    ));
                }
                Ok(())
            }
            Opcode::Assert => {
                if self.kind(ops[0]) != Some(ScalarKind::I1) {
                    return Err(format!("condition must be i1, got {}", self.show(ops[0])));
                }
                Ok(())
            }
            Opcode::Print | Opcode::Barrier => Ok(()),
            Opcode::InlineAsm => self.inline_asm(op, &ops, &res),
            Opcode::BlockLoad | Opcode::BlockStore | Opcode::BlockAtomic => self.block_access(op, opcode, &ops, &res),
            Opcode::TmaLoad | Opcode::TmaStore => self.tma_access(op, opcode, &ops, &res),
            Opcode::TensormapCreate => self.tensormap_create(op, &ops, &res),
            Opcode::Assume => self.assume(&ops),
            Opcode::Gather => self.gather(op, &ops, &res),
            Opcode::Histogram => self.histogram(op, &ops, &res),
            Opcode::ExternElementwise => self.extern_elementwise(op, &ops, &res),
        }
    }

    /// Operands and results share one shape; each asm invocation sees `pack`
    /// elements of each, in `asm_elems_per_reg`-packed registers that the
    /// constraint string must number exactly (outputs first).
    fn inline_asm(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let Some(&first) = res.first() else {
            return Err("needs at least one result".into());
        };
        let pack = self.attr(op, "pack").and_then(Attr::as_int).unwrap_or(0);
        if pack < 1 || !(pack as u64).is_power_of_two() || pack > 16 {
            return Err(format!("pack must be a power of two from 1 to 16, got {pack}"));
        }
        let pack = pack as u32;
        let types = &self.m.types;
        let mut regs = [0u32; 2];
        for (i, &t) in res.iter().chain(ops).enumerate() {
            if !types.same_shape(t, first) {
                return Err(format!("operands and results must share one shape: {} vs {}", self.show(t), self.show(first)));
            }
            match self.kind(t) {
                None | Some(ScalarKind::I1) => return Err(format!("elements of {} cannot be asm operands", self.show(t))),
                Some(k) => regs[(i >= res.len()) as usize] += pack / crate::ops::asm_elems_per_reg(k.bits(), pack),
            }
        }
        let numel: u64 = types.dims(first).iter().map(|&d| d as u64).product();
        if numel % pack as u64 != 0 {
            return Err(format!("pack {pack} does not divide the {numel} elements of {}", self.show(first)));
        }
        let cons = self.attr(op, "constraints").and_then(Attr::as_str).unwrap_or("");
        let list = crate::ops::asm_operand_constraints(cons);
        let outs = list.iter().take_while(|c| c.starts_with('=')).count() as u32;
        let ins = list.len() as u32 - outs;
        if list.iter().skip(outs as usize).any(|c| c.starts_with('=')) {
            return Err(format!("constraints {cons:?}: outputs (=...) must come before inputs"));
        }
        if outs != regs[0] || ins != regs[1] {
            return Err(format!(
                "constraints {cons:?} name {outs} outputs and {ins} inputs; pack {pack} needs {} and {}",
                regs[0], regs[1]
            ));
        }
        Ok(())
    }

    fn constant(&self, op: Op, ty: Type) -> Rule {
        let elem = self.m.types.elem(ty);
        let value = self.attr(op, "value");
        let ok = match (self.m.types.data(elem), value) {
            (TypeData::Ptr { .. }, Some(Attr::Int(_))) => true,
            (TypeData::Scalar(k), Some(Attr::Float(_))) => k.is_float(),
            (TypeData::Scalar(_), Some(Attr::Int(_))) => true,
            (TypeData::Scalar(k), Some(Attr::Bool(_))) => k.is_int(),
            _ => false,
        };
        if !ok {
            let kind = value.map(Attr::kind_name).unwrap_or("missing");
            return Err(format!("{kind} value cannot initialize {}", self.show(ty)));
        }
        Ok(())
    }

    /// A `local_alloc` buffer is only viewed or copied into (operand 0).
    fn buffer_uses(&self, op: Op) -> Rule {
        let d = &self.f.ops[op];
        for (i, &v) in d.operands.iter().enumerate() {
            let alloc = self.f.defining_op(v).is_some_and(|def| self.f.ops.get(def).is_some_and(|o| o.opcode == Opcode::LocalAlloc));
            let takes = match d.opcode {
                Opcode::LocalView | Opcode::AsyncCopy | Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval => i == 0,
                Opcode::TmaCopy => i == 0 || i == 2,
                _ => false,
            };
            if alloc && !takes {
                return Err(format!("operand {i} is a local_alloc buffer, which only local_view, async_copy, tma_copy and the mbarrier ops take"));
            }
        }
        Ok(())
    }

    /// Operand 0 of `op` is a `local_alloc` (codegen addresses its buffer).
    pub(super) fn allocated(&self, op: Op) -> Rule {
        let buf = self.f.ops[op].operands[0];
        match self.f.defining_op(buf).map(|d| self.f.ops[d].opcode) {
            Some(Opcode::LocalAlloc) => Ok(()),
            _ => Err("the buffer must be a local_alloc result".to_string()),
        }
    }

    /// `view` is one stage of multi-stage buffer `buf` ([stages, tile...]),
    /// or a 2-D stage's transpose.
    fn stage_of(&self, buf: Type, view: Type) -> Rule {
        let types = &self.m.types;
        let dims = types.dims(buf);
        let transposed = matches!((dims, types.dims(view)), (&[_, r, c], &[vr, vc]) if (vr, vc) == (c, r));
        if dims.len() < 2 || (types.dims(view) != &dims[1..] && !transposed) || types.elem(view) != types.elem(buf) {
            return Err(format!("a stage of {} is not {}", self.show(buf), self.show(view)));
        }
        Ok(())
    }

    pub(super) fn expect_scalar(&self, t: Type, k: ScalarKind, what: &str) -> Rule {
        if self.m.types.is_tensor(t) || self.kind(t) != Some(k) {
            return Err(format!("{what} must be {}, got {}", k.name(), self.show(t)));
        }
        Ok(())
    }
    fn expect_shaped(&self, t: Type, like: Type, k: ScalarKind) -> Rule {
        if !self.m.types.same_shape(t, like) || self.kind(t) != Some(k) {
            return Err(format!("result must be {} shaped like {}, got {}", k.name(), self.show(like), self.show(t)));
        }
        Ok(())
    }
    pub(super) fn result_is(&self, res: Type, expected: Type) -> Rule {
        if res != expected {
            return Err(format!("result type {} should be {}", self.show(res), self.show(expected)));
        }
        Ok(())
    }
    fn same_operands(&self, ops: &[Type]) -> Rule {
        for &t in &ops[1..] {
            if t != ops[0] {
                return Err(format!("operand types differ: {} vs {}", self.show(ops[0]), self.show(t)));
            }
        }
        Ok(())
    }
    fn elementwise(&self, ops: &[Type], res: &[Type], class: Class) -> Rule {
        self.same_operands(ops)?;
        let ok = match self.kind(ops[0]) {
            None => false,
            Some(k) => match class {
                Class::Numeric => true,
                Class::Int => k.is_int(),
                Class::Float => k.is_float(),
            },
        };
        if !ok {
            let want = match class {
                Class::Numeric => "integer or float",
                Class::Int => "integer",
                Class::Float => "float",
            };
            return Err(format!("operands must be {want}, got {}", self.show(ops[0])));
        }
        self.result_is(res[0], ops[0])
    }
    /// The value type a pointer operand loads or stores: its pointee, shaped like it.
    fn pointee_shaped(&self, p: Type) -> Result<Type, String> {
        let Some(pointee) = self.m.types.pointee(p) else {
            return Err(format!("pointer operand must be a pointer, got {}", self.show(p)));
        };
        let dims = self.m.types.dims(p);
        if dims.is_empty() {
            return Ok(pointee);
        }
        // Not interned means no value of the module has this type: name it.
        self.m.types.lookup(&TypeData::Tensor { dims: dims.to_vec(), elem: pointee }).ok_or_else(|| {
            let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            format!("values accessed through {} must be tensor<{}x{}>", self.show(p), d.join("x"), self.show(pointee))
        })
    }
    fn mask(&self, ops: &[Type], at: usize) -> Rule {
        if let Some(&m) = ops.get(at) {
            if !self.is_i1_like(m, ops[0]) {
                return Err(format!("mask must be i1 shaped like {}, got {}", self.show(ops[0]), self.show(m)));
            }
        }
        Ok(())
    }
    pub(super) fn atomic_attrs(&self, op: Op) -> Rule {
        self.one_of(op, "sem", &["relaxed", "acquire", "release", "acq_rel"])?;
        self.one_of(op, "scope", &["gpu", "cta", "sys"])
    }

    fn for_op(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let iv = ops[0];
        if self.m.types.is_tensor(iv) || !self.kind(iv).is_some_and(|k| k.is_int() && k != ScalarKind::I1) {
            return Err(format!("bounds must be integer scalars, got {}", self.show(iv)));
        }
        if ops[1] != iv || ops[2] != iv {
            return Err(format!("lb, ub and step must have one type, got {}", self.list(&ops[..3])));
        }
        let inits = &ops[3..];
        if res != inits {
            return Err(format!("results {} must match the inits {}", self.list(res), self.list(inits)));
        }
        let body = self.f.ops[op].regions[0];
        let mut args = vec![iv];
        args.extend_from_slice(inits);
        self.block_args(body, &args, "body")?;
        self.yields(body, inits, "body")
    }

    pub(super) fn block_args(&self, r: Region, expected: &[Type], which: &str) -> Rule {
        let args: Vec<Type> = self.f.region_block(r).args.iter().map(|&v| self.ty(v)).collect();
        if args != expected {
            return Err(format!("{which} region's block arguments {} should be {}", self.list(&args), self.list(expected)));
        }
        Ok(())
    }
    /// The region's last op if it is `opcode` (otherwise the region walk reports it).
    pub(super) fn terminator(&self, r: Region, opcode: Opcode) -> Option<Op> {
        let last = *self.f.region_block(r).ops.last()?;
        let od = self.f.ops.get(last)?;
        let ok = od.opcode == opcode && od.operands.iter().all(|&v| self.f.values.contains(v));
        ok.then_some(last)
    }
    pub(super) fn yields(&self, r: Region, expected: &[Type], which: &str) -> Rule {
        if let Some(y) = self.terminator(r, Opcode::Yield) {
            let got = self.operand_types(y);
            if got != expected {
                return Err(format!("{which} region yields {} but {} is expected", self.list(&got), self.list(expected)));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Class {
    Numeric,
    Int,
    Float,
}
