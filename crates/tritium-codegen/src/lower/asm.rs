//! `inline_asm` (tl.inline_asm_elementwise): the asm runs once per `pack`
//! consecutive registers a thread owns. Elements narrower than 32 bits are
//! packed into 32-bit registers (as Triton does), and each register crosses
//! into the asm in the type its constraint letter names (`r` i32, `h` i16,
//! `l` i64, `f` f32, `d` f64, `c` i8), so any element type meets any letter
//! of a width that can hold it.
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use tritium_ir::ops::{asm_elems_per_reg, asm_operand_constraints};
use tritium_ir::{Attr, Op};

use super::Lowering;
use crate::error::{CodegenError, Result};

/// How one operand or result crosses the asm boundary.
struct Slot<'c> {
    /// Element bits and how many elements share one register.
    bits: u32,
    per_reg: u32,
    elem: BasicTypeEnum<'c>,
}

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_inline_asm(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let attr_str = |k: &str| data.attrs.get(k).and_then(Attr::as_str).unwrap_or("");
        let (asm, cons) = (attr_str("asm").to_string(), attr_str("constraints").to_string());
        let pure = data.attrs.get("pure").and_then(Attr::as_bool).unwrap_or(false);
        let pack = data.attrs.get("pack").and_then(Attr::as_int).unwrap_or(1).max(1) as u32;
        let slot = |lw: &Self, v| -> Result<Slot<'c>> {
            let kind = lw.kind(v).ok_or_else(|| lw.unsupported(op, "pointer asm operands"))?;
            Ok(Slot { bits: kind.bits(), per_reg: asm_elems_per_reg(kind.bits(), pack), elem: lw.elem_type(op, lw.ty(v))? })
        };
        let outs: Vec<Slot<'c>> = data.results.iter().map(|&v| slot(self, v)).collect::<Result<_>>()?;
        let ins: Vec<Slot<'c>> = data.operands.iter().map(|&v| slot(self, v)).collect::<Result<_>>()?;
        let n = self.reg_count(data.results[0]);
        if n % pack as usize != 0 {
            return Err(self.unsupported(
                op,
                format!("pack={pack} but each thread holds {n} element(s) of this tensor; use a larger tensor or a smaller pack"),
            ));
        }
        let letters: Vec<char> = asm_operand_constraints(&cons)
            .iter()
            .map(|c| self.constraint_letter(op, c))
            .collect::<Result<_>>()?;
        let n_out: usize = outs.iter().map(|s| (pack / s.per_reg) as usize).sum();
        let n_in: usize = ins.iter().map(|s| (pack / s.per_reg) as usize).sum();
        if letters.len() != n_out + n_in {
            return Err(self.unsupported(op, format!("constraints {cons:?} name {} operands, the asm has {}", letters.len(), n_out + n_in)));
        }
        // types the asm sees, outputs first
        let mut reg_types = Vec::with_capacity(letters.len());
        for (s, count) in outs.iter().chain(&ins).map(|s| (s, pack / s.per_reg)) {
            for _ in 0..count {
                let i = reg_types.len();
                let letter = letters[i];
                reg_types.push(match letter.to_digit(10) {
                    // an input tied to an output takes its register
                    Some(d) if i >= n_out && (d as usize) < n_out => reg_types[d as usize],
                    Some(d) => {
                        return Err(self.invalid(op, format!("constraint '{d}' of operand {i} must name an output (0..{n_out})")))
                    }
                    None => self.letter_type(op, letter, s)?,
                });
            }
        }
        let ret: BasicTypeEnum<'c> = if n_out == 1 {
            reg_types[0]
        } else {
            self.llvm.context.struct_type(&reg_types[..n_out], false).into()
        };
        let operands: Vec<Vec<BasicValueEnum<'c>>> = data.operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let mut results: Vec<Vec<BasicValueEnum<'c>>> = vec![Vec::with_capacity(n); outs.len()];
        for g in 0..n / pack as usize {
            let mut args = Vec::with_capacity(n_in);
            let mut at = n_out;
            for (s, regs) in ins.iter().zip(&operands) {
                for r in 0..(pack / s.per_reg) as usize {
                    let first = g * pack as usize + r * s.per_reg as usize;
                    let word = self.pack_elems(&regs[first..first + s.per_reg as usize], s.bits)?;
                    args.push(self.to_reg(op, word, reg_types[at])?);
                    at += 1;
                }
            }
            let value = self
                .llvm
                .inline_asm(&asm, &cons, Some(ret), &args, !pure)?
                .ok_or_else(|| CodegenError::Internal("inline asm returned nothing".into()))?;
            let mut at = 0u32;
            for (s, out) in outs.iter().zip(results.iter_mut()) {
                for _ in 0..pack / s.per_reg {
                    let reg = if n_out == 1 {
                        value
                    } else {
                        self.llvm.builder.build_extract_value(value.into_struct_value(), at, "")?
                    };
                    at += 1;
                    out.extend(self.unpack_elems(op, reg, s)?);
                }
            }
        }
        for (&v, regs) in data.results.iter().zip(results) {
            self.values.insert(v, regs);
        }
        Ok(())
    }

    /// The register letter (or tied-operand digit) of one operand constraint.
    /// Only plain register operands are accepted: LLVM ends the process on
    /// constraints its backend cannot allocate (`{reg}`, `*m`, `x`, ...), so
    /// everything else is refused here, naming the constraint.
    fn constraint_letter(&self, op: Op, constraint: &str) -> Result<char> {
        let body = constraint.strip_prefix('=').map_or(constraint, |c| c.strip_prefix('&').unwrap_or(c));
        let mut chars = body.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_digit() && !constraint.starts_with('=') => Ok(c),
            (Some(c @ ('b' | 'c' | 'h' | 'r' | 'l' | 'f' | 'd' | 'q')), None) => Ok(c),
            (Some(c @ ('n' | 'i')), None) => Err(self.unsupported(op, format!("constraint '{c}' (immediates) cannot take tensor elements"))),
            _ => Err(self.invalid(
                op,
                format!("inline asm constraint '{constraint}': operands must be registers (r, h, l, c, b, f, d, q, optionally '=' or '=&', or an output's index)"),
            )),
        }
    }

    /// The LLVM type a register of constraint `letter` has; other letters keep
    /// the (packed) element type.
    fn letter_type(&self, _op: Op, letter: char, s: &Slot<'c>) -> Result<BasicTypeEnum<'c>> {
        let cx = self.llvm.context;
        Ok(match letter {
            'r' => cx.i32_type().into(),
            'h' => cx.i16_type().into(),
            'l' => cx.i64_type().into(),
            'c' => cx.i8_type().into(),
            'f' => cx.f32_type().into(),
            'd' => cx.f64_type().into(),
            _ if s.per_reg == 1 => s.elem,
            _ => cx.custom_width_int_type(s.bits * s.per_reg).into(),
        })
    }

    fn as_int(&self, v: BasicValueEnum<'c>) -> Result<IntValue<'c>> {
        Ok(match v {
            BasicValueEnum::IntValue(i) => i,
            BasicValueEnum::FloatValue(f) => {
                let w = f.get_type().get_bit_width();
                self.llvm.builder.build_bit_cast(f, self.llvm.context.custom_width_int_type(w), "")?.into_int_value()
            }
            other => return Err(CodegenError::Internal(format!("asm operand of type {}", other.get_type()))),
        })
    }

    /// `elems` (each `bits` wide) as one value, element 0 in the low bits.
    fn pack_elems(&self, elems: &[BasicValueEnum<'c>], bits: u32) -> Result<BasicValueEnum<'c>> {
        if elems.len() == 1 {
            return Ok(elems[0]);
        }
        let b = &self.llvm.builder;
        let wide = self.llvm.context.custom_width_int_type(bits * elems.len() as u32);
        let mut word = wide.const_zero();
        for (j, &e) in elems.iter().enumerate() {
            let x = b.build_int_z_extend(self.as_int(e)?, wide, "")?;
            let x = b.build_left_shift(x, wide.const_int((j as u32 * bits) as u64, false), "")?;
            word = b.build_or(word, x, "")?;
        }
        Ok(word.into())
    }

    /// Converts `v` to register type `to`: bit-preserving, zero-extending or
    /// truncating integers (the asm sees the low bits).
    fn to_reg(&self, op: Op, v: BasicValueEnum<'c>, to: BasicTypeEnum<'c>) -> Result<BasicValueEnum<'c>> {
        if v.get_type() == to {
            return Ok(v);
        }
        let b = &self.llvm.builder;
        let x = self.as_int(v)?;
        let width = x.get_type().get_bit_width();
        Ok(match to {
            BasicTypeEnum::IntType(t) if t.get_bit_width() > width => b.build_int_z_extend(x, t, "")?.into(),
            BasicTypeEnum::IntType(t) if t.get_bit_width() < width => {
                return Err(self.unsupported(op, format!("a {width}-bit asm operand does not fit a {}-bit register", t.get_bit_width())))
            }
            BasicTypeEnum::IntType(_) => x.into(),
            BasicTypeEnum::FloatType(t) if self.float_bits(t) == width => b.build_bit_cast(x, t, "")?,
            _ => return Err(self.unsupported(op, format!("a {width}-bit asm operand cannot travel in a {to} register"))),
        })
    }

    fn float_bits(&self, t: inkwell::types::FloatType<'c>) -> u32 {
        let cx = self.llvm.context;
        if t == cx.f16_type() {
            16
        } else if t == cx.f32_type() {
            32
        } else {
            64
        }
    }

    /// The `per_reg` elements one output register holds, in the element's type.
    fn unpack_elems(&self, op: Op, reg: BasicValueEnum<'c>, s: &Slot<'c>) -> Result<Vec<BasicValueEnum<'c>>> {
        let b = &self.llvm.builder;
        let x = self.as_int(reg)?;
        let need = s.bits * s.per_reg;
        if x.get_type().get_bit_width() < need {
            return Err(self.unsupported(op, format!("a {}-bit asm output cannot hold {need} bits of results", x.get_type().get_bit_width())));
        }
        let et = self.llvm.context.custom_width_int_type(s.bits);
        let mut out = Vec::with_capacity(s.per_reg as usize);
        for j in 0..s.per_reg {
            let part = b.build_right_shift(x, x.get_type().const_int((j * s.bits) as u64, false), false, "")?;
            let part = b.build_int_truncate_or_bit_cast(part, et, "")?;
            out.push(if s.elem.is_float_type() { b.build_bit_cast(part, s.elem, "")? } else { part.into() });
        }
        Ok(out)
    }
}
