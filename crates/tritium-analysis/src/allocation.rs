//! Shared-memory allocation. Each buffer is *explicit* (a tensor kept in
//! shared memory over a range of ops), *scratch* (needed inside one op:
//! layout conversion, reduction, scan, shape ops) or *virtual* (a call site,
//! reserving the callee's whole size). Offsets come from first fit over
//! liveness intervals in op order; scratch lives for its one op, so scratch
//! buffers of different ops share space. Functions are done callees first so
//! a call's virtual buffer knows its callee's total.
use std::collections::HashMap;

use tritium_ir::{Func, Module, Op};

use crate::callgraph::CallGraph;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    Explicit,
    Scratch,
    Virtual,
}

/// What an op asks for: `bytes` aligned to `align`, live over op positions
/// `start..=end` of the function's op order (equal for scratch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRequest {
    pub op: Op,
    pub kind: BufferKind,
    pub bytes: u32,
    pub align: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub request: BufferRequest,
    pub offset: u32,
}

/// One function's buffers with offsets, and the bytes it needs in all.
#[derive(Clone, Debug, Default)]
pub struct Allocation {
    pub buffers: Vec<Buffer>,
    pub total: u32,
}

impl Allocation {
    /// First fit: buffers in order of start, each at the lowest aligned offset
    /// not overlapping a buffer whose interval overlaps its own.
    pub fn compute(requests: &[BufferRequest]) -> Result<Allocation, String> {
        let mut order: Vec<BufferRequest> = requests.to_vec();
        order.sort_by_key(|r| (r.start, std::cmp::Reverse(r.bytes)));
        let mut placed: Vec<Buffer> = Vec::new();
        for r in order {
            if r.align == 0 || !r.align.is_power_of_two() || r.start > r.end {
                return Err(format!("bad shared-memory request {r:?}"));
            }
            let mut offset = 0u32;
            loop {
                let clash = placed.iter().find(|b| {
                    let live = b.request.start <= r.end && r.start <= b.request.end;
                    live && b.offset < offset.saturating_add(r.bytes) && offset < b.offset + b.request.bytes
                });
                match clash {
                    Some(b) => {
                        let next = b.offset + b.request.bytes;
                        offset = next.checked_add(r.align - 1).ok_or("shared memory overflows u32")? & !(r.align - 1);
                    }
                    None => break,
                }
            }
            placed.push(Buffer { request: r, offset });
        }
        let total = placed.iter().map(|b| b.offset + b.request.bytes).max().unwrap_or(0);
        Ok(Allocation { buffers: placed, total })
    }

    pub fn offset_of(&self, op: Op, kind: BufferKind) -> Option<u32> {
        self.buffers.iter().find(|b| b.request.op == op && b.request.kind == kind).map(|b| b.offset)
    }
}

/// Allocations of every function, computed callees first.
#[derive(Clone, Debug, Default)]
pub struct ModuleAllocation {
    pub funcs: HashMap<Func, Allocation>,
}

impl ModuleAllocation {
    /// `requests(f)` gives a function's own explicit and scratch requests;
    /// call sites get a virtual buffer of the callee's total at `call_position(op)`.
    pub fn compute(
        module: &Module,
        graph: &CallGraph,
        mut requests: impl FnMut(Func) -> Vec<BufferRequest>,
        call_position: impl Fn(Func, Op) -> u32,
    ) -> Result<ModuleAllocation, String> {
        let mut out = ModuleAllocation::default();
        for &f in &graph.post_order {
            let mut reqs = requests(f);
            for &(site, callee) in graph.calls.get(&f).map(Vec::as_slice).unwrap_or(&[]) {
                let bytes = out.funcs.get(&callee).map(|a| a.total).ok_or_else(|| {
                    format!("@{} was not allocated before its caller", module.funcs[callee].name)
                })?;
                if bytes > 0 {
                    let at = call_position(f, site);
                    reqs.push(BufferRequest { op: site, kind: BufferKind::Virtual, bytes, align: 16, start: at, end: at });
                }
            }
            out.funcs.insert(f, Allocation::compute(&reqs)?);
        }
        Ok(out)
    }
}
