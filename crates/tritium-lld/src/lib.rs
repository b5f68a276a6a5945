//! tritium-lld: LLVM's ELF linker inside the process. An AMDGPU relocatable
//! object becomes a loadable code object (HSACO) with `ld.lld -shared`, as the
//! ROCm toolchain links one, but with no linker installed on the machine.
use std::os::raw::{c_char, c_int, c_ulong};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

// make sure llvm-sys's static LLVM libraries are linked in with us
#[allow(unused_imports)]
use llvm_sys as _;

extern "C" {
    fn tritium_lld_elf(argv: *const *const c_char, argc: c_int, diag: *mut c_char, diag_len: c_ulong, can_run_again: *mut c_int) -> c_int;
}

/// lld keeps global state during a link: one at a time per process; `false`
/// once lld reported its state unusable.
static LLD: Mutex<bool> = Mutex::new(true);

/// Links run in this process. lld's driver resets every LLVM command-line
/// option to its default, so whoever set one (NVPTX's short shared pointers)
/// sets it again when this moved: see `with_llvm_options`.
static LINKS: AtomicU64 = AtomicU64::new(0);

/// Runs `f` with the number of links run so far, no link running meanwhile:
/// a caller that set LLVM command-line options when the count was `n` sets
/// them again (they were reset to their defaults) if it is no longer `n`.
pub fn with_llvm_options<R>(f: impl FnOnce(u64) -> R) -> R {
    let _lld = LLD.lock().unwrap_or_else(|p| p.into_inner());
    f(LINKS.load(Ordering::Relaxed))
}
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The link's two files, removed when dropped (lld reads and writes files).
/// They sit in the temporary directory itself: a directory made and removed
/// per link cost about 0.3 ms more a link (vector_add on gfx942: the link's
/// best of 30 went from 1.3-1.4 ms to 1.0-1.1 ms).
struct Scratch {
    input: PathBuf,
    output: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.input);
        let _ = std::fs::remove_file(&self.output);
    }
}

/// Links one AMDGPU relocatable ELF object into a shared code object (HSACO).
/// Undefined symbols are errors (tritium links no device libraries), so a
/// call to a function nothing defines is reported here, by name.
pub fn link_hsaco(object: &[u8]) -> Result<Vec<u8>, String> {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem = std::env::temp_dir().join(format!("tritium-lld-{}-{n}", std::process::id()));
    let (input, output) = (stem.with_extension("o"), stem.with_extension("hsaco"));
    // a new file: never one (or a link) that was there before, which is
    // therefore not removed either
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&input).map_err(|e| format!("cannot create {}: {e}", input.display()))?;
    let scratch = Scratch { input, output };
    let (input, output) = (&scratch.input, &scratch.output);
    std::io::Write::write_all(&mut file, object).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    drop(file);
    let args = ["ld.lld".to_string(), "-shared".into(), "--no-undefined".into(), input.display().to_string(), "-o".into(), output.display().to_string()];
    let cargs: Vec<std::ffi::CString> = args.iter().map(|a| std::ffi::CString::new(a.as_str()).map_err(|_| format!("NUL in linker argument {a:?}"))).collect::<Result<_, _>>()?;
    let ptrs: Vec<*const c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
    let mut diag = vec![0u8; 8192];
    let mut again: c_int = 1;
    let mut usable = LLD.lock().unwrap_or_else(|p| p.into_inner());
    if !*usable {
        return Err("lld cannot link again in this process (an earlier link left it unusable)".into());
    }
    // SAFETY: argv points at live NUL-terminated strings; diag is writable for its length
    let rc = unsafe { tritium_lld_elf(ptrs.as_ptr(), ptrs.len() as c_int, diag.as_mut_ptr() as *mut c_char, diag.len() as c_ulong, &mut again) };
    *usable = again != 0;
    LINKS.fetch_add(1, Ordering::Relaxed);
    drop(usable);
    let end = diag.iter().position(|&b| b == 0).unwrap_or(diag.len());
    let message = String::from_utf8_lossy(&diag[..end]).trim().to_string();
    if rc != 0 {
        return Err(if message.is_empty() { format!("ld.lld failed with exit code {rc}") } else { message });
    }
    std::fs::read(&output).map_err(|e| format!("ld.lld wrote no code object: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_crash() {
        let err = link_hsaco(b"not an ELF object").unwrap_err();
        // lld names the object it could not read
        assert!(err.contains("tritium-lld-") && err.contains(".o"), "{err}");
        // and lld still links afterwards
        let err2 = link_hsaco(b"\x7fELF nope").unwrap_err();
        assert!(!err2.is_empty());
        // and each link's files are gone afterwards
        let ours = format!("tritium-lld-{}-", std::process::id());
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&ours)).collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
