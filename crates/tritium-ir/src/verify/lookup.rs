//! Rules of the ops that read elements by value rather than by position
//! (`gather`, `histogram`), of `assume` and of `extern_elementwise` calls.
use crate::attrs::Attr;
use crate::entities::{Op, Type};
use crate::types::ScalarKind;

use super::ops::Rule;
use super::Checker;

impl Checker<'_> {
    /// `gather(src, index) {axis}`: index has src's rank and src's size on
    /// every other axis; the result is shaped like index, with src's elements.
    pub(super) fn gather(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let (src, index) = (ops[0], ops[1]);
        let (sd, id) = (types.dims(src), types.dims(index));
        if sd.is_empty() || id.is_empty() {
            return Err(format!("source and index must be tensors, got {} and {}", self.show(src), self.show(index)));
        }
        if !self.kind(index).is_some_and(|k| k.is_int() && k != ScalarKind::I1) {
            return Err(format!("index must hold integers, got {}", self.show(index)));
        }
        let axis = self.attr(op, "axis").and_then(Attr::as_int).unwrap_or(-1);
        if sd.len() != id.len() || axis < 0 || axis as usize >= sd.len() {
            return Err(format!("axis {axis} and ranks of {} and {} do not fit", self.show(src), self.show(index)));
        }
        if let Some(d) = (0..sd.len()).find(|&d| d != axis as usize && sd[d] != id[d]) {
            return Err(format!("index dim {d} must equal the source's ({} vs {})", id[d], sd[d]));
        }
        if types.dims(res[0]) != id || types.elem(res[0]) != types.elem(src) {
            return Err(format!("result must be shaped like {} with the elements of {}, got {}", self.show(index),
                               self.show(src), self.show(res[0])));
        }
        Ok(())
    }

    /// `histogram(input[, mask]) {num_bins}`: 1-D integers (mask: i1 shaped
    /// like them) into tensor<num_bins x i32>.
    pub(super) fn histogram(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let input = ops[0];
        if types.dims(input).len() != 1 || !self.kind(input).is_some_and(|k| k.is_int() && k != ScalarKind::I1) {
            return Err(format!("input must be a 1-D tensor of integers, got {}", self.show(input)));
        }
        if let Some(&mask) = ops.get(1) {
            if !types.same_shape(mask, input) || self.kind(mask) != Some(ScalarKind::I1) {
                return Err(format!("mask must be i1 shaped like {}, got {}", self.show(input), self.show(mask)));
            }
        }
        let bins = self.attr(op, "num_bins").and_then(Attr::as_int).unwrap_or(0);
        if bins < 1 || !(bins as u64).is_power_of_two() {
            return Err(format!("num_bins must be a positive power of two, got {bins}"));
        }
        if types.dims(res[0]) != [bins as u32] || self.kind(res[0]) != Some(ScalarKind::I32) {
            return Err(format!("result must be tensor<{bins}xi32>, got {}", self.show(res[0])));
        }
        Ok(())
    }

    /// `assume(cond)`: an i1 scalar or tensor.
    pub(super) fn assume(&self, ops: &[Type]) -> Rule {
        if self.kind(ops[0]) != Some(ScalarKind::I1) {
            return Err(format!("condition must be i1, got {}", self.show(ops[0])));
        }
        Ok(())
    }

    /// `extern_elementwise(args...) {symbol, lib, pure}`: numeric operands
    /// and result of one shape (all scalars, or tensors of equal dims).
    pub(super) fn extern_elementwise(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        if self.attr(op, "symbol").and_then(Attr::as_str).is_none_or(str::is_empty) {
            return Err("symbol must name a function".into());
        }
        for &t in ops.iter().chain(res) {
            if self.kind(t).is_none() || !types.same_shape(t, res[0]) {
                return Err(format!("operands and result must be numbers of one shape: {} vs {}", self.show(t),
                                   self.show(res[0])));
            }
        }
        Ok(())
    }
}
