//! The specialization properties a key tests per argument kind: divisibility
//! and equality by built-in arithmetic (sorted by kind once, so the
//! per-launch loops do not branch on it), any other property by its Python
//! predicate. Each test sets its bit of the argument's code.
use pyo3::prelude::*;

/// Tests for one argument kind, each setting its bit: the built-in ones
/// sorted by kind when the plan is built (so the per-launch loops do not
/// branch on it), then Python predicates.
pub(super) struct Tests {
    /// divisibility by a power of two n: (n - 1, bit), a mask test (also
    /// right for negative values in two's complement)
    pow2: Vec<(u64, u64)>,
    /// divisibility by another n: (n, bit)
    div: Vec<(i128, u64)>,
    /// equality with n: (n, bit)
    eq: Vec<(i128, u64)>,
    pub(super) slow: Vec<(u64, PyObject)>,
}

impl Tests {
    pub(super) fn parse(fast: Vec<(u64, bool, i64)>, slow: Vec<(u64, PyObject)>) -> PyResult<Self> {
        let mut t = Tests { pow2: Vec::new(), div: Vec::new(), eq: Vec::new(), slow };
        for (bit, eq, n) in fast {
            match (eq, n) {
                (true, _) => t.eq.push((n as i128, bit)),
                (false, 0) => return Err(pyo3::exceptions::PyValueError::new_err("divisibility by 0")),
                (false, _) if n > 0 && (n as u64).is_power_of_two() => t.pow2.push((n as u64 - 1, bit)),
                (false, _) => t.div.push((n as i128, bit)),
            }
        }
        Ok(t)
    }

    /// Whether any built-in test applies (floats take none on the fast path).
    pub(super) fn has_builtin(&self) -> bool {
        !(self.pow2.is_empty() && self.div.is_empty() && self.eq.is_empty())
    }

    #[inline(always)]
    pub(super) fn mask(&self, v: i128, arg: &Bound<'_, PyAny>) -> PyResult<u64> {
        let mut m = 0;
        for &(mask, bit) in &self.pow2 {
            if (v as u64) & mask == 0 {
                m |= bit;
            }
        }
        for &(n, bit) in &self.div {
            if v.rem_euclid(n) == 0 {
                m |= bit;
            }
        }
        for &(n, bit) in &self.eq {
            if v == n {
                m |= bit;
            }
        }
        for (bit, pred) in &self.slow {
            if pred.bind(arg.py()).call1((arg,))?.is_truthy()? {
                m |= bit;
            }
        }
        Ok(m)
    }
}
