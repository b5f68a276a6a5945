//! The CUDA driver API, resolved with dlopen/dlsym on first use. Only the
//! entry points tritium needs; each returns `Error::Cuda` naming the call.
//! Contexts follow PyTorch: the device's primary context, made current on the
//! calling thread when none is.
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

use crate::error::{Error, Result};

pub type CuResult = c_int;
pub type CuDevice = c_int;
pub type CuContext = *mut c_void;
pub type CuModule = *mut c_void;
pub type CuFunction = *mut c_void;
pub type CuStream = *mut c_void;

// CUdevice_attribute values (cuda.h)
pub const ATTR_MAX_THREADS_PER_BLOCK: c_int = 1;
pub const ATTR_MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
pub const ATTR_WARP_SIZE: c_int = 10;
pub const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
pub const ATTR_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
pub const ATTR_COMPUTE_CAPABILITY_MINOR: c_int = 76;
pub const ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;

// CUfunction_attribute values (cuda.h)
pub const FUNC_MAX_THREADS_PER_BLOCK: c_int = 0;
pub const FUNC_SHARED_SIZE_BYTES: c_int = 1;
pub const FUNC_LOCAL_SIZE_BYTES: c_int = 3;
pub const FUNC_NUM_REGS: c_int = 4;
pub const FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

// CUfunc_cache values (cuda.h)
pub const FUNC_CACHE_PREFER_SHARED: c_int = 1;

const CUDA_SUCCESS: CuResult = 0;

/// CUlaunchConfig (cuda.h), without launch attributes.
#[repr(C)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub stream: CuStream,
    pub attrs: *mut c_void,
    pub num_attrs: u32,
}

pub type LaunchKernelEx =
    unsafe extern "C" fn(*const LaunchConfig, CuFunction, *mut *mut c_void, *mut *mut c_void) -> CuResult;

macro_rules! driver_api {
    ($($field:ident : fn($($arg:ty),*) = $sym:literal;)*) => {
        /// Entry points of libcuda, resolved once.
        #[allow(non_snake_case)]
        pub struct Driver {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> CuResult,)*
            /// cuLaunchKernelEx (drivers of CUDA 12 and later)
            pub launch_kernel_ex: Option<LaunchKernelEx>,
            /// cuTensorMapEncodeTiled (drivers of CUDA 12 and later)
            pub tensor_map_encode_tiled: Option<crate::tensormap::EncodeTiled>,
            cu_get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
            cu_get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
        }

        impl Driver {
            fn resolve(lib: *mut c_void) -> std::result::Result<Driver, String> {
                Ok(Driver {
                    launch_kernel_ex: symbol(lib, "cuLaunchKernelEx")
                        .ok()
                        .map(|p| unsafe { std::mem::transmute::<*mut c_void, LaunchKernelEx>(p) }),
                    tensor_map_encode_tiled: symbol(lib, "cuTensorMapEncodeTiled")
                        .ok()
                        .map(|p| unsafe { std::mem::transmute::<*mut c_void, crate::tensormap::EncodeTiled>(p) }),
                    $($field: unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(symbol(lib, $sym)?) },)*
                    cu_get_error_name: unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult>(symbol(lib, "cuGetErrorName")?) },
                    cu_get_error_string: unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult>(symbol(lib, "cuGetErrorString")?) },
                })
            }
        }
    };
}

driver_api! {
    init: fn(c_uint) = "cuInit";
    driver_get_version: fn(*mut c_int) = "cuDriverGetVersion";
    device_get_count: fn(*mut c_int) = "cuDeviceGetCount";
    device_get: fn(*mut CuDevice, c_int) = "cuDeviceGet";
    device_get_attribute: fn(*mut c_int, c_int, CuDevice) = "cuDeviceGetAttribute";
    device_get_name: fn(*mut c_char, c_int, CuDevice) = "cuDeviceGetName";
    primary_ctx_retain: fn(*mut CuContext, CuDevice) = "cuDevicePrimaryCtxRetain";
    ctx_get_current: fn(*mut CuContext) = "cuCtxGetCurrent";
    ctx_set_current: fn(CuContext) = "cuCtxSetCurrent";
    ctx_get_device: fn(*mut CuDevice) = "cuCtxGetDevice";
    ctx_synchronize: fn() = "cuCtxSynchronize";
    module_load_data_ex: fn(*mut CuModule, *const c_void, c_uint, *mut c_int, *mut *mut c_void) = "cuModuleLoadDataEx";
    module_unload: fn(CuModule) = "cuModuleUnload";
    module_get_function: fn(*mut CuFunction, CuModule, *const c_char) = "cuModuleGetFunction";
    func_get_attribute: fn(*mut c_int, c_int, CuFunction) = "cuFuncGetAttribute";
    func_set_attribute: fn(CuFunction, c_int, c_int) = "cuFuncSetAttribute";
    func_set_cache_config: fn(CuFunction, c_int) = "cuFuncSetCacheConfig";
    launch_kernel: fn(CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream, *mut *mut c_void, *mut *mut c_void) = "cuLaunchKernel";
}

// The function pointers are plain code addresses into a library that is never unloaded.
unsafe impl Send for Driver {}
unsafe impl Sync for Driver {}

fn symbol(lib: *mut c_void, name: &str) -> std::result::Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|e| e.to_string())?;
    let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
    if p.is_null() {
        return Err(format!("the CUDA driver library lacks {name} (driver too old?)"));
    }
    Ok(p)
}

fn dl_error() -> String {
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Library names tried in order; `TRITIUM_LIBCUDA` (a path) comes first when set.
pub fn library_candidates() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(p) = std::env::var("TRITIUM_LIBCUDA") {
        if !p.is_empty() {
            v.push(p);
        }
    }
    v.push("libcuda.so.1".into());
    v.push("libcuda.so".into());
    v
}

fn load() -> std::result::Result<Driver, String> {
    let mut why = Vec::new();
    for name in library_candidates() {
        let c = CString::new(name.clone()).map_err(|e| e.to_string())?;
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if lib.is_null() {
            why.push(format!("{name}: {}", dl_error()));
            continue;
        }
        let driver = Driver::resolve(lib)?;
        let rc = unsafe { (driver.init)(0) };
        if rc != CUDA_SUCCESS {
            let e = driver.error("cuInit", rc);
            return Err(format!("{name} loaded but {e}"));
        }
        return Ok(driver);
    }
    Err(why.join("; "))
}

static DRIVER: OnceLock<std::result::Result<Driver, String>> = OnceLock::new();

/// The process-wide driver, loaded and initialised on first use.
pub fn driver() -> Result<&'static Driver> {
    DRIVER.get_or_init(load).as_ref().map_err(|e| Error::NoDriver(e.clone()))
}

impl Driver {
    /// `rc` as an `Error::Cuda` with the driver's own name and description.
    pub fn error(&self, call: &'static str, rc: CuResult) -> Error {
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut p: *const c_char = std::ptr::null();
            if unsafe { f(rc, &mut p) } == CUDA_SUCCESS && !p.is_null() {
                Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            } else {
                None
            }
        };
        Error::Cuda {
            call,
            kernel: None,
            code: rc,
            name: text(self.cu_get_error_name).unwrap_or_else(|| format!("CUDA error {rc}")),
            message: text(self.cu_get_error_string).unwrap_or_else(|| "unknown error".into()),
        }
    }

    pub fn check(&self, call: &'static str, rc: CuResult) -> Result<()> {
        if rc == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self.error(call, rc))
        }
    }

    pub fn version(&self) -> Result<i32> {
        let mut v = 0;
        self.check("cuDriverGetVersion", unsafe { (self.driver_get_version)(&mut v) })?;
        Ok(v)
    }

    pub fn device_count(&self) -> Result<i32> {
        let mut n = 0;
        self.check("cuDeviceGetCount", unsafe { (self.device_get_count)(&mut n) })?;
        Ok(n)
    }

    /// This thread's current context, null when it has none (one driver
    /// call, cheap enough to ask on every launch).
    pub fn current_context(&self) -> Result<CuContext> {
        let mut ctx: CuContext = std::ptr::null_mut();
        self.check("cuCtxGetCurrent", unsafe { (self.ctx_get_current)(&mut ctx) })?;
        Ok(ctx)
    }

    /// Makes a context for `device` current on this thread: the current one when
    /// it already belongs to `device` (PyTorch's), else the primary context.
    pub fn ensure_context(&self, device: i32) -> Result<CuContext> {
        let mut ctx: CuContext = std::ptr::null_mut();
        self.check("cuCtxGetCurrent", unsafe { (self.ctx_get_current)(&mut ctx) })?;
        if !ctx.is_null() {
            let mut d: CuDevice = -1;
            self.check("cuCtxGetDevice", unsafe { (self.ctx_get_device)(&mut d) })?;
            if d == device {
                return Ok(ctx);
            }
        }
        let dev = Device::get(self, device)?;
        let mut primary: CuContext = std::ptr::null_mut();
        self.check("cuDevicePrimaryCtxRetain", unsafe { (self.primary_ctx_retain)(&mut primary, dev.handle) })?;
        self.check("cuCtxSetCurrent", unsafe { (self.ctx_set_current)(primary) })?;
        Ok(primary)
    }

    pub fn synchronize(&self) -> Result<()> {
        self.check("cuCtxSynchronize", unsafe { (self.ctx_synchronize)() })
    }
}

/// One device and the attributes tritium compiles and launches for.
#[derive(Clone, Debug)]
pub struct Device {
    pub ordinal: i32,
    pub handle: CuDevice,
}

/// What the compiler and launcher need to know about a device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    pub capability: (i32, i32),
    pub multiprocessors: i32,
    pub max_threads_per_block: i32,
    pub max_shared_per_block: i32,
    pub max_shared_per_block_optin: i32,
    pub warp_size: i32,
}

impl Device {
    pub fn get(driver: &Driver, ordinal: i32) -> Result<Device> {
        let count = driver.device_count()?;
        if ordinal < 0 || ordinal >= count {
            return Err(Error::Invalid(format!("CUDA device {ordinal} does not exist ({count} device(s) present)")));
        }
        let mut handle: CuDevice = 0;
        driver.check("cuDeviceGet", unsafe { (driver.device_get)(&mut handle, ordinal) })?;
        Ok(Device { ordinal, handle })
    }

    pub fn attribute(&self, driver: &Driver, attr: c_int) -> Result<i32> {
        let mut v = 0;
        driver.check("cuDeviceGetAttribute", unsafe { (driver.device_get_attribute)(&mut v, attr, self.handle) })?;
        Ok(v)
    }

    pub fn info(&self, driver: &Driver) -> Result<DeviceInfo> {
        let mut buf = [0 as c_char; 256];
        driver.check("cuDeviceGetName", unsafe { (driver.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, self.handle) })?;
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        Ok(DeviceInfo {
            name,
            capability: (
                self.attribute(driver, ATTR_COMPUTE_CAPABILITY_MAJOR)?,
                self.attribute(driver, ATTR_COMPUTE_CAPABILITY_MINOR)?,
            ),
            multiprocessors: self.attribute(driver, ATTR_MULTIPROCESSOR_COUNT)?,
            max_threads_per_block: self.attribute(driver, ATTR_MAX_THREADS_PER_BLOCK)?,
            max_shared_per_block: self.attribute(driver, ATTR_MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_per_block_optin: self.attribute(driver, ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            warp_size: self.attribute(driver, ATTR_WARP_SIZE)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_a_clear_error() {
        // no GPU machine has a libcuda at this path, so loading must fail cleanly
        let c = CString::new("/nonexistent/libcuda.so.1").unwrap();
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW) };
        assert!(lib.is_null());
        assert!(dl_error().contains("nonexistent"));
    }

    #[test]
    fn env_override_comes_first() {
        let v = library_candidates();
        assert_eq!(v[v.len() - 2], "libcuda.so.1");
        assert_eq!(v[v.len() - 1], "libcuda.so");
    }

    #[test]
    fn error_names_the_call_and_kernel() {
        let e = Error::Cuda { call: "cuLaunchKernel", kernel: None, code: 1, name: "CUDA_ERROR_INVALID_VALUE".into(), message: "invalid argument".into() }
            .for_kernel("add");
        assert_eq!(e.to_string(), "CUDA error in cuLaunchKernel for kernel 'add': CUDA_ERROR_INVALID_VALUE (invalid argument)");
    }
}
