//! Membar: decides which shared-memory barriers a function needs. Which ops
//! touch shared memory, and where, is only known while lowering (layouts and
//! implicit conversions decide it), so codegen records an *access trace* as it
//! goes, with a *candidate* barrier before each group of accesses that might
//! need one, and this analysis says which candidates stay. Per function it
//! also returns a `Summary` (accesses before its first barrier, accesses still
//! pending at its exit) so callers synchronise only where a callee's accesses
//! overlap their own; functions are analysed callees first.
use std::collections::{BTreeSet, HashMap};
use std::fmt;

use tritium_ir::Func;

use crate::callgraph::CallGraph;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessKind {
    Read,
    Write,
}

/// Bytes `[lo, hi)` relative to the function's shared-memory base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    pub lo: u32,
    pub hi: u32,
    pub kind: AccessKind,
}

impl Access {
    pub fn read(lo: u32, hi: u32) -> Access {
        Access { lo, hi, kind: AccessKind::Read }
    }

    pub fn write(lo: u32, hi: u32) -> Access {
        Access { lo, hi, kind: AccessKind::Write }
    }

    /// RAW, WAR and WAW on overlapping bytes; two reads never conflict.
    pub fn conflicts(&self, other: &Access) -> bool {
        let both_read = self.kind == AccessKind::Read && other.kind == AccessKind::Read;
        !both_read && self.lo < other.hi && other.lo < self.hi
    }

    fn shifted(&self, base: u32) -> Result<Access, MembarError> {
        let lo = self.lo.checked_add(base).ok_or(MembarError::Overflow { base })?;
        let hi = self.hi.checked_add(base).ok_or(MembarError::Overflow { base })?;
        Ok(Access { lo, hi, kind: self.kind })
    }
}

/// Names one candidate barrier of a function (codegen numbers them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CandidateId(pub u32);

/// One step of a function's access trace, in program order.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Access(Access),
    /// A barrier; `None` always stays (e.g. between a scratch op's own writes
    /// and reads), `Some` is a candidate this analysis keeps or drops.
    Barrier(Option<CandidateId>),
    /// A body that runs zero or more times.
    Loop(Vec<Node>),
    If(Vec<Node>, Vec<Node>),
    /// A call whose callee's buffers start at `base` of the caller's space.
    Call { callee: Func, base: u32 },
    /// Every thread waited (on an mbarrier) until the asynchronous writes
    /// into `[lo, hi)` it needs landed, and sees them: pending writes inside
    /// the range need no barrier before later reads. Only TMA copies write
    /// such a range while it is live, so no other write is dropped.
    Landed { lo: u32, hi: u32 },
}

/// What callers need to know about a function's shared-memory accesses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Accesses that may happen before the function's first barrier.
    pub entry: Vec<Access>,
    /// Accesses that may still be unsynchronised when it returns.
    pub exit: Vec<Access>,
    /// Some path through the function runs no barrier at all.
    pub transparent: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MembarOptions {
    /// False drops the barriers needed only because of a callee's summary
    /// (a debug switch: shows that a kernel relies on them).
    pub cross_call_barriers: bool,
}

impl Default for MembarOptions {
    fn default() -> Self {
        MembarOptions { cross_call_barriers: true }
    }
}

/// One function's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncMembar {
    /// The candidate barriers that must stay.
    pub needed: BTreeSet<CandidateId>,
    /// Those of `needed` first required by a conflict with a callee's accesses.
    pub cross_call: BTreeSet<CandidateId>,
    pub summary: Summary,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MembarError {
    /// Two conflicting accesses with no barrier, candidate or fixed, between
    /// them: the trace itself is wrong (a lowering bug).
    Unsynchronized { first: Access, second: Access },
    /// A call to a function with no summary yet (not analysed callees first).
    UnknownCallee(Func),
    Overflow { base: u32 },
}

impl fmt::Display for MembarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MembarError::Unsynchronized { first, second } => {
                write!(f, "shared-memory access {second:?} conflicts with {first:?} and no barrier can separate them")
            }
            MembarError::UnknownCallee(func) => write!(f, "call to function {} before its membar summary exists", func.0),
            MembarError::Overflow { base } => write!(f, "callee accesses shifted by base {base} overflow u32"),
        }
    }
}

impl std::error::Error for MembarError {}

/// An access not yet separated from later ones by a barrier, with the latest
/// candidate passed since it on this path (the one that would separate it
/// from what comes next: barriers go as late as possible, as in Triton).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    access: Access,
    last: Option<CandidateId>,
    from_callee: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    pending: BTreeSet<Pending>,
    /// Some path from the function's entry got here without a barrier.
    open: bool,
}

impl State {
    fn join(&mut self, other: State) {
        self.pending.extend(other.pending);
        self.open |= other.open;
    }
}

struct Walk<'a> {
    callees: &'a HashMap<Func, Summary>,
    kept: &'a BTreeSet<CandidateId>,
    options: MembarOptions,
    found: BTreeSet<CandidateId>,
    cross: BTreeSet<CandidateId>,
    entry: BTreeSet<Access>,
}

impl Walk<'_> {
    fn seq(&mut self, nodes: &[Node], st: &mut State) -> Result<(), MembarError> {
        for node in nodes {
            match node {
                Node::Access(a) => {
                    self.reach(*a, false, st)?;
                    st.pending.insert(Pending { access: *a, last: None, from_callee: false });
                }
                Node::Barrier(None) => Self::sync(st),
                Node::Landed { lo, hi } => {
                    st.pending.retain(|p| !(p.access.kind == AccessKind::Write && p.access.lo >= *lo && p.access.hi <= *hi));
                }
                Node::Barrier(Some(c)) if self.kept.contains(c) => Self::sync(st),
                Node::Barrier(Some(c)) => {
                    st.pending = st.pending.iter().map(|p| Pending { last: Some(*c), ..*p }).collect();
                }
                Node::Loop(body) => {
                    let mut head = st.clone();
                    loop {
                        let mut s = head.clone();
                        self.seq(body, &mut s)?;
                        let mut joined = head.clone();
                        joined.join(s);
                        if joined == head {
                            break;
                        }
                        head = joined;
                    }
                    *st = head;
                }
                Node::If(then, other) => {
                    let mut a = st.clone();
                    self.seq(then, &mut a)?;
                    let mut b = st.clone();
                    self.seq(other, &mut b)?;
                    a.join(b);
                    *st = a;
                }
                Node::Call { callee, base } => {
                    let summary = self.callees.get(callee).ok_or(MembarError::UnknownCallee(*callee))?;
                    for a in &summary.entry {
                        self.reach(a.shifted(*base)?, true, st)?;
                    }
                    let exit = summary.exit.iter().map(|a| {
                        Ok(Pending { access: a.shifted(*base)?, last: None, from_callee: true })
                    });
                    let exit = exit.collect::<Result<BTreeSet<_>, MembarError>>()?;
                    if summary.transparent {
                        st.pending.extend(exit);
                    } else {
                        st.pending = exit;
                        st.open = false;
                    }
                }
            }
        }
        Ok(())
    }

    fn sync(st: &mut State) {
        st.pending.clear();
        st.open = false;
    }

    /// Access `a` happens here: it is checked against what is pending, and
    /// belongs to the entry summary if no barrier ran yet on this path.
    fn reach(&mut self, a: Access, from_callee: bool, st: &mut State) -> Result<(), MembarError> {
        self.check(a, from_callee, st)?;
        if st.open {
            self.entry.insert(a);
        }
        Ok(())
    }

    /// Keeps the latest candidate between each conflicting pending access and `a`.
    fn check(&mut self, a: Access, from_callee: bool, st: &mut State) -> Result<(), MembarError> {
        let conflicts: Vec<Pending> = st.pending.iter().filter(|p| p.access.conflicts(&a)).copied().collect();
        for p in conflicts {
            let cross = p.from_callee || from_callee;
            if cross && !self.options.cross_call_barriers {
                continue;
            }
            let c = match p.last {
                Some(c) => c,
                None => return Err(MembarError::Unsynchronized { first: p.access, second: a }),
            };
            if self.found.insert(c) && cross {
                self.cross.insert(c);
            }
            // the kept candidate clears what was pending when it ran; later
            // rounds recompute this exactly, this only avoids redundant picks
            st.pending.retain(|q| q.last != Some(c));
        }
        Ok(())
    }
}

/// Decides `trace`'s candidates given its callees' summaries, assuming
/// nothing is pending at entry (each caller guarantees that at its call).
pub fn analyze(trace: &[Node], callees: &HashMap<Func, Summary>, options: MembarOptions) -> Result<FuncMembar, MembarError> {
    let mut kept = BTreeSet::new();
    let mut cross = BTreeSet::new();
    // each round keeps more candidates; a round that needs no new one is exact
    loop {
        let mut walk = Walk { callees, kept: &kept, options, found: BTreeSet::new(), cross: BTreeSet::new(), entry: BTreeSet::new() };
        let mut st = State { pending: BTreeSet::new(), open: true };
        walk.seq(trace, &mut st)?;
        if walk.found.is_empty() {
            let exit: BTreeSet<Access> = st.pending.iter().map(|p| p.access).collect();
            let summary = Summary { entry: walk.entry.into_iter().collect(), exit: exit.into_iter().collect(), transparent: st.open };
            return Ok(FuncMembar { needed: kept, cross_call: cross, summary });
        }
        cross.extend(walk.cross.difference(&kept).copied().collect::<Vec<_>>());
        kept.extend(walk.found);
    }
}

/// `trace` as text, one step a line, nested bodies indented, each candidate
/// marked `kept` or `dropped` by `result`: the debug view of membar's
/// decisions (`CompiledPtx::membar`, the `membar` filetest stage).
pub fn render(trace: &[Node], result: &FuncMembar, callee_name: impl Fn(Func) -> String) -> String {
    fn walk(nodes: &[Node], depth: usize, result: &FuncMembar, name: &dyn Fn(Func) -> String, out: &mut String) {
        use std::fmt::Write;
        let pad = "  ".repeat(depth);
        for node in nodes {
            match node {
                Node::Access(a) => {
                    let kind = if a.kind == AccessKind::Read { "read" } else { "write" };
                    let _ = writeln!(out, "{pad}{kind} [{}, {})", a.lo, a.hi);
                }
                Node::Barrier(None) => {
                    let _ = writeln!(out, "{pad}barrier");
                }
                Node::Landed { lo, hi } => {
                    let _ = writeln!(out, "{pad}landed [{lo}, {hi})");
                }
                Node::Barrier(Some(c)) => {
                    let verdict = if !result.needed.contains(c) {
                        "dropped"
                    } else if result.cross_call.contains(c) {
                        "kept (callee)"
                    } else {
                        "kept"
                    };
                    let _ = writeln!(out, "{pad}candidate {} {verdict}", c.0);
                }
                Node::Loop(body) => {
                    let _ = writeln!(out, "{pad}loop {{");
                    walk(body, depth + 1, result, name, out);
                    let _ = writeln!(out, "{pad}}}");
                }
                Node::If(then, other) => {
                    let _ = writeln!(out, "{pad}if {{");
                    walk(then, depth + 1, result, name, out);
                    let _ = writeln!(out, "{pad}}} else {{");
                    walk(other, depth + 1, result, name, out);
                    let _ = writeln!(out, "{pad}}}");
                }
                Node::Call { callee, base } => {
                    let _ = writeln!(out, "{pad}call @{} base={base}", name(*callee));
                }
            }
        }
    }
    let mut out = String::new();
    walk(trace, 1, result, &callee_name, &mut out);
    out
}

/// Membar results of every function of a call graph.
#[derive(Clone, Debug, Default)]
pub struct ModuleMembar {
    pub funcs: HashMap<Func, FuncMembar>,
}

impl ModuleMembar {
    /// Walks `graph` callees first; `trace(f)` gives each function's trace.
    pub fn compute<'t>(
        graph: &CallGraph,
        mut trace: impl FnMut(Func) -> &'t [Node],
        options: MembarOptions,
    ) -> Result<ModuleMembar, MembarError> {
        let mut out = ModuleMembar::default();
        let mut summaries = HashMap::new();
        for &f in &graph.post_order {
            let result = analyze(trace(f), &summaries, options)?;
            summaries.insert(f, result.summary.clone());
            out.funcs.insert(f, result);
        }
        Ok(out)
    }
}
