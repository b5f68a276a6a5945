//! `print` (device_print) and `assert` (device_assert): one printf line per
//! element, `pid (x, y, z) idx (i, j)<prefix><value>` as Triton prints it, from
//! the thread that owns the element (copies and scalars print once); a failed
//! assertion calls the target's assert-fail hook with the op's location.
use inkwell::values::{BasicValueEnum, IntValue};
use tritium_ir::{Attr, Op, ScalarKind, Value};

use super::Lowering;
use crate::error::{CodegenError, Result};
use crate::target::Axis;

/// printf conversion and promoted value of one element.
struct Formatted<'c> {
    spec: &'static str,
    value: BasicValueEnum<'c>,
}

impl<'a, 'c> Lowering<'a, 'c> {
    fn enclosing_fn(&self) -> Result<inkwell::values::FunctionValue<'c>> {
        self.llvm
            .builder
            .get_insert_block()
            .and_then(|bb| bb.get_parent())
            .ok_or_else(|| CodegenError::Internal("no current function".into()))
    }

    /// Runs `body` only in threads where `cond` holds (always when None).
    fn when(&mut self, cond: Option<IntValue<'c>>, name: &str, body: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let Some(cond) = cond else { return body(self) };
        let f = self.enclosing_fn()?;
        let then = self.llvm.context.append_basic_block(f, name);
        let after = self.llvm.context.append_basic_block(f, &format!("{name}_end"));
        self.llvm.builder.build_conditional_branch(cond, then, after)?;
        self.llvm.builder.position_at_end(then);
        body(self)?;
        // the body may end in a terminator of its own (assert's unreachable)
        if self.llvm.builder.get_insert_block().and_then(|bb| bb.get_terminator()).is_none() {
            self.llvm.builder.build_unconditional_branch(after)?;
        }
        self.llvm.builder.position_at_end(after);
        Ok(())
    }

    /// The printf form of `v` (an element of kind `kind`, None = pointer).
    fn format_elem(&self, op: Op, v: BasicValueEnum<'c>, kind: Option<ScalarKind>, hex: bool) -> Result<Formatted<'c>> {
        let b = &self.llvm.builder;
        let cx = self.llvm.context;
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let Some(kind) = kind else {
            let p = b.build_ptr_to_int(v.into_pointer_value(), i64t, "")?;
            return Ok(Formatted { spec: "0x%llx", value: p.into() });
        };
        if kind.is_fp8() {
            return Err(self.unsupported(op, format!("printing {} values", kind.name())));
        }
        let bits = kind.bits();
        if hex {
            // the element's bits, zero-extended to the printf word
            let as_int = if kind.is_float() && kind != ScalarKind::BF16 {
                b.build_bit_cast(v, cx.custom_width_int_type(bits), "")?.into_int_value()
            } else {
                v.into_int_value()
            };
            return Ok(if bits == 64 {
                Formatted { spec: "0x%llx", value: as_int.into() }
            } else {
                Formatted { spec: "0x%x", value: b.build_int_z_extend_or_bit_cast(as_int, i32t, "")?.into() }
            });
        }
        let f64t = cx.f64_type();
        Ok(match kind {
            ScalarKind::F16 | ScalarKind::F32 => {
                Formatted { spec: "%f", value: b.build_float_ext(v.into_float_value(), f64t, "")?.into() }
            }
            ScalarKind::BF16 => {
                let f = self.bf16_to_f32(v)?.into_float_value();
                Formatted { spec: "%f", value: b.build_float_ext(f, f64t, "")?.into() }
            }
            ScalarKind::F64 => Formatted { spec: "%f", value: v },
            ScalarKind::I64 => Formatted { spec: "%lld", value: v },
            ScalarKind::U64 => Formatted { spec: "%llu", value: v },
            ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 => {
                Formatted { spec: "%d", value: b.build_int_s_extend_or_bit_cast(v.into_int_value(), i32t, "")?.into() }
            }
            // i1 prints 0 or 1, as the interpreter's bools convert
            _ => Formatted { spec: "%u", value: b.build_int_z_extend_or_bit_cast(v.into_int_value(), i32t, "")?.into() },
        })
    }

    pub(super) fn lower_print(&mut self, op: Op) -> Result<()> {
        // a target without device printing says so at the user's line
        self.print_op(op).map_err(|e| match e {
            CodegenError::Unsupported { reason, .. } => self.unsupported(op, reason),
            e => e,
        })
    }

    fn print_op(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let prefix = data.attrs.get("prefix").and_then(Attr::as_str).unwrap_or("").replace('%', "%%");
        let hex = data.attrs.get("hex").and_then(Attr::as_bool).unwrap_or(false);
        let operands: Vec<Value> = data.operands.clone();
        let pid: Vec<BasicValueEnum> = [Axis::X, Axis::Y, Axis::Z]
            .into_iter()
            .map(|a| Ok(self.target.block_id(self.llvm, a)?.into()))
            .collect::<Result<_>>()?;
        let head = "pid (%u, %u, %u)";
        if operands.is_empty() {
            let once = self.owner_pred_scalar()?;
            return self.when(Some(once), "print", |lw| lw.target.printf(lw.llvm, &format!("{head}{prefix}\n"), &pid));
        }
        for (k, &v) in operands.iter().enumerate() {
            let layout = self.tl(v);
            let kind = self.kind(v);
            let regs = self.regs(v)?.clone();
            let operand_tag = if operands.len() > 1 { format!("(operand {k}) ") } else { String::new() };
            let owner = self.owner_pred(v)?;
            self.when(owner, "print", |lw| {
                for (r, &e) in regs.iter().enumerate() {
                    let mut args = pid.clone();
                    let mut fmt = head.to_string();
                    if let Some(l) = &layout {
                        let coords = lw.coords(l, r as u32)?;
                        let specs: Vec<&str> = coords.iter().map(|_| "%u").collect();
                        fmt.push_str(&format!(" idx ({})", specs.join(", ")));
                        args.extend(coords.into_iter().map(BasicValueEnum::from));
                    }
                    let f = lw.format_elem(op, e, kind, hex)?;
                    fmt.push_str(&format!("{prefix}{operand_tag}{}\n", f.spec));
                    args.push(f.value);
                    lw.target.printf(lw.llvm, &fmt, &args)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    fn owner_pred_scalar(&self) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        Ok(b.build_int_compare(inkwell::IntPredicate::EQ, self.tid, self.i32_const(0), "")?)
    }

    pub(super) fn lower_assert(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let cond = data.operands[0];
        if self.kind(cond) != Some(ScalarKind::I1) {
            return Err(self.unsupported(op, "assert needs an i1 condition"));
        }
        let msg = data.attrs.get("msg").and_then(Attr::as_str).unwrap_or("").to_string();
        let loc = self.module.loc_of(self.func_id, op);
        let regs = self.regs(cond)?.clone();
        let b = &self.llvm.builder;
        // one branch per thread: did any element it owns fail?
        let mut failed: Option<IntValue> = None;
        for r in regs {
            let bad = b.build_not(r.into_int_value(), "")?;
            failed = Some(match failed {
                Some(f) => b.build_or(f, bad, "")?,
                None => bad,
            });
        }
        let Some(mut failed) = failed else { return Ok(()) };
        if let Some(o) = self.owner_pred(cond)? {
            failed = self.llvm.builder.build_and(failed, o, "")?;
        }
        let function = self.func.name.clone();
        self.when(Some(failed), "assert_fail", |lw| lw.target.assert_fail(lw.llvm, &msg, &loc.file, loc.line, &function))
    }
}
