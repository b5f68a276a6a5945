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
use std::cell::{Cell, RefCell};
use std::mem::MaybeUninit;
use std::os::raw::c_char;
use std::ptr::addr_of_mut;

use pyo3::ffi;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::{GILOnceCell, GILProtected};
use pyo3::Borrowed;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

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

    fn codes(&self) -> &[u64] {
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
    /// the same tests as plain masks, when they fit (see `Quick`)
    quick: Option<Quick>,
}

/// Up to two power-of-two divisibility tests and two equalities, as
/// (mask, bit) and (value, bit); an unused slot has bit 0. The shared
/// properties (divisibility by 16, equal to 1) always fit, so the launch
/// path keys a number with a few ands and compares.
#[derive(Clone, Copy)]
struct Quick {
    pow2: [(u64, u64); 2],
    eq: [(i64, u64); 2],
}

impl Quick {
    fn of(fast: &[Fast], slow: &[(u64, PyObject)]) -> Option<Quick> {
        if !slow.is_empty() {
            return None;
        }
        let mut q = Quick { pow2: [(0, 0); 2], eq: [(0, 0); 2] };
        let (mut np, mut ne) = (0, 0);
        for f in fast {
            match (f.eq, f.pow2_mask) {
                (true, _) if ne < 2 => {
                    q.eq[ne] = (i64::try_from(f.n).ok()?, f.bit);
                    ne += 1;
                }
                (false, Some(m)) if np < 2 => {
                    q.pow2[np] = (m, f.bit);
                    np += 1;
                }
                _ => return None,
            }
        }
        Some(q)
    }

    /// The property bits of a value `v` within i64.
    #[inline(always)]
    fn mask(&self, v: i64) -> u64 {
        let mut m = 0;
        for (mask, bit) in self.pow2 {
            if (v as u64) & mask == 0 {
                m |= bit;
            }
        }
        for (n, bit) in self.eq {
            if v == n {
                m |= bit;
            }
        }
        m
    }
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
            .collect::<Vec<_>>();
        let quick = Quick::of(&fast, &slow);
        Ok(Tests { fast, slow, quick })
    }

    /// `mask` for a value within i64: the plain masks where they fit.
    #[inline(always)]
    fn mask_i64(&self, v: i64, arg: &Bound<'_, PyAny>) -> PyResult<u64> {
        match &self.quick {
            Some(q) => Ok(q.mask(v)),
            None => self.mask(v as i128, arg),
        }
    }

    #[inline(always)]
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
    /// pointer type id by DLPack element type name (args.rs' `dtype_name`)
    dl_tid: Vec<(String, u64)>,
    // caches filled on first sight; the GIL guards them (no atomics per launch)
    types: GILProtected<RefCell<TypeCache>>,
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
}

/// Outcome of keying one argument.
enum Entry {
    /// a runtime argument: its code and value
    Code(u64, Read),
    /// a constexpr: (INLINE_* tag, value), or (CONSTEXPR_SLOT, 0) for an object
    Const(u64, u64),
    /// let Python key this call
    Fallback,
}

/// How to read a tensor-like type's address; found once per Python type.
#[derive(Clone, Copy, PartialEq)]
enum Addr {
    DataPtr,
    Cuda,
    Host,
    DLPack,
    None,
}

/// A type whose `data_ptr` is a C method (method_descriptor) and `dtype` a C
/// getset, with the default attribute lookup (torch.Tensor): both are called
/// straight from the descriptors found once on the type, skipping generic
/// attribute lookup and the bound method. The pointers stay valid because the
/// type cache below owns references to both descriptors.
#[derive(Clone, Copy)]
struct DirectReads {
    data_ptr: *mut ffi::PyObject,
    dtype: *mut ffi::PyObject,
    dtype_get: ffi::descrgetfunc,
    /// the descriptors' C functions themselves, where cpython.rs could take them
    c: Option<crate::cpython::CReads>,
}

// SAFETY: only dereferenced with the GIL held (inside the GILProtected cache or a launch)
unsafe impl Send for DirectReads {}
unsafe impl Sync for DirectReads {}

#[derive(Clone, Copy)]
struct TypeInfo {
    addr: Addr,
    has_ndim: bool,
    direct: Option<DirectReads>,
}

/// One runtime argument's value as the key read it; the launcher packs these.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Read {
    Bool(bool),
    Int(i64),
    /// an int above i64's range
    UInt(u64),
    Float(f64),
    /// A device address (data_ptr, __cuda_array_interface__ or a CUDA DLPack tensor).
    Ptr(u64),
    /// A host array address (__array_interface__): keyed, but not launchable.
    Host,
    /// An object entry (constexpr, None, str): not passed at launch.
    Obj,
}

/// The descriptors behind `DirectReads`, kept alive with the type they came from.
type DirectRefs = Option<(PyObject, PyObject)>;

/// Tensor-like types seen so far, by address, and how to read them; the
/// type object is kept alive so the address stays its.
type TypeCache = Vec<(usize, TypeInfo, Py<PyType>, DirectRefs)>;

/// `bind`'s result: (key, arguments in parameter order, launch options).
type Bound3<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>, Bound<'py, PyAny>);

/// A Python int's value without raising: None when it is below i64's range
/// or above u64's (abi3 has no cheap 128-bit conversion).
fn int_value(v: &Bound<'_, PyAny>) -> Option<i128> {
    let mut overflow = 0;
    // SAFETY: `v` is a live object; the call sets `overflow` instead of raising for out-of-range ints
    let x = unsafe { ffi::PyLong_AsLongLongAndOverflow(v.as_ptr(), &mut overflow) };
    if overflow == 0 {
        if x == -1 && PyErr::take(v.py()).is_some() {
            return None; // not an int at all
        }
        return Some(x as i128);
    }
    if overflow < 0 {
        return None;
    }
    // SAFETY: as above; an error (above u64) is taken right away
    let u = unsafe { ffi::PyLong_AsUnsignedLongLong(v.as_ptr()) };
    if u == u64::MAX && PyErr::take(v.py()).is_some() {
        return None;
    }
    Some(u as i128)
}

/// `Py_TYPE(arg) == ty` for one of CPython's static types.
fn is_type(arg: &Bound<'_, PyAny>, ty: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading the type of a live object
    unsafe { ffi::Py_TYPE(arg.as_ptr()) == ty }
}

impl KeyPlan {
    fn type_info(&self, arg: &Bound<'_, PyAny>) -> PyResult<TypeInfo> {
        let py = arg.py();
        // SAFETY: reading the type of a live object
        let tp = unsafe { ffi::Py_TYPE(arg.as_ptr()) } as usize;
        if let Some((_, info, _, _)) = self.types.get(py).borrow().iter().find(|(t, ..)| *t == tp) {
            return Ok(*info);
        }
        let ty = arg.get_type();
        // no borrow is held while Python runs (hasattr may run arbitrary code)
        let addr = if ty.hasattr(intern!(py, "data_ptr"))? {
            Addr::DataPtr
        } else if ty.hasattr(intern!(py, "__cuda_array_interface__"))? {
            Addr::Cuda
        } else if ty.hasattr(intern!(py, "__array_interface__"))? {
            Addr::Host
        } else if ty.hasattr(intern!(py, "__dlpack__"))? {
            Addr::DLPack
        } else {
            Addr::None
        };
        let refs = if addr == Addr::DataPtr { direct_descriptors(&ty)? } else { None };
        let direct = refs.as_ref().and_then(|(dp, dt)| {
            // SAFETY: PyType_GetSlot accepts static types from 3.10 (the abi3 floor)
            let get = unsafe { ffi::PyType_GetSlot(ffi::Py_TYPE(dt.as_ptr()), ffi::Py_tp_descr_get) };
            (!get.is_null()).then(|| DirectReads {
                data_ptr: dp.as_ptr(),
                dtype: dt.as_ptr(),
                dtype_get: unsafe { std::mem::transmute::<*mut std::ffi::c_void, ffi::descrgetfunc>(get) },
                c: crate::cpython::c_reads(&ty, dp.bind(py), "data_ptr", dt.bind(py), "dtype"),
            })
        });
        let info = TypeInfo {
            addr,
            has_ndim: ty.hasattr(intern!(py, "ndim"))?,
            direct,
        };
        let mut seen = self.types.get(py).borrow_mut();
        if seen.len() < 64 {
            seen.push((tp, info, ty.unbind(), refs));
        } else if info.direct.is_some() {
            // uncached, the descriptors would not be kept alive: use the generic reads
            return Ok(TypeInfo { direct: None, ..info });
        }
        Ok(info)
    }

    /// The pointer type id of a framework dtype: identity hits first (dtype
    /// objects are singletons in torch and numpy), then the shared dict.
    fn dtype_tid(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let py = dt.py();
        let addr = dt.as_ptr() as usize;
        if let Some((_, tid, _)) = self.dtypes.get(py).borrow().iter().find(|(a, ..)| *a == addr) {
            return Ok(Some(*tid));
        }
        let Some(tid) = self.ptr_tid.bind(py).get_item(dt)? else {
            return Ok(None);
        };
        let tid: u64 = tid.extract()?;
        let mut seen = self.dtypes.get(py).borrow_mut();
        if seen.len() < 32 {
            seen.push((addr, tid, dt.clone().unbind()));
        }
        Ok(Some(tid))
    }

    fn address(arg: &Bound<'_, PyAny>, info: &TypeInfo) -> PyResult<Option<i128>> {
        let py = arg.py();
        let name = match info.addr {
            Addr::DataPtr => {
                let r = match info.direct {
                    // SAFETY: the descriptor is a method_descriptor of a base of arg's type
                    Some(d) => unsafe {
                        let r = match d.c {
                            Some(c) => c.call_method(arg.as_ptr()),
                            None => call_one(d.data_ptr, arg.as_ptr()),
                        };
                        Bound::from_owned_ptr_or_err(py, r)?
                    },
                    None => call_method0(arg, intern!(py, "data_ptr"))?,
                };
                return Ok(int_value(&r));
            }
            Addr::Cuda => intern!(py, "__cuda_array_interface__"),
            Addr::Host => intern!(py, "__array_interface__"),
            Addr::DLPack | Addr::None => return Ok(None),
        };
        let d = arg.getattr(name)?;
        Ok(int_value(&d.get_item(intern!(py, "data"))?.get_item(0)?))
    }

    fn dtype<'py>(arg: &Bound<'py, PyAny>, info: &TypeInfo) -> Option<Bound<'py, PyAny>> {
        let py = arg.py();
        match info.direct {
            // SAFETY: the getset descriptor belongs to a base of arg's type
            Some(d) => unsafe {
                let r = match d.c {
                    Some(c) => c.get(arg.as_ptr()),
                    None => (d.dtype_get)(d.dtype, arg.as_ptr(), ffi::Py_TYPE(arg.as_ptr()) as *mut ffi::PyObject),
                };
                Bound::from_owned_ptr_or_err(py, r).ok()
            },
            None => arg.getattr(intern!(py, "dtype")).ok(),
        }
    }

    /// A DLPack argument: (pointer type id, address), or None when Python
    /// must decide (a CPU tensor is an error there, an unknown dtype too).
    fn dlpack(&self, arg: &Bound<'_, PyAny>) -> PyResult<Option<(u64, u64)>> {
        // a capsule that cannot be read is Python's to report, naming the argument
        let Ok(t) = crate::runtime::dlpack_of(arg) else {
            return Ok(None);
        };
        if !t.on_cuda() {
            return Ok(None);
        }
        let Some(name) = t.dtype_name() else {
            return Ok(None);
        };
        Ok(self.dl_tid.iter().find(|(n, _)| n == name).map(|(_, tid)| (*tid, t.address)))
    }

    /// A constexpr's entry: the Python key holds (class, value); the native
    /// key holds ints, bools and None inline.
    fn constexpr_entry(&self, arg: &Bound<'_, PyAny>) -> Entry {
        if is_type(arg, addr_of_mut!(ffi::PyLong_Type)) {
            return match int_value(arg) {
                Some(v) if i64::try_from(v).is_ok() => Entry::Const(INLINE_INT, v as i64 as u64),
                _ => Entry::Const(CONSTEXPR_SLOT, 0),
            };
        }
        if is_type(arg, addr_of_mut!(ffi::PyBool_Type)) {
            return Entry::Const(INLINE_BOOL, arg.is_truthy().unwrap_or(false) as u64);
        }
        if arg.is_none() {
            return Entry::Const(INLINE_NONE, 0);
        }
        // constexpr(...) wrappers and lists are normalised by Python
        if arg.get_type().is(self.constexpr_cls.bind(arg.py())) || arg.is_instance_of::<PyList>() {
            return Entry::Fallback;
        }
        Entry::Const(CONSTEXPR_SLOT, 0)
    }

    /// A tensor whose `dtype` and `data_ptr()` are read straight from its
    /// type's descriptors (torch.Tensor): the launch path's hot case, kept
    /// free of the generic path's lookups and intermediate objects.
    #[inline(always)]
    fn direct_tensor_entry(&self, p: &Param, arg: &Bound<'_, PyAny>, d: DirectReads) -> PyResult<Entry> {
        let py = arg.py();
        let ob = arg.as_ptr();
        // SAFETY: `d` was found on a base of arg's type, which the type cache keeps alive
        let dt = unsafe {
            match d.c {
                Some(c) => c.get(ob),
                None => (d.dtype_get)(d.dtype, ob, ffi::Py_TYPE(ob) as *mut ffi::PyObject),
            }
        };
        // SAFETY: a new reference, or NULL with an exception set
        let Ok(dt) = (unsafe { Bound::from_owned_ptr_or_err(py, dt) }) else {
            return Ok(Entry::Fallback); // Python reports it, naming the argument
        };
        let addr = dt.as_ptr() as usize;
        let cached = self.dtypes.get(py).borrow().iter().find(|(a, ..)| *a == addr).map(|(_, tid, _)| *tid);
        let tid = match cached {
            Some(tid) => tid,
            None => match self.dtype_tid(&dt)? {
                Some(tid) => tid,
                None => return Ok(Entry::Fallback),
            },
        };
        drop(dt);
        // SAFETY: as above
        let r = unsafe {
            match d.c {
                Some(c) => c.call_method(ob),
                None => call_one(d.data_ptr, ob),
            }
        };
        // SAFETY: a new reference, or NULL with an exception set
        let r = unsafe { Bound::from_owned_ptr_or_err(py, r)? };
        let mut overflow = 1;
        if is_type(&r, addr_of_mut!(ffi::PyLong_Type)) {
            // SAFETY: an exact int, for which the call cannot fail
            let a = unsafe { ffi::PyLong_AsLongLongAndOverflow(r.as_ptr(), &mut overflow) };
            if overflow == 0 && a >= 0 {
                return Ok(Entry::Code((tid << self.shift) | p.ptr.mask_i64(a, arg)?, Read::Ptr(a as u64)));
            }
        }
        // an address above i64, an int subclass, a negative value: the general reads
        let Some(addr) = int_value(&r) else {
            return Ok(Entry::Fallback);
        };
        let read = if (0..(1i128 << 64)).contains(&addr) { Read::Ptr(addr as u64) } else { Read::Host };
        Ok(Entry::Code((tid << self.shift) | p.ptr.mask(addr, arg)?, read))
    }

    #[inline(always)]
    fn entry(&self, p: &Param, arg: &Bound<'_, PyAny>) -> PyResult<Entry> {
        if p.constexpr {
            return Ok(self.constexpr_entry(arg));
        }
        let s = self.shift;
        if is_type(arg, addr_of_mut!(ffi::PyLong_Type)) {
            let mut overflow = 0;
            // SAFETY: an exact int, for which the call cannot fail (-1 is a value)
            let x = unsafe { ffi::PyLong_AsLongLongAndOverflow(arg.as_ptr(), &mut overflow) };
            if overflow == 0 {
                let tid = if x as i32 as i64 == x { self.tid_int[0] } else { self.tid_int[1] };
                return Ok(Entry::Code((tid << s) | p.int.mask_i64(x, arg)?, Read::Int(x)));
            }
            let Some(v) = int_value(arg) else {
                return Ok(Entry::Fallback);
            };
            let tid = if (-(1i128 << 31)..(1i128 << 31)).contains(&v) {
                self.tid_int[0]
            } else if (-(1i128 << 63)..(1i128 << 63)).contains(&v) {
                self.tid_int[1]
            } else {
                self.tid_int[2] // int_value stops at u64's range
            };
            let read = match i64::try_from(v) {
                Ok(small) => Read::Int(small),
                Err(_) => Read::UInt(v as u64),
            };
            return Ok(Entry::Code((tid << s) | p.int.mask(v, arg)?, read));
        }
        if is_type(arg, addr_of_mut!(ffi::PyFloat_Type)) {
            if !p.float.fast.is_empty() {
                return Ok(Entry::Fallback);
            }
            // SAFETY: an exact float
            let f = unsafe { ffi::PyFloat_AsDouble(arg.as_ptr()) };
            return Ok(Entry::Code((self.tid_f32 << s) | p.float.mask_i64(0, arg)?, Read::Float(f)));
        }
        if is_type(arg, addr_of_mut!(ffi::PyBool_Type)) {
            return Ok(Entry::Code(self.tid_i1 << s, Read::Bool(arg.is_truthy()?)));
        }
        if arg.is_none() || is_type(arg, addr_of_mut!(ffi::PyUnicode_Type)) {
            return Ok(self.constexpr_entry(arg));
        }
        let py = arg.py();
        // SAFETY: reading the type of a live object
        let tp = unsafe { ffi::Py_TYPE(arg.as_ptr()) } as usize;
        if let Some((t, d)) = self.last_tensor.get(py).get() {
            if t == tp {
                return self.direct_tensor_entry(p, arg, d);
            }
        }
        let info = self.type_info(arg)?;
        if let (Addr::DataPtr, Some(d)) = (info.addr, info.direct) {
            self.last_tensor.get(py).set(Some((tp, d)));
            return self.direct_tensor_entry(p, arg, d);
        }
        match info.addr {
            Addr::None => return Ok(Entry::Fallback),
            Addr::DLPack => {
                // Python predicates get the argument, which for DLPack is not
                // the tensor-like object they expect: Python keys those
                if !p.ptr.slow.is_empty() {
                    return Ok(Entry::Fallback);
                }
                let Some((tid, addr)) = self.dlpack(arg)? else {
                    return Ok(Entry::Fallback);
                };
                return Ok(Entry::Code((tid << s) | p.ptr.mask(addr as i128, arg)?, Read::Ptr(addr)));
            }
            _ => {}
        }
        let Some(dt) = Self::dtype(arg, &info) else {
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
        let Some(addr) = Self::address(arg, &info)? else {
            return Ok(Entry::Fallback);
        };
        let read = match info.addr {
            Addr::Host => Read::Host,
            _ if (0..(1i128 << 64)).contains(&addr) => Read::Ptr(addr as u64),
            _ => Read::Host, // not an address a kernel can take: the launch path decides
        };
        Ok(Entry::Code((tid << s) | p.ptr.mask(addr, arg)?, read))
    }

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
                Entry::Fallback => return Ok(false),
            };
            k.native[2 * i].write(code);
            k.native[2 * i + 1].write(value);
            k.reads[i].write(read);
        }
        Ok(true)
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

type Vectorcall = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    usize,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// `PyObject_Vectorcall` when the running interpreter exports it (3.11 and
/// later do; the limited API names it only from 3.12, above our abi3 floor).
fn vectorcall() -> Option<Vectorcall> {
    static VC: std::sync::OnceLock<Option<Vectorcall>> = std::sync::OnceLock::new();
    *VC.get_or_init(|| {
        extern "C" {
            fn dlsym(handle: *mut std::ffi::c_void, name: *const c_char) -> *mut std::ffi::c_void;
        }
        // SAFETY: RTLD_DEFAULT (null) searches the process's global symbols, libpython's among them
        let f = unsafe { dlsym(std::ptr::null_mut(), c"PyObject_Vectorcall".as_ptr()) };
        // SAFETY: the exported function has exactly this C signature
        (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut std::ffi::c_void, Vectorcall>(f) })
    })
}

/// `f(arg)`: through vectorcall (no argument tuple, no varargs walk) where
/// the interpreter has it.
///
/// # Safety
/// The GIL is held and both are live objects; returns a new reference or
/// NULL with an exception set.
pub(crate) unsafe fn call_one(f: *mut ffi::PyObject, arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    match vectorcall() {
        Some(vc) => vc(f, &arg, 1, std::ptr::null_mut()),
        None => ffi::PyObject_CallFunctionObjArgs(f, arg, std::ptr::null_mut::<ffi::PyObject>()),
    }
}

/// `obj.name()` without creating a bound method (CPython's method-call path).
fn call_method0<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: NULL-terminated argument list; a new reference or NULL with an exception set
    unsafe {
        Bound::from_owned_ptr_or_err(
            obj.py(),
            ffi::PyObject_CallMethodObjArgs(obj.as_ptr(), name.as_ptr(), std::ptr::null_mut::<ffi::PyObject>()),
        )
    }
}

/// `type.data_ptr` and `type.dtype` when both are C descriptors and the
/// type keeps the default `__getattribute__`, so calling the descriptors
/// does what `obj.data_ptr()` and `obj.dtype` do. (An instance attribute
/// named `data_ptr` would shadow the method for `obj.data_ptr()`; tensors do
/// not carry one.)
fn direct_descriptors(ty: &Bound<'_, PyType>) -> PyResult<DirectRefs> {
    let py = ty.py();
    let types = py.import("types")?;
    let (Ok(dp), Ok(dt), Ok(ga)) = (
        ty.getattr(intern!(py, "data_ptr")),
        ty.getattr(intern!(py, "dtype")),
        ty.getattr(intern!(py, "__getattribute__")),
    ) else {
        return Ok(None);
    };
    let is = |o: &Bound<'_, PyAny>, name: &str| -> PyResult<bool> { Ok(o.get_type().is(&types.getattr(name)?)) };
    if is(&dp, "MethodDescriptorType")? && is(&dt, "GetSetDescriptorType")? && is(&ga, "WrapperDescriptorType")? {
        return Ok(Some((dp.unbind(), dt.unbind())));
    }
    Ok(None)
}

/// Whether TRITIUM_INTERPRET or TRITON_INTERPRET asks for the interpreter
/// (1/true/yes/on, any case), read on every call from the mapping
/// `os.environ` keeps its encoded contents in (two dict lookups, where
/// `getenv` scans the whole environment), so it sees what Python's
/// `interpret_requested()` sees; the C environment when that mapping is
/// not there.
pub(crate) fn interpret_requested(py: Python<'_>) -> bool {
    static ENV: GILOnceCell<Option<(Py<PyDict>, [Py<PyBytes>; 2])>> = GILOnceCell::new();
    let env = ENV.get_or_init(py, || {
        let data = py.import("os").ok()?.getattr("environ").ok()?.getattr("_data").ok()?;
        let data = data.downcast_into::<PyDict>().ok()?.unbind();
        let keys = [b"TRITIUM_INTERPRET".as_slice(), b"TRITON_INTERPRET"].map(|k| PyBytes::new(py, k).unbind());
        Some((data, keys))
    });
    let truthy = |v: &[u8]| [&b"1"[..], b"true", b"yes", b"on"].iter().any(|t| v.eq_ignore_ascii_case(t));
    if let Some((data, keys)) = env {
        let data = data.bind(py);
        return keys.iter().any(|k| match data.get_item(k.bind(py)) {
            Ok(Some(v)) => v.downcast::<PyBytes>().map(|b| truthy(b.as_bytes())).unwrap_or(false),
            _ => false,
        });
    }
    extern "C" {
        fn getenv(name: *const c_char) -> *const c_char;
    }
    [c"TRITIUM_INTERPRET", c"TRITON_INTERPRET"].iter().any(|name| {
        // SAFETY: called with the GIL held, so no Python thread changes the environment meanwhile
        let v = unsafe { getenv(name.as_ptr()) };
        !v.is_null() && truthy(unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes())
    })
}

#[pymethods]
impl KeyPlan {
    #[new]
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
        })
    }

    /// The tensor-like types seen so far: (type, how its address is read,
    /// whether data_ptr/dtype are called straight from the type's C
    /// descriptors, whether through the descriptors' C functions).
    fn type_cache(&self, py: Python<'_>) -> Vec<(Py<PyType>, &'static str, bool, bool)> {
        let how = |a: Addr| match a {
            Addr::DataPtr => "data_ptr",
            Addr::Cuda => "__cuda_array_interface__",
            Addr::Host => "__array_interface__",
            Addr::DLPack => "__dlpack__",
            Addr::None => "none",
        };
        self.types
            .get(py)
            .borrow()
            .iter()
            .map(|(_, info, t, _)| {
                let c = info.direct.is_some_and(|d| d.c.is_some());
                (t.clone_ref(py), how(info.addr), info.direct.is_some(), c)
            })
            .collect()
    }

    /// The key of `args` (in parameter order), or None to let Python compute it.
    fn key<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut k = Keyed::new();
        if !self.keyed(args, &mut k)? {
            return Ok(None);
        }
        Ok(Some(self.python_key(&k, args)?))
    }

    /// µs per key of `args` (in parameter order) over `n` keys in a Rust
    /// loop: the key's cost on the launch path, which computes it from Rust
    /// inside the launch call, with no Python call of its own. For
    /// benches/key_bench.py; a call the launch path would give to Python is
    /// a ValueError.
    fn time_keys(&self, args: &Bound<'_, PyTuple>, n: u32) -> PyResult<f64> {
        let mut k = Keyed::new();
        if !self.keyed(args, &mut k)? {
            return Err(pyo3::exceptions::PyValueError::new_err("time_keys: the launch path does not key these arguments"));
        }
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(self.keyed(std::hint::black_box(args), &mut k)?);
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
    }

    /// The floor under a tensor argument's key entry: µs per `data_ptr()`
    /// plus `dtype` read of `t`, `n` times in a Rust loop, through the same
    /// calls the key makes (the descriptors' C functions where taken). For
    /// benches/key_bench.py.
    fn time_tensor_reads(&self, t: &Bound<'_, PyAny>, n: u32) -> PyResult<f64> {
        let info = self.type_info(t)?;
        if info.addr != Addr::DataPtr {
            return Err(pyo3::exceptions::PyTypeError::new_err("time_tensor_reads: an object with data_ptr()"));
        }
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(Self::dtype(t, &info));
            std::hint::black_box(Self::address(t, &info)?);
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
    }

    /// Keys `args` (in parameter order) as the launch path does, without
    /// creating any Python object, and says whether that path took the call
    /// (False: Python keys it). For tests, and what benches/key_bench.py
    /// times as the launch path's key.
    fn native_keys(&self, args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let mut k = Keyed::new();
        self.keyed(args, &mut k)
    }

    /// The key the launcher's table files `key` (a Python key) under, as
    /// a list of ints, or None when only the Python key can hold it (for tests).
    fn native_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u64>>> {
        self.native_of(key)
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

/// The launch path's interpreter switch, as the launcher reads it (for tests).
#[pyfunction(name = "interpret_requested")]
fn interpret_requested_py(py: Python<'_>) -> bool {
    interpret_requested(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeyPlan>()?;
    m.add_function(wrap_pyfunction!(interpret_requested_py, m)?)
}
