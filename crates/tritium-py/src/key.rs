//! The launch-key fast path: `KeyPlan` is built once per (kernel, backend) by
//! python/tritium/runtime/specialization.py and computes the same key as its
//! `key_python`, a few attribute reads per argument. Anything unusual (an
//! unseen dtype, a numpy scalar, a huge int) returns None and Python decides.
use std::cell::RefCell;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

/// The code of a parameter whose key entry is an object (a constexpr).
const CONSTEXPR_SLOT: u64 = u64::MAX;

/// A built-in test: `eq` (value == n) or divisibility (value % n == 0).
struct Fast {
    bit: u64,
    eq: bool,
    n: i128,
    /// n - 1 when n is a power of two: divisibility is then a mask test
    /// (also right for negative values in two's complement)
    pow2_mask: Option<u64>,
}

/// Tests for one argument kind: built-in ones, then Python predicates.
struct Tests {
    fast: Vec<Fast>,
    slow: Vec<(u64, PyObject)>,
}

impl Tests {
    fn parse(fast: Vec<(u64, bool, i64)>, slow: Vec<(u64, PyObject)>) -> PyResult<Self> {
        if fast.iter().any(|f| !f.1 && f.2 == 0) {
            return Err(pyo3::exceptions::PyValueError::new_err("divisibility by 0"));
        }
        let fast = fast
            .into_iter()
            .map(|(bit, eq, n)| {
                let pow2_mask =
                    (!eq && n > 0 && (n as u64).is_power_of_two()).then(|| n as u64 - 1);
                Fast {
                    bit,
                    eq,
                    n: n as i128,
                    pow2_mask,
                }
            })
            .collect();
        Ok(Tests { fast, slow })
    }

    fn mask(&self, v: i128, arg: &Bound<'_, PyAny>) -> PyResult<u64> {
        let mut m = 0;
        for f in &self.fast {
            let holds = if f.eq {
                v == f.n
            } else if let Some(m) = f.pow2_mask {
                (v as u64) & m == 0
            } else {
                v.rem_euclid(f.n) == 0
            };
            if holds {
                m |= f.bit;
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

struct Param {
    constexpr: bool,
    ptr: Tests,
    int: Tests,
    float: Tests,
}

type ParamSpec = (
    bool,
    Vec<(u64, bool, i64)>,
    Vec<(u64, PyObject)>,
    Vec<(u64, bool, i64)>,
    Vec<(u64, PyObject)>,
    Vec<(u64, bool, i64)>,
    Vec<(u64, PyObject)>,
);

#[pyclass(frozen, module = "tritium._core")]
pub struct KeyPlan {
    params: Vec<Param>,
    ptr_tid: Py<PyDict>,
    constexpr_cls: PyObject,
    tid_i1: u64,
    tid_f32: u64,
    tid_int: [u64; 3],
    shift: u32,
    // caches filled on first sight; the GIL guards them (no atomics per launch)
    types: GILProtected<RefCell<Vec<(Py<PyType>, TypeInfo)>>>,
    dtypes: GILProtected<RefCell<Vec<(PyObject, u64)>>>,
    names: Vec<Py<PyString>>,
    defaults: Vec<Option<PyObject>>,
    options: Py<PyAny>,
    fallback: PyObject,
}

/// Outcome of keying one argument: an entry, or "let Python do it".
enum Entry<'py> {
    Code(u64),
    Obj(Bound<'py, PyAny>),
    Fallback,
}

/// How to read a tensor-like type's address; found once per Python type.
#[derive(Clone, Copy, PartialEq)]
enum Addr {
    DataPtr,
    Cuda,
    Host,
    None,
}

#[derive(Clone, Copy)]
struct TypeInfo {
    addr: Addr,
    has_ndim: bool,
}

/// Python ints without the slow 128-bit conversion (abi3 has no fast path for it).
fn int_value(v: &Bound<'_, PyAny>) -> Option<i128> {
    if let Ok(x) = v.extract::<i64>() {
        return Some(x as i128);
    }
    v.extract::<u64>().ok().map(|x| x as i128)
}

impl KeyPlan {
    fn type_info(&self, arg: &Bound<'_, PyAny>) -> PyResult<TypeInfo> {
        let py = arg.py();
        let ty = arg.get_type();
        if let Some((_, info)) = self
            .types
            .get(py)
            .borrow()
            .iter()
            .find(|(t, _)| t.bind(py).is(&ty))
        {
            return Ok(*info);
        }
        // no borrow is held while Python runs (hasattr may run arbitrary code)
        let addr = if ty.hasattr(intern!(py, "data_ptr"))? {
            Addr::DataPtr
        } else if ty.hasattr(intern!(py, "__cuda_array_interface__"))? {
            Addr::Cuda
        } else if ty.hasattr(intern!(py, "__array_interface__"))? {
            Addr::Host
        } else {
            Addr::None
        };
        let info = TypeInfo {
            addr,
            has_ndim: ty.hasattr(intern!(py, "ndim"))?,
        };
        let mut seen = self.types.get(py).borrow_mut();
        if seen.len() < 64 {
            seen.push((ty.unbind(), info));
        }
        Ok(info)
    }

    /// The pointer type id of a framework dtype: identity hits first (dtype
    /// objects are singletons in torch and numpy), then the shared dict.
    fn dtype_tid(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let py = dt.py();
        if let Some((_, tid)) = self
            .dtypes
            .get(py)
            .borrow()
            .iter()
            .find(|(d, _)| d.bind(py).is(dt))
        {
            return Ok(Some(*tid));
        }
        let Some(tid) = self.ptr_tid.bind(py).get_item(dt)? else {
            return Ok(None);
        };
        let tid: u64 = tid.extract()?;
        let mut seen = self.dtypes.get(py).borrow_mut();
        if seen.len() < 32 {
            seen.push((dt.clone().unbind(), tid));
        }
        Ok(Some(tid))
    }

    fn address(arg: &Bound<'_, PyAny>, how: Addr) -> PyResult<Option<i128>> {
        let py = arg.py();
        let name = match how {
            Addr::DataPtr => return Ok(int_value(&arg.call_method0(intern!(py, "data_ptr"))?)),
            Addr::Cuda => intern!(py, "__cuda_array_interface__"),
            Addr::Host => intern!(py, "__array_interface__"),
            Addr::None => return Ok(None),
        };
        let d = arg.getattr(name)?;
        Ok(int_value(&d.get_item(intern!(py, "data"))?.get_item(0)?))
    }

    fn constexpr_entry<'py>(&self, arg: &Bound<'py, PyAny>) -> Entry<'py> {
        let ty = arg.get_type();
        if ty.is(self.constexpr_cls.bind(arg.py())) || arg.is_instance_of::<PyList>() {
            return Entry::Fallback;
        }
        Entry::Obj(
            PyTuple::new(arg.py(), [ty.into_any(), arg.clone()])
                .map(|t| t.into_any())
                .unwrap(),
        )
    }

    fn entry<'py>(&self, p: &Param, arg: &Bound<'py, PyAny>) -> PyResult<Entry<'py>> {
        if p.constexpr || arg.is_none() || arg.is_exact_instance_of::<PyString>() {
            return Ok(self.constexpr_entry(arg));
        }
        let s = self.shift;
        if arg.is_exact_instance_of::<PyBool>() {
            return Ok(Entry::Code(self.tid_i1 << s));
        }
        if arg.is_exact_instance_of::<PyInt>() {
            let Some(v) = int_value(arg) else {
                return Ok(Entry::Fallback);
            };
            let tid = if (-(1i128 << 31)..(1i128 << 31)).contains(&v) {
                self.tid_int[0]
            } else if (-(1i128 << 63)..(1i128 << 63)).contains(&v) {
                self.tid_int[1]
            } else if (0..(1i128 << 64)).contains(&v) {
                self.tid_int[2]
            } else {
                return Ok(Entry::Fallback);
            };
            return Ok(Entry::Code((tid << s) | p.int.mask(v, arg)?));
        }
        if arg.is_exact_instance_of::<PyFloat>() {
            if !p.float.fast.is_empty() {
                return Ok(Entry::Fallback);
            }
            return Ok(Entry::Code((self.tid_f32 << s) | p.float.mask(0, arg)?));
        }
        let py = arg.py();
        let info = self.type_info(arg)?;
        if info.addr == Addr::None {
            return Ok(Entry::Fallback);
        }
        let Ok(dt) = arg.getattr(intern!(py, "dtype")) else {
            return Ok(Entry::Fallback);
        };
        let Some(tid) = self.dtype_tid(&dt)? else {
            return Ok(Entry::Fallback);
        };
        // 0-d arrays without data_ptr() (numpy) are scalars to the Python rules
        if info.addr != Addr::DataPtr
            && info.has_ndim
            && arg
                .getattr(intern!(py, "ndim"))?
                .extract::<i64>()
                .map(|n| n == 0)
                .unwrap_or(true)
        {
            return Ok(Entry::Fallback);
        }
        let Some(addr) = Self::address(arg, info.addr)? else {
            return Ok(Entry::Fallback);
        };
        Ok(Entry::Code((tid << s) | p.ptr.mask(addr, arg)?))
    }
}

#[pymethods]
impl KeyPlan {
    #[new]
    fn new(
        params: Vec<ParamSpec>,
        ptr_tid: Py<PyDict>,
        constexpr_cls: PyObject,
        tid_i1: u64,
        tid_f32: u64,
        tid_int: [u64; 3],
        shift: u32,
        names: Vec<Py<PyString>>,
        defaults: Vec<Option<PyObject>>,
        options: Py<PyAny>,
        fallback: PyObject,
    ) -> PyResult<Self> {
        if names.len() != params.len() || defaults.len() != params.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "KeyPlan: params, names and defaults differ in length",
            ));
        }
        let params = params
            .into_iter()
            .map(|(constexpr, pf, ps, inf, ins, ff, fs)| {
                Ok(Param {
                    constexpr,
                    ptr: Tests::parse(pf, ps)?,
                    int: Tests::parse(inf, ins)?,
                    float: Tests::parse(ff, fs)?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(KeyPlan {
            params,
            ptr_tid,
            constexpr_cls,
            tid_i1,
            tid_f32,
            tid_int,
            shift,
            types: GILProtected::new(RefCell::new(Vec::new())),
            dtypes: GILProtected::new(RefCell::new(Vec::new())),
            names,
            defaults,
            options,
            fallback,
        })
    }

    /// The key of `args` (in parameter order), or None to let Python compute it.
    fn key<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = args.py();
        if args.len() != self.params.len() {
            return Ok(None);
        }
        // runtime entries packed as little-endian u64s in one bytes object
        // (CONSTEXPR_SLOT where the entry is an object), then those objects
        let mut codes = [0u8; 8 * 32];
        let mut heap: Vec<u8> = Vec::new();
        let buf: &mut [u8] = if self.params.len() <= 32 {
            &mut codes[..8 * self.params.len()]
        } else {
            heap.resize(8 * self.params.len(), 0);
            &mut heap
        };
        let mut objs: Vec<Bound<'py, PyAny>> = Vec::new(); // no allocation unless a constexpr comes
        for (i, (p, arg)) in self.params.iter().zip(args.iter()).enumerate() {
            let code = match self.entry(p, &arg)? {
                Entry::Code(c) => c,
                Entry::Obj(o) => {
                    objs.push(o);
                    CONSTEXPR_SLOT
                }
                Entry::Fallback => return Ok(None),
            };
            buf[8 * i..8 * i + 8].copy_from_slice(&code.to_le_bytes());
        }
        let head = PyBytes::new(py, buf).into_any();
        if objs.is_empty() {
            return Ok(Some(PyTuple::new(py, [head])?));
        }
        objs.insert(0, head);
        Ok(Some(PyTuple::new(py, objs)?))
    }

    /// Binds a launch's arguments like the generated Python binder and keys
    /// them: (key, arguments in parameter order, launch options). Whatever
    /// the fast path does not handle (a bad call, an unusual argument) goes
    /// to the Python `fallback`, which gives the same result or the error.
    #[pyo3(signature = (*args, **kwargs))]
    fn bind<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.bind_fast(args, kwargs)? {
            Some(r) => Ok(r.into_pyobject(args.py())?.into_any()),
            None => self.fallback.bind(args.py()).call(args, kwargs),
        }
    }
}

impl KeyPlan {
    fn bind_fast<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<(Bound<'py, PyTuple>, Bound<'py, PyTuple>, Bound<'py, PyDict>)>> {
        let py = args.py();
        let n = self.params.len();
        let options = PyDict::new(py);
        let bound =
            match kwargs {
                None if args.len() == n => args.clone(),
                _ => {
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
                            let ks = k.to_cow()?;
                            match self.names.iter().position(|nm| {
                                nm.bind(py).to_cow().map(|c| c == ks).unwrap_or(false)
                            }) {
                                Some(i) if slots[i].is_none() => slots[i] = Some(v),
                                Some(_) => return Ok(None),
                                None if self.options.bind(py).contains(&k)? => {
                                    options.set_item(k, v)?
                                }
                                None => return Ok(None),
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
                    PyTuple::new(py, full)?
                }
            };
        Ok(self.key(&bound)?.map(|k| (k, bound, options)))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeyPlan>()
}
