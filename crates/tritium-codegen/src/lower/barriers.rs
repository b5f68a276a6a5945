//! Barriers for shared memory, decided by `tritium_analysis::membar`. While a
//! function is lowered, every barrier is emitted and recorded in an access
//! trace (scratch writes and reads, loops, branches, calls): the one before a
//! scratch op's writes is a *candidate*, the one between its writes and reads
//! always stays. Once every function is lowered and the module's shared
//! memory allocated (calls need their sites' offsets), `ModuleMembar` decides,
//! callees first, which candidates are needed; the others are erased.
use std::collections::BTreeSet;

use inkwell::values::InstructionValue;
use tritium_analysis::{Access, CandidateId, Node};
use tritium_ir::{Func, Op};

use super::Lowering;
use crate::error::{CodegenError, Result};

/// One function's trace and its candidate barriers' instructions.
pub(crate) struct BarrierTrace<'c> {
    /// Open sequences: the function's, then one per enclosing region.
    frames: Vec<Vec<Node>>,
    candidates: Vec<InstructionValue<'c>>,
    /// Call sites in trace order; a traced `Call`'s `base` indexes this
    /// until the sites' offsets are known (`with_bases`).
    call_sites: Vec<Op>,
}

impl Default for BarrierTrace<'_> {
    fn default() -> Self {
        BarrierTrace { frames: vec![Vec::new()], candidates: Vec::new(), call_sites: Vec::new() }
    }
}

impl<'c> BarrierTrace<'c> {
    fn push(&mut self, node: Node) {
        self.frames.last_mut().expect("the function's frame is never popped").push(node);
    }

    /// The function's whole trace, each call carrying its site's offset
    /// `base_of(site)` in this function's shared space (known after allocation).
    pub fn trace(&self, base_of: impl Fn(Op) -> u32) -> Result<Vec<Node>> {
        if self.frames.len() != 1 {
            return Err(CodegenError::Internal("membar: a region's trace was left open".into()));
        }
        let bases: Vec<u32> = self.call_sites.iter().map(|&op| base_of(op)).collect();
        Ok(with_bases(&self.frames[0], &bases))
    }

    /// Erases the candidate barriers membar did not keep.
    pub fn erase_unneeded(&mut self, needed: &BTreeSet<CandidateId>) {
        for (i, inst) in self.candidates.drain(..).enumerate() {
            if !needed.contains(&CandidateId(i as u32)) {
                inst.erase_from_basic_block();
            }
        }
    }
}

fn with_bases(nodes: &[Node], bases: &[u32]) -> Vec<Node> {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { callee, base } => Node::Call { callee: *callee, base: bases[*base as usize] },
            Node::Loop(body) => Node::Loop(with_bases(body, bases)),
            Node::If(t, e) => Node::If(with_bases(t, bases), with_bases(e, bases)),
            other => other.clone(),
        })
        .collect()
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// Emits a block-wide barrier and returns its instruction.
    fn emit_barrier(&self) -> Result<InstructionValue<'c>> {
        self.target.barrier(self.llvm)?;
        self.llvm
            .builder
            .get_insert_block()
            .and_then(|b| b.get_last_instruction())
            .ok_or_else(|| CodegenError::Internal("barrier instruction not found".into()))
    }

    /// A barrier membar may erase (before a scratch op's writes or a call).
    pub(super) fn smem_candidate_barrier(&mut self) -> Result<()> {
        let inst = self.emit_barrier()?;
        let t = &mut self.smem.barriers;
        let id = CandidateId(t.candidates.len() as u32);
        t.candidates.push(inst);
        t.push(Node::Barrier(Some(id)));
        Ok(())
    }

    /// A barrier that always stays (a scratch op's writes → reads, `debug_barrier`).
    pub(super) fn smem_fixed_barrier(&mut self) -> Result<()> {
        self.emit_barrier()?;
        self.smem.barriers.push(Node::Barrier(None));
        Ok(())
    }

    /// Records an access of this function's shared bytes `[lo, hi)`.
    pub(super) fn smem_access(&mut self, access: Access) {
        self.smem.barriers.push(Node::Access(access));
    }

    /// Records that asynchronous writes into `[lo, hi)` landed for every
    /// thread (an mbarrier wait; `Node::Landed`).
    pub(super) fn smem_landed(&mut self, lo: u32, hi: u32) {
        self.smem.barriers.push(Node::Landed { lo, hi });
    }

    /// Before a call to `callee` at `site`: a candidate barrier (kept when the
    /// caller's pending accesses overlap the callee's first ones) and the call
    /// in the trace; the caller's next scratch write gets its own candidate.
    pub(crate) fn smem_call(&mut self, callee: Func, site: Op) -> Result<()> {
        self.smem_candidate_barrier()?;
        let t = &mut self.smem.barriers;
        t.push(Node::Call { callee, base: t.call_sites.len() as u32 });
        t.call_sites.push(site);
        Ok(())
    }

    /// Opens the trace of a region (a loop body, a branch).
    pub(super) fn smem_enter(&mut self) {
        self.smem.barriers.frames.push(Vec::new());
    }

    /// Closes the innermost region's trace and returns it.
    pub(super) fn smem_leave(&mut self) -> Result<Vec<Node>> {
        let t = &mut self.smem.barriers;
        if t.frames.len() < 2 {
            return Err(CodegenError::Internal("membar: region trace closed twice".into()));
        }
        Ok(t.frames.pop().expect("checked above"))
    }

    pub(super) fn smem_record(&mut self, node: Node) {
        self.smem.barriers.push(node);
    }

    /// This function's trace, for module-level membar after allocation.
    pub(crate) fn take_barrier_trace(&mut self) -> BarrierTrace<'c> {
        std::mem::take(&mut self.smem.barriers)
    }
}
