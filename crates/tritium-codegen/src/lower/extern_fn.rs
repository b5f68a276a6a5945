//! `extern_elementwise`: a library function (libdevice's `__nv_*`) called
//! on each element. The target lowers what is one instruction itself
//! (target/libdevice.rs); otherwise it calls the library and links it later
//! (libdevice.10.bc); without the library, tritium's own math library
//! (mathlib/) covers exp, exp2, log, log2, sin, cos and erf; anything else is
//! an error that names the function.
use inkwell::values::BasicValueEnum;
use tritium_ir::{Attr, Op};

use super::math::mathlib::{self, MathFn};
use super::{Lowering, Regs};
use crate::error::Result;
use crate::target::ApproxFn;

/// The mathlib function that is libdevice's `symbol` (f32 `__nv_expf` or f64 `__nv_exp`).
fn own_math(symbol: &str) -> Option<MathFn> {
    let s = symbol.strip_prefix("__nv_")?;
    Some(match s.strip_suffix('f').filter(|_| s != "erf").unwrap_or(s) {
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "log" => MathFn::Log,
        "log2" => MathFn::Log2,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
        "erf" => MathFn::Erf,
        _ => return None,
    })
}

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_extern(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let symbol = data.attrs.get("symbol").and_then(Attr::as_str).unwrap_or("").to_string();
        let name = data.attrs.get("name").and_then(Attr::as_str).unwrap_or(&symbol).to_string();
        let res = data.results[0];
        let ret = self.elem_type(op, self.ty(res))?;
        let operands: Vec<Regs<'c>> = data.operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let mut out = Vec::with_capacity(self.reg_count(res));
        for r in 0..self.reg_count(res) {
            let args: Vec<BasicValueEnum<'c>> = operands.iter().map(|regs| regs[r.min(regs.len() - 1)]).collect();
            out.push(self.library_call(op, &symbol, &name, &args, ret)?);
        }
        self.set(op, out);
        Ok(())
    }

    fn library_call(
        &self,
        op: Op,
        symbol: &str,
        name: &str,
        args: &[BasicValueEnum<'c>],
        ret: inkwell::types::BasicTypeEnum<'c>,
    ) -> Result<BasicValueEnum<'c>> {
        if let Some(v) = self.target.lower_library_call(self.llvm, symbol, args, ret)? {
            return Ok(v);
        }
        let why = match self.target.call_library(self.llvm, symbol, args, ret) {
            Ok(call) => return call,
            Err(why) => why,
        };
        if let (Some(f), Some(&x)) = (own_math(symbol), args.first()) {
            let fast_exp2 = |v: inkwell::values::FloatValue<'c>| {
                Ok(self.target.approx_f32(self.llvm, ApproxFn::Exp2, v.into())?.into_float_value())
            };
            return Ok(mathlib::call(self.llvm, f, x.into_float_value(), &fast_exp2)?.into());
        }
        Err(self.invalid(op, format!("`{name}` ({symbol}) cannot be compiled: {why}")))
    }
}
