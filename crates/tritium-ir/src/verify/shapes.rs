//! Shape rules: broadcast, expand_dims, reshape, permute, join, split, cat,
//! reduce/scan (with their combine regions), dot, and the hint ops.
use crate::attrs::Attr;
use crate::entities::{Op, Type};
use crate::ops::Opcode;

use super::ops::Rule;
use super::Checker;

impl Checker<'_> {
    pub(super) fn shape_rule(&self, op: Op, opcode: Opcode, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let x = ops[0];
        let (xd, rd) = (types.dims(x), types.dims(res[0]));
        let same_elem = types.elem(x) == types.elem(res[0]);
        let int = |key: &str| self.attr(op, key).and_then(Attr::as_int).unwrap_or(0);
        match opcode {
            Opcode::Broadcast => {
                self.tensor_operand(x)?;
                let ok = same_elem
                    && types.is_tensor(res[0])
                    && xd.len() == rd.len()
                    && xd.iter().zip(rd).all(|(&a, &b)| a == b || a == 1);
                if !ok {
                    return Err(format!("cannot broadcast {} to {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::ExpandDims => {
                let axis = int("axis");
                if axis < 0 || axis as usize > xd.len() {
                    return Err(format!("axis {axis} out of range for rank {}", xd.len()));
                }
                let mut want = xd.to_vec();
                want.insert(axis as usize, 1);
                if !same_elem || rd != want.as_slice() {
                    return Err(format!("expand_dims of {} at axis {axis} cannot give {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Reshape => {
                self.tensor_operand(x)?;
                let count = |d: &[u32]| d.iter().map(|&v| v as u64).product::<u64>();
                if !same_elem || !types.is_tensor(res[0]) || count(xd) != count(rd) {
                    return Err(format!("cannot reshape {} to {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Permute => {
                self.tensor_operand(x)?;
                let order = self.attr(op, "order").and_then(Attr::as_int_array).unwrap_or(&[]);
                let mut seen = vec![false; xd.len()];
                let valid = order.len() == xd.len()
                    && order.iter().all(|&o| {
                        let fresh = o >= 0 && (o as usize) < seen.len() && !seen[o as usize];
                        if fresh {
                            seen[o as usize] = true;
                        }
                        fresh
                    });
                if !valid {
                    return Err(format!("order {order:?} is not a permutation of {} dims", xd.len()));
                }
                let want: Vec<u32> = order.iter().map(|&o| xd[o as usize]).collect();
                if !same_elem || rd != want.as_slice() {
                    return Err(format!("permute of {} by {order:?} cannot give {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Join => {
                if ops[0] != ops[1] {
                    return Err(format!("operand types differ: {} vs {}", self.show(ops[0]), self.show(ops[1])));
                }
                let mut want = xd.to_vec();
                want.push(2);
                if !same_elem || rd != want.as_slice() {
                    return Err(format!("join of {} cannot give {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Split => {
                self.tensor_operand(x)?;
                if xd.last() != Some(&2) {
                    return Err(format!("last dim of {} must be 2", self.show(x)));
                }
                let want = &xd[..xd.len() - 1];
                for &r in res {
                    let ok = types.elem(r) == types.elem(x) && types.dims(r) == want && (types.is_tensor(r) != want.is_empty());
                    if !ok {
                        return Err(format!("split of {} cannot give {}", self.show(x), self.show(r)));
                    }
                }
                Ok(())
            }
            Opcode::Cat => {
                self.tensor_operand(x)?;
                if ops[0] != ops[1] {
                    return Err(format!("operand types differ: {} vs {}", self.show(ops[0]), self.show(ops[1])));
                }
                let mut want = xd.to_vec();
                want[0] = want[0].saturating_mul(2);
                if !same_elem || rd != want.as_slice() {
                    return Err(format!("cat of two {} cannot give {}", self.show(x), self.show(res[0])));
                }
                Ok(())
            }
            Opcode::Reduce | Opcode::Scan => self.combine(op, opcode, ops, res),
            Opcode::Dot => self.dot(ops, res),
            Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy => {
                // Hints: the result is the operand, `values` has one entry per dim.
                self.result_is(res[0], x)?;
                let values = self.attr(op, "values").and_then(Attr::as_int_array).unwrap_or(&[]);
                let want = xd.len().max(1);
                if values.len() != want {
                    return Err(format!("'values' needs {want} entries, got {}", values.len()));
                }
                Ok(())
            }
            other => unreachable!("verify::ops routes only shape ops here, not {other}"),
        }
    }

    fn tensor_operand(&self, t: Type) -> Rule {
        if !self.m.types.is_tensor(t) {
            return Err(format!("operand must be a tensor, got {}", self.show(t)));
        }
        Ok(())
    }

    fn combine(&self, op: Op, opcode: Opcode, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let dims = types.dims(ops[0]);
        for &t in ops {
            self.tensor_operand(t)?;
            if types.dims(t) != dims {
                return Err(format!("operands must share one shape: {} vs {}", self.show(ops[0]), self.show(t)));
            }
        }
        let axis = self.attr(op, "axis").and_then(Attr::as_int).unwrap_or(-1);
        if axis < 0 || axis as usize >= dims.len() {
            return Err(format!("axis {axis} out of range for rank {}", dims.len()));
        }
        if res.len() != ops.len() {
            return Err(format!("{} operands but {} results", ops.len(), res.len()));
        }
        for (&o, &r) in ops.iter().zip(res) {
            let ok = if opcode == Opcode::Scan {
                o == r
            } else {
                let mut want = dims.to_vec();
                want.remove(axis as usize);
                types.elem(r) == types.elem(o) && types.dims(r) == want.as_slice() && types.is_tensor(r) != want.is_empty()
            };
            if !ok {
                return Err(format!("{opcode} of {} along axis {axis} cannot give {}", self.show(o), self.show(r)));
            }
        }
        let elems: Vec<Type> = ops.iter().map(|&t| types.elem(t)).collect();
        let mut args = elems.clone();
        args.extend_from_slice(&elems);
        let region = self.f.ops[op].regions[0];
        self.block_args(region, &args, "combine")?;
        self.yields(region, &elems, "combine")
    }

    fn dot(&self, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let (a, b, c) = (types.dims(ops[0]), types.dims(ops[1]), types.dims(ops[2]));
        let rank = a.len();
        if !(rank == 2 || rank == 3) || b.len() != rank || c.len() != rank {
            return Err(format!("operands must be rank-2 (or batched rank-3) tensors, got {}", self.list(ops)));
        }
        let batch_ok = rank == 2 || (a[0] == b[0] && a[0] == c[0]);
        let (m, k) = (a[rank - 2], a[rank - 1]);
        let (k2, n) = (b[rank - 2], b[rank - 1]);
        if !batch_ok || k != k2 || c[rank - 2] != m || c[rank - 1] != n {
            return Err(format!("shapes do not compose: {} x {} -> {}", self.show(ops[0]), self.show(ops[1]), self.show(ops[2])));
        }
        for &t in ops {
            if self.kind(t).is_none() {
                return Err(format!("operands must be numeric, got {}", self.show(t)));
            }
        }
        self.result_is(res[0], ops[2])
    }
}
