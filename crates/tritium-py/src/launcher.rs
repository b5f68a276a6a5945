//! `FastLauncher`: one Rust call per `kernel[grid](*args)` for the common
//! case (arguments by position or by parameter name, default launch options,
//! a kernel already loaded): key, grid, device, stream, packing and
//! `cuLaunchKernel` without a Python frame. Everything else goes to the
//! Python launch path (runtime/driver.py, through the `slow` callable), which
//! gives the same results and errors.
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyDict, PyInt, PyTuple};

use crate::interpret::interpret_requested;
use crate::key::{KeyPlan, Keyed, Read};
use crate::runtime::CudaKernel;

/// The device and stream queries (torch's), once torch's CUDA state exists.
type Queries = (PyObject, PyObject);

/// A multiply-rotate hash over the native key's u64s: the keys are our own
/// codes, not attacker-chosen, so SipHash's protection buys nothing here.
#[derive(Default)]
struct CodeHasher(u64);

impl Hasher for CodeHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Loaded kernels for the default launch options on one device.
struct Table {
    device: i32,
    /// by native key (`Keyed::native`): no Python object per lookup
    native: HashMap<Box<[u64]>, Py<CudaKernel>, BuildHasherDefault<CodeHasher>>,
    /// by Python key, for keys with object constexprs (floats, strings, ...)
    objects: Py<PyDict>,
}

struct State {
    tables: Vec<Table>,
    queries: Option<Queries>,
    /// (driver context, torch's device index for it, as int and object):
    /// torch's current device is the device of the thread's current
    /// context (torch.cuda.set_device and torch.cuda.device switch it), so
    /// while the context stays the same the device query is not repeated
    device_of_ctx: Option<(usize, i32, PyObject)>,
}

#[pyclass(frozen, module = "tritium._core")]
pub struct FastLauncher {
    plan: Py<KeyPlan>,
    /// `slow(grid, args, kwargs)`: the Python launch path.
    slow: PyObject,
    /// `resolve()` -> (current_device(), current_raw_stream(device)) callables, or
    /// None while torch's CUDA state is not initialised (device 0, stream 0 then).
    resolve: PyObject,
    modules: Py<PyDict>,
    state: GILProtected<RefCell<State>>,
}

/// What the fast path decided: launch these, or leave it to Python.
struct Prepared<'py> {
    bound: Bound<'py, PyTuple>,
    grid: [u64; 3],
}

/// torch's current raw stream on `device` (its own device index object,
/// handed to its stream query as is).
pub(crate) fn stream_of(query: &Bound<'_, PyAny>, device: &Bound<'_, PyAny>) -> PyResult<u64> {
    // SAFETY: the GIL is held; both are live objects
    unsafe { Bound::from_owned_ptr_or_err(query.py(), crate::cpython::call_one(query.as_ptr(), device.as_ptr()))? }.extract()
}

/// A grid of 1-3 non-negative ints (a tuple, or one int); anything else
/// (callables, lists, negative sizes) is for the Python path to judge.
fn grid3(grid: &Bound<'_, PyAny>) -> Option<[u64; 3]> {
    let dim = |v: Bound<'_, PyAny>| -> Option<u64> {
        if !v.is_exact_instance_of::<PyInt>() {
            return None;
        }
        v.extract::<u64>().ok()
    };
    if let Ok(t) = grid.downcast_exact::<PyTuple>() {
        let n = t.len();
        if !(1..=3).contains(&n) {
            return None;
        }
        let mut g = [1u64; 3];
        for (i, v) in t.iter().enumerate() {
            g[i] = dim(v)?;
        }
        return Some(g);
    }
    Some([dim(grid.clone())?, 1, 1])
}

impl FastLauncher {
    /// Binds and keys the call into `keyed`; None when it is Python's.
    fn prepare<'py>(
        &self,
        grid: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        keyed: &mut Keyed,
    ) -> PyResult<Option<Prepared<'py>>> {
        let Some(grid) = grid3(grid) else {
            return Ok(None);
        };
        let plan = self.plan.get();
        // launch options (num_warps=, stream=, ...) are the Python path's
        let Some(bound) = plan.bind_args(args, kwargs, None)? else {
            return Ok(None);
        };
        if !plan.keyed(&bound, keyed)? {
            return Ok(None);
        }
        Ok(Some(Prepared { bound, grid }))
    }

    pub(crate) fn queries<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        if let Some((d, s)) = &self.state.get(py).borrow().queries {
            return Ok(Some((d.bind(py).clone(), s.bind(py).clone())));
        }
        // torch never imported: its current device and stream cannot exist
        if self
            .modules
            .bind(py)
            .get_item(intern!(py, "torch"))?
            .is_none()
        {
            return Ok(None);
        }
        let r = self.resolve.bind(py).call0()?;
        if r.is_none() {
            return Ok(None);
        }
        let (d, s): (Bound<'py, PyAny>, Bound<'py, PyAny>) = r.extract()?;
        self.state.get(py).borrow_mut().queries = Some((d.clone().unbind(), s.clone().unbind()));
        Ok(Some((d, s)))
    }

    /// torch's current device (index and int object), asked again only when
    /// the thread's current driver context is not the one it was asked under.
    pub(crate) fn device<'py>(&self, py: Python<'py>, query: &Bound<'py, PyAny>) -> PyResult<(i32, Bound<'py, PyAny>)> {
        let ctx = tritium_runtime::cuda::driver()
            .and_then(|d| d.current_context())
            .map(|c| c as usize)
            .unwrap_or(0);
        if ctx != 0 {
            if let Some((c, dev, obj)) = &self.state.get(py).borrow().device_of_ctx {
                if *c == ctx {
                    return Ok((*dev, obj.bind(py).clone()));
                }
            }
        }
        let obj = query.call0()?;
        let dev: i32 = obj.extract()?;
        if ctx != 0 {
            self.state.get(py).borrow_mut().device_of_ctx = Some((ctx, dev, obj.clone().unbind()));
        }
        Ok((dev, obj))
    }

    /// The kernel loaded for this call on `device`, if any.
    fn find(&self, py: Python<'_>, device: i32, keyed: &Keyed, p: &Prepared<'_>) -> PyResult<Option<Py<CudaKernel>>> {
        let objects = {
            let st = self.state.get(py).borrow();
            let Some(table) = st.tables.iter().find(|t| t.device == device) else {
                return Ok(None);
            };
            if let Some(native) = keyed.native() {
                return Ok(table.native.get(native).map(|k| k.clone_ref(py)));
            }
            table.objects.clone_ref(py)
        };
        // no borrow is held while Python hashes and compares the constexprs
        let key = self.plan.get().python_key(keyed, &p.bound)?;
        match objects.bind(py).get_item(key)? {
            Some(k) => Ok(k.downcast_into::<CudaKernel>().ok().map(|k| k.unbind())),
            None => Ok(None),
        }
    }

    /// The fast path: Some(kernel) when it launched, None to go the Python way.
    fn try_fast<'py>(
        &self,
        grid: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = args.py();
        if interpret_requested(py) {
            return Ok(None);
        }
        let mut keyed = Keyed::new();
        let Some(p) = self.prepare(grid, args, kwargs, &mut keyed)? else {
            return Ok(None);
        };
        let queries = self.queries(py)?;
        let (device, device_obj) = match &queries {
            Some((d, _)) => {
                let (dev, obj) = self.device(py, d)?;
                (dev, Some(obj))
            }
            None => (0, None),
        };
        let Some(kernel) = self.find(py, device, &keyed, &p)? else {
            return Ok(None);
        };
        let stream = match (&queries, device_obj) {
            (Some((_, s)), Some(d)) => stream_of(s, &d)?,
            _ => 0,
        };
        if !kernel.get().launch_reads(p.grid, stream, keyed.reads())? {
            return Ok(None);
        }
        Ok(Some(kernel.into_bound(py).into_any()))
    }

    fn launch<'py>(
        &self,
        grid: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        if let Some(k) = self.try_fast(grid, args, kwargs)? {
            return Ok(k);
        }
        let kw = match kwargs {
            Some(k) => k.clone(),
            None => PyDict::new(py),
        };
        self.slow.bind(py).call1((grid, args, kw))
    }
}

#[pymethods]
impl FastLauncher {
    #[new]
    fn new(py: Python<'_>, plan: Py<KeyPlan>, slow: PyObject, resolve: PyObject) -> PyResult<Self> {
        let modules = py
            .import("sys")?
            .getattr("modules")?
            .downcast_into::<PyDict>()?
            .unbind();
        Ok(FastLauncher {
            plan,
            slow,
            resolve,
            modules,
            state: GILProtected::new(RefCell::new(State {
                tables: Vec::new(),
                queries: None,
                device_of_ctx: None,
            })),
        })
    }

    /// `launcher(grid, args, kwargs)`: launches, or hands the call to the Python path.
    #[pyo3(signature = (grid, args, kwargs = None))]
    fn __call__<'py>(
        &self,
        grid: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.launch(grid, args, kwargs)
    }

    /// `launcher[grid]`: a callable taking the kernel's arguments (what `kernel[grid]` returns).
    fn __getitem__(slf: Py<Self>, grid: PyObject) -> GridLaunch {
        GridLaunch {
            launcher: slf,
            grid,
        }
    }

    /// Serves `key` on `device` with `kernel` (the Python path calls this after
    /// it loaded a kernel for the default options).
    fn insert(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        device: i32,
        kernel: &Bound<'_, CudaKernel>,
    ) -> PyResult<()> {
        let native = self.plan.get().native_of(key)?;
        let mut st = self.state.get(py).borrow_mut();
        let i = match st.tables.iter().position(|t| t.device == device) {
            Some(i) => i,
            None => {
                st.tables.push(Table {
                    device,
                    native: HashMap::default(),
                    objects: PyDict::new(py).unbind(),
                });
                st.tables.len() - 1
            }
        };
        let table = &mut st.tables[i];
        match native {
            Some(k) => {
                table.native.insert(k.into_boxed_slice(), kernel.clone().unbind());
                Ok(())
            }
            None => {
                let objects = table.objects.clone_ref(py);
                drop(st); // Python hashes the key's constexprs
                objects.bind(py).set_item(key, kernel)
            }
        }
    }

    /// Number of kernels the fast path serves (all devices).
    fn __len__(&self, py: Python<'_>) -> usize {
        self.state
            .get(py)
            .borrow()
            .tables
            .iter()
            .map(|t| t.native.len() + t.objects.bind(py).len())
            .sum()
    }

    /// What the fast path would launch, without launching: (key, (gx, gy, gz),
    /// argument values as read) or None when the call goes the Python way.
    /// Table, device and stream are not consulted (tests and profiling).
    #[pyo3(signature = (grid, args, kwargs = None))]
    fn prepare_only<'py>(
        &self,
        grid: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = args.py();
        let mut keyed = Keyed::new();
        let Some(p) = self.prepare(grid, args, kwargs, &mut keyed)? else {
            return Ok(None);
        };
        let reads = keyed
            .reads()
            .iter()
            .map(|r| -> PyResult<PyObject> {
                Ok(match *r {
                    Read::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
                    Read::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
                    Read::UInt(u) => u.into_pyobject(py)?.into_any().unbind(),
                    Read::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
                    Read::Ptr(a) => ("ptr", a).into_pyobject(py)?.into_any().unbind(),
                    Read::Host => "host".into_pyobject(py)?.into_any().unbind(),
                    Read::Obj => py.None(),
                    Read::Desc(_) => "desc".into_pyobject(py)?.into_any().unbind(),
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let items: [PyObject; 3] = [
            self.plan.get().python_key(&keyed, &p.bound)?.unbind(),
            PyTuple::new(py, p.grid)?.into_any().unbind(),
            PyTuple::new(py, reads)?.into_any().unbind(),
        ];
        Ok(Some(PyTuple::new(py, items)?))
    }
}

/// `kernel[grid]`: calling it launches with `grid`.
#[pyclass(frozen, module = "tritium._core")]
pub struct GridLaunch {
    launcher: Py<FastLauncher>,
    grid: PyObject,
}

#[pymethods]
impl GridLaunch {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.launcher
            .get()
            .launch(self.grid.bind(args.py()), args, kwargs)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FastLauncher>()?;
    m.add_class::<GridLaunch>()
}
