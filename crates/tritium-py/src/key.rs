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
use std::ptr::addr_of_mut;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::Borrowed;

use crate::reads::{address_of, dtype_of, int_value, is_type, probe, Addr, DirectReads, DirectRefs, TypeInfo};

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

/// Tests for one argument kind, each setting its bit: the built-in ones
/// sorted by kind when the plan is built (so the per-launch loops do not
/// branch on it), then Python predicates.
struct Tests {
    /// divisibility by a power of two n: (n - 1, bit), a mask test (also
    /// right for negative values in two's complement)
    pow2: Vec<(u64, u64)>,
    /// divisibility by another n: (n, bit)
    div: Vec<(i128, u64)>,
    /// equality with n: (n, bit)
    eq: Vec<(i128, u64)>,
    slow: Vec<(u64, PyObject)>,
}

impl Tests {
    fn parse(fast: Vec<(u64, bool, i64)>, slow: Vec<(u64, PyObject)>) -> PyResult<Self> {
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
    fn has_builtin(&self) -> bool {
        !(self.pow2.is_empty() && self.div.is_empty() && self.eq.is_empty())
    }

    #[inline(always)]
    fn mask(&self, v: i128, arg: &Bound<'_, PyAny>) -> PyResult<u64> {
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

/// Tensor-like types seen so far, by address, and how to read them; the
/// type object is kept alive so the address stays its.
type TypeCache = Vec<(usize, TypeInfo, Py<PyType>, DirectRefs)>;

/// `bind`'s result: (key, arguments in parameter order, launch options).
type Bound3<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>, Bound<'py, PyAny>);

/// What a launch does with an address: a kernel takes one within u64.
fn address_read(addr: i128) -> Read {
    if (0..(1i128 << 64)).contains(&addr) {
        Read::Ptr(addr as u64)
    } else {
        Read::Host // not an address a kernel can take: the launch path decides
    }
}

impl KeyPlan {
    fn type_info(&self, arg: &Bound<'_, PyAny>) -> PyResult<TypeInfo> {
        let py = arg.py();
        // SAFETY: reading the type of a live object
        let tp = unsafe { ffi::Py_TYPE(arg.as_ptr()) } as usize;
        if let Some((_, info, _, _)) = self.types.get(py).borrow().iter().find(|(t, ..)| *t == tp) {
            return Ok(*info);
        }
        // no borrow is held while Python runs (hasattr may run arbitrary code)
        let ty = arg.get_type();
        let (info, refs) = probe(&ty)?;
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
    #[inline(always)]
    fn dtype_tid(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let addr = dt.as_ptr() as usize;
        if let Some((_, tid, _)) = self.dtypes.get(dt.py()).borrow().iter().find(|(a, ..)| *a == addr) {
            return Ok(Some(*tid));
        }
        self.dtype_tid_first_sight(dt)
    }

    #[inline(never)]
    fn dtype_tid_first_sight(&self, dt: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let py = dt.py();
        let Some(tid) = self.ptr_tid.bind(py).get_item(dt)? else {
            return Ok(None);
        };
        let tid: u64 = tid.extract()?;
        let mut seen = self.dtypes.get(py).borrow_mut();
        if seen.len() < 32 {
            seen.push((dt.as_ptr() as usize, tid, dt.clone().unbind()));
        }
        Ok(Some(tid))
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
    /// type's descriptors (torch.Tensor): the launch path's hot case.
    #[inline(always)]
    fn direct_tensor_entry(&self, p: &Param, arg: &Bound<'_, PyAny>, d: DirectReads) -> PyResult<Entry> {
        let Some(dt) = d.dtype(arg) else {
            return Ok(Entry::Fallback);
        };
        let Some(tid) = self.dtype_tid(&dt)? else {
            return Ok(Entry::Fallback);
        };
        let Some(addr) = int_value(&d.data_ptr(arg)?) else {
            return Ok(Entry::Fallback);
        };
        Ok(Entry::Code((tid << self.shift) | p.ptr.mask(addr, arg)?, address_read(addr)))
    }

    #[inline(always)]
    fn entry(&self, p: &Param, arg: &Bound<'_, PyAny>) -> PyResult<Entry> {
        if p.constexpr {
            return Ok(self.constexpr_entry(arg));
        }
        let s = self.shift;
        if is_type(arg, addr_of_mut!(ffi::PyLong_Type)) {
            let Some(v) = int_value(arg) else {
                return Ok(Entry::Fallback);
            };
            // int_value stops at u64's range: what is not an i64 is a u64
            let (tid, read) = match i64::try_from(v) {
                Ok(x) if x as i32 as i64 == x => (self.tid_int[0], Read::Int(x)),
                Ok(x) => (self.tid_int[1], Read::Int(x)),
                Err(_) => (self.tid_int[2], Read::UInt(v as u64)),
            };
            return Ok(Entry::Code((tid << s) | p.int.mask(v, arg)?, read));
        }
        if is_type(arg, addr_of_mut!(ffi::PyFloat_Type)) {
            if p.float.has_builtin() {
                return Ok(Entry::Fallback);
            }
            // SAFETY: an exact float
            let f = unsafe { ffi::PyFloat_AsDouble(arg.as_ptr()) };
            return Ok(Entry::Code((self.tid_f32 << s) | p.float.mask(0, arg)?, Read::Float(f)));
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
        let Some(dt) = dtype_of(arg) else {
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
        let Some(addr) = address_of(arg, info.addr)? else {
            return Ok(Entry::Fallback);
        };
        let read = match info.addr {
            Addr::Host => Read::Host,
            _ => address_read(addr),
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
        let (Addr::DataPtr, Some(d)) = (info.addr, info.direct) else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "time_tensor_reads: a type whose data_ptr and dtype are read directly (torch.Tensor)",
            ));
        };
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(d.dtype(t));
            std::hint::black_box(d.data_ptr(t)?);
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeyPlan>()
}
