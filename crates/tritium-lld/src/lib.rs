//! tritium-lld: LLVM's ELF linker inside the process. An AMDGPU relocatable
//! object becomes a loadable code object (HSACO) with `ld.lld -shared`, as the
//! ROCm toolchain links one, but with no linker installed on the machine.
use std::os::raw::{c_char, c_int, c_ulong};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

// make sure llvm-sys's static LLVM libraries are linked in with us
#[allow(unused_imports)]
use llvm_sys as _;

extern "C" {
    fn tritium_lld_elf(argv: *const *const c_char, argc: c_int, diag: *mut c_char, diag_len: c_ulong, can_run_again: *mut c_int) -> c_int;
    fn tritium_llvm_option(name: *const c_char, value: *const c_char) -> c_int;
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

/// An LLVM command-line option and its value, as `llc -name=value` takes it.
pub type CodegenOption = (&'static str, &'static str);

/// The code-generation options in force (the rest at their defaults), how
/// many threads generate code or link under them, and how many wait to
/// change them.
struct Regime {
    options: &'static [CodegenOption],
    users: usize,
    waiting: usize,
}

static REGIME: Mutex<Regime> = Mutex::new(Regime { options: &[], users: 0, waiting: 0 });
static REGIME_CHANGED: Condvar = Condvar::new();

/// Leaves the regime (also when `f` panics).
struct RegimeUser;

impl Drop for RegimeUser {
    fn drop(&mut self) {
        let mut r = REGIME.lock().unwrap_or_else(|p| p.into_inner());
        r.users -= 1;
        if r.users == 0 {
            REGIME_CHANGED.notify_all();
        }
    }
}

/// Runs `f` (an LLVM code generation) with exactly `options` set among the
/// options any caller passes here, the others at their defaults. LLVM's
/// options are process-wide and a code generation pipeline reads them when
/// it is built, so callers with the same options run at once and a caller
/// with others waits until none runs (a waiting caller goes before later
/// arrivals). A link runs under no options: lld resets every option to its
/// default when it starts. A thread calls it for one code generation at a
/// time (inside `f`, another call with other options would wait for itself).
pub fn with_codegen_options<R>(options: &'static [CodegenOption], f: impl FnOnce() -> R) -> Result<R, String> {
    let mut r = REGIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut queued = false;
    loop {
        if r.options == options && (queued || r.waiting == 0) {
            break;
        }
        if r.users == 0 {
            // no code generation or link runs: none reads the options now
            let _lld = LLD.lock().unwrap_or_else(|p| p.into_inner());
            let set = r.options.iter().filter(|(name, _)| !options.iter().any(|(n, _)| n == name)).try_for_each(|&(name, _)| set_llvm_option(name, None))
                .and_then(|()| options.iter().try_for_each(|&(name, value)| set_llvm_option(name, Some(value))));
            if let Err(e) = set {
                // back to the defaults, which is what the empty set says
                for &(name, _) in r.options.iter().chain(options) {
                    let _ = set_llvm_option(name, None);
                }
                r.options = &[];
                if queued {
                    r.waiting -= 1;
                }
                REGIME_CHANGED.notify_all();
                return Err(e);
            }
            r.options = options;
            REGIME_CHANGED.notify_all();
            break;
        }
        if !queued {
            r.waiting += 1;
            queued = true;
        }
        r = REGIME_CHANGED.wait(r).unwrap_or_else(|p| p.into_inner());
    }
    if queued {
        r.waiting -= 1;
    }
    r.users += 1;
    drop(r);
    let _user = RegimeUser;
    Ok(f())
}

/// Sets one LLVM option (`None`: back to its default, as never given).
fn set_llvm_option(name: &str, value: Option<&str>) -> Result<(), String> {
    let cname = std::ffi::CString::new(name).map_err(|_| format!("NUL in LLVM option name {name:?}"))?;
    let cvalue = value.map(|v| std::ffi::CString::new(v).map_err(|_| format!("NUL in LLVM option value {v:?}"))).transpose()?;
    // SAFETY: NUL-terminated strings that outlive the call; the caller holds
    // the LLD lock and no code generation runs
    let rc = unsafe { tritium_llvm_option(cname.as_ptr(), cvalue.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())) };
    match rc {
        0 => Ok(()),
        1 => Err(format!("LLVM has no option -{name}")),
        _ => Err(format!("LLVM option -{name} does not take the value {:?}", value.unwrap_or(""))),
    }
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
    // lld resets every LLVM option when it starts: no code generation that
    // reads options set through `with_codegen_options` runs meanwhile
    with_codegen_options(&[], || link(object))?
}

fn link(object: &[u8]) -> Result<Vec<u8>, String> {
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
    fn codegen_options_are_set_by_name_and_checked() {
        assert_eq!(with_codegen_options(&[("misched-limit", "16")], || 7), Ok(7));
        let err = with_codegen_options(&[("tritium-no-such-option", "1")], || ()).unwrap_err();
        assert!(err.contains("-tritium-no-such-option"), "{err}");
        let err = with_codegen_options(&[("misched-limit", "many")], || ()).unwrap_err();
        assert!(err.contains("-misched-limit") && err.contains("many"), "{err}");
        // an option set twice in a row, then back to the default, then again
        for _ in 0..2 {
            assert_eq!(with_codegen_options(&[("misched-limit", "8")], || 1), Ok(1));
            assert_eq!(with_codegen_options(&[], || 2), Ok(2));
        }
    }

    #[test]
    fn callers_with_other_options_never_overlap() {
        use std::sync::atomic::AtomicUsize;
        static INSIDE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
        const SETS: [&[CodegenOption]; 2] = [&[], &[("misched-limit", "12")]];
        let threads: Vec<_> = (0..6)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..40 {
                        let mine = (t + i) % 2;
                        with_codegen_options(SETS[mine], || {
                            INSIDE[mine].fetch_add(1, Ordering::SeqCst);
                            assert_eq!(INSIDE[1 - mine].load(Ordering::SeqCst), 0, "callers with other options overlap");
                            std::thread::yield_now();
                            INSIDE[mine].fetch_sub(1, Ordering::SeqCst);
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

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
