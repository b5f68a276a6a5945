//! Finding NVIDIA's ptxas for tests: the runtime's finder (TRITIUM_PTXAS,
//! PATH) plus the `nvidia-cuda-nvcc` wheel that scripts/setup.sh installs
//! into the repository's `.venv`. Without one, a test that needs it is
//! skipped visibly (`crate::skip`), and fails under CI, which always has it.
use std::path::{Path, PathBuf};

/// The repository root (this crate lives in `crates/tritium-filetests`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ptxas to use, or why there is none.
pub fn locate() -> Result<PathBuf, String> {
    let venv_lib = repo_root().join(".venv/lib");
    let wheel_dirs: Vec<PathBuf> = std::fs::read_dir(&venv_lib)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path().join("site-packages/nvidia/cuda_nvcc/bin")).collect())
        .unwrap_or_default();
    match tritium_runtime::ptxas::find(&wheel_dirs) {
        Ok(Some(p)) => Ok(p),
        Ok(None) => Err(format!(
            "ptxas not found (TRITIUM_PTXAS, PATH, {}/python*/site-packages/nvidia/cuda_nvcc/bin); scripts/setup.sh installs it",
            venv_lib.display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Assembles `ptx` for `arch` when ptxas exists, failing the test if ptxas
/// rejects it; otherwise skips visibly. `what` names the test in the skip line.
pub fn check(ptx: &str, arch: &str, what: &str) {
    match locate() {
        Ok(ptxas) => {
            let kernel = first_entry(ptx).unwrap_or_default();
            if let Err(e) = tritium_runtime::ptxas::compile(&ptxas, ptx, arch, &kernel) {
                panic!("{what}: ptxas rejects the PTX for {arch}: {e}\n{ptx}");
            }
        }
        Err(reason) => crate::skip(what, &reason),
    }
}

/// The name of the first `.entry` of `ptx`.
pub fn first_entry(ptx: &str) -> Option<String> {
    entries(ptx).into_iter().next()
}

/// The names of the `.entry` functions of `ptx`, in order.
pub fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.split(".entry").nth(1))
        .filter_map(|rest| rest.trim().split(|c: char| c == '(' || c.is_whitespace()).next())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn entry_names() {
        let ptx = ".visible .entry add_kernel(\n.param .u64 p\n)\n.func helper()\n.visible .entry k2 (\n";
        assert_eq!(super::entries(ptx), ["add_kernel", "k2"]);
    }
}
