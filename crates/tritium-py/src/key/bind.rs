//! The Rust binder: a launch's positional and keyword arguments into
//! parameter order with defaults filled in, launch options set aside,
//! exactly as the generated Python binder does; anything else (a bad call,
//! an unusual keyword) is Python's to bind or reject.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::{KeyPlan, Keyed};

/// `bind`'s result: (key, arguments in parameter order, launch options).
type Bound3<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>, Bound<'py, PyAny>);

impl KeyPlan {
    pub(super) fn bind_fast<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound3<'py>>> {
        let py = args.py();
        let kwargs = kwargs.filter(|k| !k.is_empty());
        let options = kwargs.map(|_| PyDict::new(py));
        let Some(bound) = self.bind_args(args, kwargs, options.as_ref())? else {
            return Ok(None);
        };
        let mut k = Keyed::new();
        if !self.keyed(&bound, &mut k)? {
            return Ok(None);
        }
        let options = match options {
            Some(o) => o.into_any(),
            None => self.no_options.bind(py).clone(),
        };
        Ok(Some((self.python_key(&k, &bound)?, bound, options)))
    }

    /// The arguments in parameter order (defaults filled in), or None for
    /// whatever Python must bind or reject. Launch options among `kwargs`
    /// go to `options`; without it they make the call Python's.
    pub(crate) fn bind_args<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = args.py();
        let n = self.params.len();
        let kwargs = kwargs.filter(|k| !k.is_empty());
        if kwargs.is_none() && args.len() == n {
            return Ok(Some(args.clone()));
        }
        if args.len() > n {
            return Ok(None);
        }
        let mut slots: Vec<Option<Bound<'py, PyAny>>> = args.iter().map(Some).collect();
        slots.resize(n, None);
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                let Ok(k) = k.downcast_into::<PyString>() else {
                    return Ok(None);
                };
                // call-site keywords are usually the very string objects of the parameter names
                let i = match self.names.iter().position(|nm| nm.bind(py).is(&k)) {
                    Some(i) => Some(i),
                    None => {
                        let ks = k.to_cow()?;
                        self.names.iter().position(|nm| nm.bind(py).to_cow().map(|c| c == ks).unwrap_or(false))
                    }
                };
                match (i, options) {
                    (Some(i), _) if slots[i].is_none() => slots[i] = Some(v),
                    (Some(_), _) => return Ok(None),
                    (None, Some(opts)) if self.options.bind(py).contains(&k)? => opts.set_item(k, v)?,
                    (None, _) => return Ok(None),
                }
            }
        }
        let mut full = Vec::with_capacity(n);
        for (slot, d) in slots.into_iter().zip(&self.defaults) {
            match (slot, d) {
                (Some(v), _) => full.push(v),
                (None, Some(d)) => full.push(d.bind(py).clone()),
                (None, None) => return Ok(None),
            }
        }
        Ok(Some(PyTuple::new(py, full)?))
    }
}
