//! PTX → cubin with NVIDIA's `ptxas`, when one can be found: `TRITIUM_PTXAS`,
//! then `PATH`, then directories the caller adds (the Python side passes the
//! `nvidia-cuda-nvcc` wheel's bin dir). `-v` output gives the resource report
//! (registers, spills, shared bytes) recorded in the kernel's metadata.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Resources of one entry function, from `ptxas -v`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasInfo {
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_bytes: u32,
    pub shared_bytes: u32,
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// The ptxas to use, or None. `TRITIUM_PTXAS` wins when set; if it names no
/// executable that is an error (the user asked for that file).
pub fn find(extra_dirs: &[PathBuf]) -> Result<Option<PathBuf>> {
    if let Some(p) = std::env::var_os("TRITIUM_PTXAS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if is_executable(&p) {
            return Ok(Some(p));
        }
        return Err(Error::Ptxas(format!("TRITIUM_PTXAS={} is not an executable file", p.display())));
    }
    let path_dirs = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    Ok(path_dirs.iter().chain(extra_dirs.iter()).map(|d| d.join("ptxas")).find(|p| is_executable(p)))
}

/// `ptxas --version`'s last line ("Cuda compilation tools, release 12.9, V12.9.86"-like).
pub fn version(ptxas: &Path) -> Result<String> {
    let out = Command::new(ptxas).arg("--version").output().map_err(|e| Error::Ptxas(format!("cannot run {}: {e}", ptxas.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .rev()
        .find(|l| l.contains("release"))
        .or_else(|| text.lines().rev().find(|l| !l.trim().is_empty()))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| Error::Ptxas(format!("{} --version printed nothing", ptxas.display())))
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

struct TempFiles(Vec<PathBuf>);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Assembles `ptx` for `arch` (e.g. "sm_90a"); returns the cubin and the
/// resources of `kernel`. A ptxas error carries ptxas's own message.
pub fn compile(ptxas: &Path, ptx: &str, arch: &str, kernel: &str) -> Result<(Vec<u8>, PtxasInfo)> {
    spawn(ptxas, ptx, arch, kernel)?.wait()
}

/// A ptxas run started by `spawn`: its process and files.
pub struct Running {
    child: std::process::Child,
    files: TempFiles,
    arch: String,
    kernel: String,
}

/// Starts assembling `ptx` (as `compile`) and returns at once: the caller
/// does other work while ptxas runs, then `Running::wait`s for the cubin.
pub fn spawn(ptxas: &Path, ptx: &str, arch: &str, kernel: &str) -> Result<Running> {
    if !arch.starts_with("sm_") || arch.len() < 5 || !arch[3..].chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(Error::Ptxas(format!("bad GPU architecture {arch:?} (expected e.g. sm_90)")));
    }
    let stem = format!("tritium-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let dir = std::env::temp_dir();
    let files = TempFiles(vec![dir.join(format!("{stem}.ptx")), dir.join(format!("{stem}.cubin"))]);
    let (src, dst) = (&files.0[0], &files.0[1]);
    std::fs::write(src, ptx).map_err(|e| Error::Ptxas(format!("cannot write {}: {e}", src.display())))?;
    let child = Command::new(ptxas)
        .arg("-v")
        .arg(format!("--gpu-name={arch}"))
        .arg(src)
        .arg("-o")
        .arg(dst)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Error::Ptxas(format!("cannot run {}: {e}", ptxas.display())))?;
    Ok(Running { child, files, arch: arch.to_string(), kernel: kernel.to_string() })
}

impl Running {
    /// Waits for ptxas; the cubin and the kernel's resources, or ptxas's error.
    pub fn wait(self) -> Result<(Vec<u8>, PtxasInfo)> {
        let Running { child, files, arch, kernel } = self;
        let out = child.wait_with_output().map_err(|e| Error::Ptxas(format!("ptxas did not finish: {e}")))?;
        let log = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            return Err(Error::Ptxas(format!("assembling kernel '{kernel}' for {arch} failed:\n{}", log.trim_end())));
        }
        let dst = &files.0[1];
        let cubin = std::fs::read(dst).map_err(|e| Error::Ptxas(format!("cannot read {}: {e}", dst.display())))?;
        let info = parse_report(&log, &kernel)?;
        Ok((cubin, info))
    }
}

fn number_before(text: &str, unit: &str) -> Option<u32> {
    let at = text.find(unit)?;
    text[..at].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
}

/// The resource report of `kernel` in `ptxas -v` output.
pub fn parse_report(log: &str, kernel: &str) -> Result<PtxasInfo> {
    let mut info = None::<PtxasInfo>;
    let mut in_kernel = false;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            in_kernel = rest.split('\'').next() == Some(kernel);
            if in_kernel {
                info = Some(PtxasInfo::default());
            }
            continue;
        }
        let (true, Some(i)) = (in_kernel, info.as_mut()) else { continue };
        if line.contains("bytes stack frame") {
            i.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
            i.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
            i.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
        } else if line.contains(" registers") && line.contains("Used") {
            i.registers = number_before(line, " registers").unwrap_or(0);
            i.shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
        }
    }
    info.ok_or_else(|| Error::Ptxas(format!("no resource report for kernel '{kernel}' in ptxas output:\n{log}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Used 99 registers, used 0 barriers
ptxas info    : Compiling entry function 'add' for 'sm_90'
ptxas info    : Function properties for add
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 27 registers, used 1 barriers, 2048 bytes smem, 384 bytes cmem[0]
ptxas info    : Compile time = 7.983 ms
";

    #[test]
    fn report_of_the_named_kernel() {
        let i = parse_report(REPORT, "add").unwrap();
        assert_eq!(i, PtxasInfo { registers: 27, spill_stores: 8, spill_loads: 4, stack_bytes: 16, shared_bytes: 2048 });
        assert_eq!(parse_report(REPORT, "other").unwrap().registers, 99);
        assert!(parse_report(REPORT, "missing").unwrap_err().to_string().contains("'missing'"));
    }

    #[test]
    fn bad_arch_is_rejected_before_running() {
        let e = compile(Path::new("/bin/true"), "", "compute_90; rm", "k").unwrap_err();
        assert!(e.to_string().contains("bad GPU architecture"));
    }

    #[test]
    fn find_skips_non_executables() {
        let dir = std::env::temp_dir().join(format!("tritium-ptxas-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ptxas"), "not executable").unwrap();
        // only meaningful when no other ptxas is reachable; TRITIUM_PTXAS is not set by cargo test
        if std::env::var_os("TRITIUM_PTXAS").is_none() {
            let found = find(&[dir.clone()]).unwrap();
            assert_ne!(found.as_deref(), Some(dir.join("ptxas").as_path()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
