//! The compile-time bench suite's data: the fixed kernels in `kernels/*.tir`
//! (written by `kernels/gen.py` from Python @jit kernels) and, for each, the
//! forms every stage starts from, prepared once outside the timed loop.

use std::path::{Path, PathBuf};

use tritium_ir::Module;

/// One bench kernel in each form a stage may take as input.
pub struct Kernel {
    pub name: String,
    pub text: String,
    pub module: Module,
    pub bytes: Vec<u8>,
    /// Ops over all functions: the unit for criterion's throughput.
    pub ops: u64,
}

/// Why the kernel directory cannot be benched; names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {err}", path = .0.display(), err = .1)]
    Io(PathBuf, std::io::Error),
    #[error("{path}: does not parse ({err}); re-run kernels/gen.py", path = .0.display(), err = .1)]
    Parse(PathBuf, Box<tritium_ir::ParseError>),
    #[error("{path}: does not verify ({err}); re-run kernels/gen.py", path = .0.display(), err = .1)]
    Verify(PathBuf, Box<tritium_ir::VerifyError>),
    #[error("{path}: no .tir kernels found", path = .0.display())]
    Empty(PathBuf),
}

/// Where the checked-in kernels live.
pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

/// Every `*.tir` in `dir`, sorted by name, parsed and verified: a stage bench
/// must never time the error path of a stale file.
pub fn load_kernels(dir: &Path) -> Result<Vec<Kernel>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::Io(dir.to_path_buf(), e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| LoadError::Io(dir.to_path_buf(), e))?
            .path();
        if path.extension().is_some_and(|x| x == "tir") {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return Err(LoadError::Empty(dir.to_path_buf()));
    }
    paths.sort();
    paths.iter().map(|p| load_kernel(p)).collect()
}

fn load_kernel(path: &Path) -> Result<Kernel, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Io(path.to_path_buf(), e))?;
    let module =
        tritium_ir::parse(&text).map_err(|e| LoadError::Parse(path.to_path_buf(), Box::new(e)))?;
    tritium_ir::verify(&module).map_err(|e| LoadError::Verify(path.to_path_buf(), Box::new(e)))?;
    let bytes = tritium_ir::encode(&module);
    let ops = module.funcs.iter().map(|(_, f)| f.ops.len() as u64).sum();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Kernel {
        name,
        text,
        module,
        bytes,
        ops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_kernels_load_and_round_trip() {
        let kernels = load_kernels(&kernels_dir()).expect("bench kernels must load");
        let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
        for want in [
            "vector_add",
            "softmax",
            "layer_norm_fwd",
            "matmul",
            "big_elementwise",
        ] {
            assert!(names.contains(&want), "missing kernel {want}: {names:?}");
        }
        for k in &kernels {
            // the stages see consistent inputs: text and bytes are the same module
            assert_eq!(
                tritium_ir::print(&k.module),
                k.text,
                "{}: text is not in printed form",
                k.name
            );
            let decoded = tritium_ir::decode(&k.bytes).expect("encoded kernel must decode");
            assert_eq!(tritium_ir::encode(&decoded), k.bytes, "{}", k.name);
        }
        let big = kernels
            .iter()
            .find(|k| k.name == "big_elementwise")
            .map_or(0, |k| k.ops);
        assert!(
            big >= 4000,
            "big_elementwise should have about 5,000 ops, has {big}"
        );
    }

    #[test]
    fn bad_kernel_files_are_errors_not_panics() {
        let dir = std::env::temp_dir().join(format!("tritium-benches-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(load_kernels(&dir), Err(LoadError::Empty(_))));
        std::fs::write(dir.join("bad.tir"), "func @f( {").unwrap();
        let err = load_kernels(&dir).err().expect("garbage must not load");
        assert!(matches!(err, LoadError::Parse(..)), "{err}");
        assert!(err.to_string().contains("bad.tir"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
