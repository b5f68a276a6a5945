//! The pass manager: runs the tile-level passes in order on a verified
//! module, verifying after each when asked, and hands the module to a dump
//! callback after each pass (`--dump-stages`). Codegen calls it before layout
//! assignment.
use tritium_ir::{verify, Module, VerifyError};

use crate::{canonicalize, eliminate_common_subexpressions, eliminate_dead_code, expand_block_memory, fold_constants, fuse_dot_accumulate};

/// Which passes run; all by default. `verify_each` re-verifies after every
/// pass (on in debug builds and tests: a pass producing invalid IR is a bug).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassOptions {
    pub fold: bool,
    pub canonicalize: bool,
    pub cse: bool,
    pub dce: bool,
    /// `acc + dot(a, b, 0)` into `dot(a, b, acc)` (a float contraction).
    pub dot_acc: bool,
    pub verify_each: bool,
}

impl Default for PassOptions {
    fn default() -> Self {
        PassOptions { fold: true, canonicalize: true, cse: true, dce: true, dot_acc: true, verify_each: cfg!(debug_assertions) }
    }
}

impl PassOptions {
    /// No optional pass: the module goes to codegen as the frontend built
    /// it, but for the block memory ops `run_passes` always expands (no
    /// target lowers them as they are).
    pub fn none() -> Self {
        PassOptions { fold: false, canonicalize: false, cse: false, dce: false, dot_acc: false, verify_each: false }
    }
}

/// What each pass changed, in the order they ran: (pass, rewrites).
pub type PassStats = Vec<(&'static str, usize)>;

type Pass = fn(&mut Module) -> usize;

/// The passes, in order. Folding first turns specialized arguments and
/// constant chains into constants the identities then see; a second round
/// runs only if the first changed anything (x*0 makes new constants).
const PASSES: &[(&str, Pass)] = &[
    ("fold", fold_constants),
    ("canonicalize", canonicalize),
    ("cse", eliminate_common_subexpressions),
    ("dce", eliminate_dead_code),
    // after dce, so the dot's zero accumulator has lost its dead users
    ("dot_acc", fuse_dot_accumulate),
];

const ROUNDS: usize = 2;

/// Runs the enabled passes on `m` (which must verify). `dump` sees the
/// module after each pass that ran, under the pass's name.
pub fn run_passes(
    m: &mut Module,
    opts: &PassOptions,
    mut dump: Option<&mut dyn FnMut(&str, &Module)>,
) -> Result<PassStats, VerifyError> {
    let mut stats = PassStats::new();
    // a lowering rather than an optimization: it always runs, first, so the
    // passes below clean up the index arithmetic it writes. (A target that
    // claims block accesses whole, TMA on sm_90a, does so before this.)
    let expanded = expand_block_memory(m);
    if expanded > 0 {
        stats.push(("expand_block_memory", expanded));
        if opts.verify_each {
            verify(m)?;
        }
        if let Some(d) = dump.as_mut() {
            d("expand_block_memory", m);
        }
    }
    for round in 0..ROUNDS {
        let mut changed = 0;
        for &(name, pass) in PASSES {
            let on = match name {
                "fold" => opts.fold,
                "canonicalize" => opts.canonicalize,
                "cse" => opts.cse,
                "dot_acc" => opts.dot_acc,
                _ => opts.dce,
            };
            if !on {
                continue;
            }
            let n = pass(m);
            changed += n;
            stats.push((name, n));
            if opts.verify_each {
                verify(m)?;
            }
            if let Some(d) = dump.as_mut() {
                d(name, m);
            }
        }
        if changed == 0 || round + 1 == ROUNDS {
            break;
        }
    }
    Ok(stats)
}
