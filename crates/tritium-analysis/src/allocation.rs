//! Shared-memory allocation. Each buffer is *explicit* (a tensor kept in
//! shared memory over a range of ops), *scratch* (needed inside one op:
//! layout conversion, reduction, scan, shape ops) or *virtual* (a call site,
//! reserving the callee's whole size). Offsets come from first fit over
//! liveness intervals in op order; scratch lives for its one op, so scratch
//! buffers of different ops share space. Functions are done callees first so
//! a call's virtual buffer knows its callee's total.
use std::collections::HashMap;

use tritium_ir::{Func, Function, Module, Op};

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

/// Where a function sits on one call path from a kernel: the call ops taken
/// (outermost first), the function reached, and its shared-memory base there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPath {
    pub sites: Vec<(Func, Op)>,
    pub func: Func,
    pub base: u32,
}

impl ModuleAllocation {
    /// Every function reachable from `root`, once per call path, with the
    /// base its shared memory starts at on that path (the sum of the virtual
    /// offsets along it). A function's size is the same on every path; only
    /// its base differs, which is why the base is a run-time argument.
    pub fn call_paths(&self, graph: &CallGraph, root: Func) -> Vec<CallPath> {
        let mut out = vec![CallPath { sites: Vec::new(), func: root, base: 0 }];
        let mut i = 0;
        while i < out.len() {
            let here = out[i].clone();
            for &(site, callee) in graph.calls.get(&here.func).map(Vec::as_slice).unwrap_or(&[]) {
                let off = self.funcs.get(&here.func).and_then(|a| a.offset_of(site, BufferKind::Virtual)).unwrap_or(0);
                let mut sites = here.sites.clone();
                sites.push((here.func, site));
                out.push(CallPath { sites, func: callee, base: here.base + off });
            }
            i += 1;
        }
        out
    }

    /// Text listing each function's buffers (kind, op, offset, bytes, live
    /// interval; a virtual buffer names its callee), callees first, then each
    /// kernel's call paths with their bases: the debug view of the allocation.
    pub fn dump(&self, module: &Module, graph: &CallGraph) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for &f in &graph.post_order {
            let Some(a) = self.funcs.get(&f) else { continue };
            let func = &module.funcs[f];
            let _ = writeln!(s, "@{} total={}", func.name, a.total);
            let mut bufs = a.buffers.clone();
            bufs.sort_by_key(|b| (b.request.start, b.offset));
            for b in bufs {
                let r = b.request;
                let kind = match r.kind {
                    BufferKind::Explicit => "explicit",
                    BufferKind::Scratch => "scratch",
                    BufferKind::Virtual => "virtual",
                };
                let _ = write!(s, "  {kind} op{} offset={} bytes={} live=[{}, {}]", r.op.0, b.offset, r.bytes, r.start, r.end);
                if r.kind == BufferKind::Virtual {
                    if let Some(&(_, callee)) = graph.calls.get(&f).and_then(|c| c.iter().find(|(op, _)| *op == r.op)) {
                        let _ = write!(s, " -> @{}", module.funcs[callee].name);
                    }
                }
                s.push('\n');
            }
        }
        for (id, func) in module.funcs.iter() {
            if !func.kernel || !self.funcs.contains_key(&id) {
                continue;
            }
            let _ = writeln!(s, "paths from @{}:", func.name);
            for p in self.call_paths(graph, id).into_iter().skip(1) {
                let via: Vec<String> = p.sites.iter().map(|(f, op)| format!("@{}:op{}", module.funcs[*f].name, op.0)).collect();
                let _ = writeln!(s, "  @{} base={} via {}", module.funcs[p.func].name, p.base, via.join(" > "));
            }
        }
        s
    }
}

/// Every op of `func` numbered in pre-order (an op, then the ops of its
/// regions): the positions liveness intervals of a function are written in.
pub fn op_positions(func: &Function) -> HashMap<Op, u32> {
    func.ops_preorder().into_iter().enumerate().map(|(n, (_, op))| (op, n as u32)).collect()
}
