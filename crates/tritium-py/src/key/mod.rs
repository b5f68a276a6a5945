//! The launch-key fast path: `KeyPlan` is built once per (kernel, backend) by
//! python/tritium/runtime/specialization.py and computes the same key as its
//! `key_python`, a few attribute reads per argument. Anything unusual (an
//! unseen dtype, a numpy scalar, a huge int) returns None and Python decides.
//!
//! `keyed` computes a launch's key without creating a Python object: one
//! code per parameter plus, for a constexpr of type int, bool or None, its
//! value inline. The launcher's table (launcher.rs) is keyed by that
//! (`Keyed::native`); the Python key (`python_key`: bytes of the codes, then
//! one (class, value) object per constexpr) is built only when Python needs
//! it, or when a constexpr is some other object.
//!
//! One job per file: this one keys a call; `entry.rs` is what one argument
//! contributes, `properties.rs` the specialization tests, `types.rs` the
//! per-type probing and caches, `bind.rs` the binder; DLPack is `crate::dlpack`,
//! and the test and bench views of a plan are `crate::probe`.
mod bind;
mod entry;
mod properties;
mod types;

use std::cell::{Cell, RefCell};
use std::mem::MaybeUninit;

use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use pyo3::Borrowed;

pub(crate) use entry::Read;
use entry::Entry;
use properties::Tests;
use types::TypeCache;
use crate::reads::DirectReads;

/// The Python key's code of a parameter whose entry is an object (a constexpr).
const CONSTEXPR_SLOT: u64 = u64::MAX;
/// Native-key tags of constexprs held inline; their payload is the value.
/// An object constexpr is (CONSTEXPR_SLOT, 0) there, and only the Python
/// key can tell two of them apart. Runtime codes (`tid << shift | mask`)
/// stay far below these.
const INLINE_INT: u64 = u64::MAX - 1;
const INLINE_BOOL: u64 = u64::MAX - 2;
const INLINE_NONE: u64 = u64::MAX - 3;
const FIRST_TAG: u64 = INLINE_NONE;

/// Signatures up to this many parameters are keyed without allocating;
/// longer ones are keyed by Python.
pub(crate) const NATIVE_PARAMS: usize = 32;

/// One launch's arguments as the key saw them.
pub(crate) struct Keyed {
    n: usize,
    /// per parameter: (code, inline constexpr value or 0)
    native: [MaybeUninit<u64>; 2 * NATIVE_PARAMS],
    reads: [MaybeUninit<Read>; NATIVE_PARAMS],
    /// a constexpr entry is an object: the native key cannot stand for it
    objects: bool,
}

impl Keyed {
    /// An empty key, to be filled in place by `KeyPlan::keyed` (it is a
    /// few hundred bytes: built where it is used, never moved).
    #[inline(always)]
    pub(crate) fn new() -> Keyed {
        Keyed {
            n: 0,
            native: [const { MaybeUninit::uninit() }; 2 * NATIVE_PARAMS],
            reads: [const { MaybeUninit::uninit() }; NATIVE_PARAMS],
            objects: false,
        }
    }

    pub(crate) fn codes(&self) -> &[u64] {
        // SAFETY: `keyed` wrote the first 2n entries
        unsafe { std::slice::from_raw_parts(self.native.as_ptr() as *const u64, 2 * self.n) }
    }

    /// The key of the launcher's table, or None when only the Python key
    /// can tell this launch's constexprs apart.
    pub(crate) fn native(&self) -> Option<&[u64]> {
        (!self.objects).then(|| self.codes())
    }

    /// Each argument's value as read, in parameter order.
    pub(crate) fn reads(&self) -> &[Read] {
        // SAFETY: `keyed` wrote the first n entries
        unsafe { std::slice::from_raw_parts(self.reads.as_ptr() as *const Read, self.n) }
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
    /// pointer type id by DLPack element type name (args.rs' `dtype_name`)
    dl_tid: Vec<(String, u64)>,
    // caches filled on first sight; the GIL guards them (no atomics per launch)
    pub(crate) types: GILProtected<RefCell<TypeCache>>,
    /// (dtype object's address, pointer type id, the object, kept alive so the address stays its)
    dtypes: GILProtected<RefCell<Vec<(usize, u64, PyObject)>>>,
    /// the tensor type keyed last, when its reads are direct: a launch whose
    /// tensors are all torch.Tensor skips the type-cache search. The type
    /// cache keeps the type and its descriptors alive.
    last_tensor: GILProtected<Cell<Option<(usize, DirectReads)>>>,
    names: Vec<Py<PyString>>,
    defaults: Vec<Option<PyObject>>,
    options: Py<PyAny>,
    /// what `bind` hands back as the launch options of a call without any:
    /// one read-only empty mapping instead of a new dict per launch
    no_options: PyObject,
    fallback: PyObject,
    /// `(index, arg) -> code | None`: the key code of a host TensorDescriptor argument
    descriptor_code: Option<PyObject>,
}

impl KeyPlan {
    /// Keys `args` (in parameter order) into `k`, recording each argument's
    /// value; false to let Python compute the key. No Python object is created.
    pub(crate) fn keyed(&self, args: &Bound<'_, PyTuple>, k: &mut Keyed) -> PyResult<bool> {
        let n = self.params.len();
        k.n = 0;
        k.objects = false;
        if args.len() != n || n > NATIVE_PARAMS {
            return Ok(false);
        }
        let ok = match crate::cpython::tuple_items(args) {
            Some(items) => self.key_each(k, items.iter().map(|&ob| {
                // SAFETY: a tuple item, borrowed for as long as the tuple is
                unsafe { Borrowed::from_ptr(args.py(), ob) }
            }))?,
            None => self.key_each(k, args.iter_borrowed())?,
        };
        if ok {
            k.n = n;
        }
        Ok(ok)
    }

    #[inline(always)]
    fn key_each<'a, 'py>(
        &self,
        k: &mut Keyed,
        args: impl Iterator<Item = Borrowed<'a, 'py, PyAny>>,
    ) -> PyResult<bool> {
        for (i, (p, arg)) in self.params.iter().zip(args).enumerate() {
            let (code, value, read) = match self.entry(p, &arg)? {
                Entry::Code(c, r) => (c, 0, r),
                Entry::Const(tag, v) => {
                    k.objects |= tag == CONSTEXPR_SLOT;
                    (tag, v, Read::Obj)
                }
                Entry::Fallback => match self.descriptor_code(i, &arg)? {
                    Some(code) => (code, 0, Read::Desc(arg.as_ptr())),
                    None => return Ok(false),
                },
            };
            k.native[2 * i].write(code);
            k.native[2 * i + 1].write(value);
            k.reads[i].write(read);
        }
        Ok(true)
    }

    /// A host TensorDescriptor's code (its type, with the extents'
    /// divisibility, comes from Python's keyer), or None for anything else.
    fn descriptor_code(&self, i: usize, arg: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let Some(code_of) = &self.descriptor_code else {
            return Ok(None);
        };
        let code = code_of.bind(arg.py()).call1((i, arg))?;
        if code.is_none() {
            return Ok(None);
        }
        code.extract::<u64>().map(Some)
    }

    /// The Python key of a keyed call: bytes of one little-endian u64 code
    /// per parameter (CONSTEXPR_SLOT for a constexpr), alone, or followed by
    /// one (class, value) tuple per constexpr when there are any.
    pub(crate) fn python_key<'py>(&self, k: &Keyed, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        let mut buf = [0u8; 8 * NATIVE_PARAMS];
        let mut objs: Vec<Bound<'py, PyAny>> = Vec::new(); // no allocation unless a constexpr comes
        for (i, code) in k.codes().iter().step_by(2).enumerate() {
            let code = if *code >= FIRST_TAG {
                let arg = args.get_borrowed_item(i)?;
                objs.push(PyTuple::new(py, [arg.get_type().into_any(), arg.to_owned()])?.into_any());
                CONSTEXPR_SLOT
            } else {
                *code
            };
            buf[8 * i..8 * i + 8].copy_from_slice(&code.to_le_bytes());
        }
        let head = PyBytes::new(py, &buf[..8 * k.n]).into_any();
        if objs.is_empty() {
            return Ok(head);
        }
        objs.insert(0, head);
        Ok(PyTuple::new(py, objs)?.into_any())
    }

    /// The native key a Python key stands for (what `keyed` gives for the
    /// same arguments), or None when a constexpr in it is an object.
    pub(crate) fn native_of(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u64>>> {
        let (raw, objs) = match key.downcast::<PyBytes>() {
            Ok(b) => (b.clone(), Vec::new()),
            Err(_) => {
                let t = key.downcast::<PyTuple>()?;
                let raw = t.get_item(0)?.downcast_into::<PyBytes>()?;
                (raw, t.iter().skip(1).collect::<Vec<_>>())
            }
        };
        let raw = raw.as_bytes();
        if raw.len() != 8 * self.params.len() {
            return Err(pyo3::exceptions::PyValueError::new_err("a key of another signature"));
        }
        let mut objs = objs.into_iter();
        let mut out = Vec::with_capacity(raw.len() / 4);
        for chunk in raw.chunks_exact(8) {
            let code = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            if code != CONSTEXPR_SLOT {
                out.extend([code, 0]);
                continue;
            }
            let Some(entry) = objs.next() else {
                return Err(pyo3::exceptions::PyValueError::new_err("a key with fewer constexprs than slots"));
            };
            let value = entry.get_item(1)?;
            if !entry.get_item(0)?.is(&value.get_type()) {
                return Ok(None);
            }
            match self.constexpr_entry(&value) {
                Entry::Const(tag, v) if tag != CONSTEXPR_SLOT => out.extend([tag, v]),
                _ => return Ok(None),
            }
        }
        Ok(Some(out))
    }
}

#[pymethods]
impl KeyPlan {
    #[new]
    #[pyo3(signature = (params, ptr_tid, constexpr_cls, tid_i1, tid_f32, tid_int, shift, names, defaults, options, fallback, dl_tid, descriptor_code = None))]
    #[allow(clippy::too_many_arguments)] // one per field Python hands over (specialization.py)
    fn new(
        params: Vec<ParamSpec>,
        ptr_tid: Py<PyDict>,
        constexpr_cls: PyObject,
        tid_i1: u64,
        tid_f32: u64,
        tid_int: [u64; 3],
        shift: u32,
        names: Vec<Py<PyString>>,
        defaults: Vec<(bool, PyObject)>,
        options: Py<PyAny>,
        fallback: PyObject,
        dl_tid: Vec<(String, u64)>,
        descriptor_code: Option<PyObject>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        // (has a default, the default): a default of None is a real default
        let defaults: Vec<Option<PyObject>> = defaults.into_iter().map(|(has, d)| has.then_some(d)).collect();
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
            dl_tid,
            types: GILProtected::new(RefCell::new(Vec::new())),
            dtypes: GILProtected::new(RefCell::new(Vec::new())),
            last_tensor: GILProtected::new(Cell::new(None)),
            names,
            defaults,
            options,
            no_options: py
                .import("types")?
                .getattr("MappingProxyType")?
                .call1((PyDict::new(py),))?
                .unbind(),
            fallback,
            descriptor_code,
        })
    }

    /// The key of `args` (in parameter order), or None to let Python compute it.
    fn key<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut k = Keyed::new();
        if !self.keyed(args, &mut k)? {
            return Ok(None);
        }
        Ok(Some(self.python_key(&k, args)?))
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeyPlan>()
}
