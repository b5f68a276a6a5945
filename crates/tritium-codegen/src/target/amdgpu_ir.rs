//! AMDGPU code inkwell's builder cannot spell, as LLVM IR text linked in by
//! `Llvm::ir_helper`: atomics and fences in a synchronisation scope
//! (workgroup, agent), and the workgroup barrier that orders LDS.
use super::{AtomicAccess, AtomicOp, AtomicScope, AtomicSem};

/// LLVM's name of an atomic ordering, and the ordering a failed CAS keeps.
fn orderings(sem: AtomicSem) -> (&'static str, &'static str) {
    match sem {
        AtomicSem::Relaxed => ("monotonic", "monotonic"),
        AtomicSem::Acquire => ("acquire", "acquire"),
        AtomicSem::Release => ("release", "monotonic"),
        AtomicSem::AcqRel => ("acq_rel", "acquire"),
    }
}

/// The synchronisation scope clause: a workgroup is a CTA, the agent is the
/// GPU, and the system scope is LLVM's default (no clause).
fn sync_scope(scope: AtomicScope) -> &'static str {
    match scope {
        AtomicScope::Cta => " syncscope(\"workgroup\")",
        AtomicScope::Gpu => " syncscope(\"agent\")",
        AtomicScope::Sys => "",
    }
}

/// The LLVM IR text of one atomic helper for `a`, taking and returning the
/// lowering's types (`carry`: bf16 travels as i16 bits), named `name`.
pub(super) fn atomic_helper_ir(a: AtomicAccess, name: &str) -> std::result::Result<String, String> {
    let bits = a.bits;
    let (order, fail_order) = orderings(a.sem);
    let scope = sync_scope(a.scope);
    let bytes = bits / 8;
    // coarse-grained memory (hipMalloc's) lets float adds be one instruction,
    // as HIP's unsafe-fp-atomics does; fine-grained host memory needs CAS loops
    let md = ", !amdgpu.no.fine.grained.memory !0";
    let (carry, arith, op) = match (a.op, a.float, bits) {
        (AtomicOp::Add, true, 16) if a.bf16 => ("i16".to_string(), "bfloat".to_string(), "fadd"),
        (AtomicOp::Add, true, 16) => ("half".into(), "half".into(), "fadd"),
        (AtomicOp::Add, true, 32) => ("float".into(), "float".into(), "fadd"),
        (AtomicOp::Add, true, 64) => ("double".into(), "double".into(), "fadd"),
        (AtomicOp::Add, false, 32 | 64) => (format!("i{bits}"), format!("i{bits}"), "add"),
        (AtomicOp::Max, false, 32 | 64) => (format!("i{bits}"), format!("i{bits}"), if a.signed { "max" } else { "umax" }),
        (AtomicOp::Min, false, 32 | 64) => (format!("i{bits}"), format!("i{bits}"), if a.signed { "min" } else { "umin" }),
        (AtomicOp::And, _, 32 | 64) => (int_or_float(a), format!("i{bits}"), "and"),
        (AtomicOp::Or, _, 32 | 64) => (int_or_float(a), format!("i{bits}"), "or"),
        (AtomicOp::Xor, _, 32 | 64) => (int_or_float(a), format!("i{bits}"), "xor"),
        (AtomicOp::Xchg, _, 32 | 64) => (int_or_float(a), format!("i{bits}"), "xchg"),
        (AtomicOp::Cas, _, 16 | 32 | 64) => (int_or_float(a), format!("i{bits}"), "cmpxchg"),
        (op, float, bits) => {
            let ty = if float { "float" } else { "integer" };
            return Err(format!("no AMDGPU atomic {op:?} on {bits}-bit {ty} elements"));
        }
    };
    let to_arith = |v: &str, out: &str| if carry == arith { format!("  %{out} = bitcast {carry} %{v} to {carry}\n") } else { format!("  %{out} = bitcast {carry} %{v} to {arith}\n") };
    let from_arith = |v: &str, out: &str| if carry == arith { format!("  %{out} = bitcast {arith} %{v} to {arith}\n") } else { format!("  %{out} = bitcast {arith} %{v} to {carry}\n") };
    let body = if op == "cmpxchg" {
        format!(
            "define {carry} @{name}(ptr addrspace(1) %p, {carry} %c, {carry} %v) alwaysinline {{\n{}{}  %pair = cmpxchg ptr addrspace(1) %p, {arith} %ca, {arith} %va{scope} {order} {fail_order}, align {bytes}\n  %r = extractvalue {{ {arith}, i1 }} %pair, 0\n{}  ret {carry} %out\n}}\n",
            to_arith("c", "ca"),
            to_arith("v", "va"),
            from_arith("r", "out")
        )
    } else {
        format!(
            "define {carry} @{name}(ptr addrspace(1) %p, {carry} %v) alwaysinline {{\n{}  %r = atomicrmw {op} ptr addrspace(1) %p, {arith} %va{scope} {order}, align {bytes}{md}\n{}  ret {carry} %out\n}}\n",
            to_arith("v", "va"),
            from_arith("r", "out")
        )
    };
    Ok(format!("{body}!0 = !{{}}\n"))
}

/// The lowering's type of an element a bitwise atomic moves.
fn int_or_float(a: AtomicAccess) -> String {
    match (a.float, a.bits) {
        (true, 16) if a.bf16 => "i16".into(),
        (true, 16) => "half".into(),
        (true, 32) => "float".into(),
        (true, 64) => "double".into(),
        (_, bits) => format!("i{bits}"),
    }
}

pub(super) const BARRIER_HELPER: &str = "tritium_amdgpu_barrier";
/// A workgroup barrier that also orders LDS: `s_barrier` alone is not a
/// memory operation for LLVM, so release/acquire fences in the workgroup
/// scope keep shared loads and stores on their side of it.
pub(super) const BARRIER_IR: &str = "define void @tritium_amdgpu_barrier() alwaysinline convergent nounwind {
  fence syncscope(\"workgroup\") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope(\"workgroup\") acquire
  ret void
}
declare void @llvm.amdgcn.s.barrier() convergent nounwind
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_helpers_name_their_scope() {
        let a = AtomicAccess { op: AtomicOp::Add, sem: AtomicSem::AcqRel, scope: AtomicScope::Gpu, bits: 32, float: true, signed: false, bf16: false };
        let ir = atomic_helper_ir(a, "h").unwrap();
        assert!(ir.contains("atomicrmw fadd ptr addrspace(1) %p, float %va syncscope(\"agent\") acq_rel"), "{ir}");
        let cas = AtomicAccess { op: AtomicOp::Cas, sem: AtomicSem::Release, scope: AtomicScope::Cta, bits: 64, float: false, signed: false, bf16: false };
        let ir = atomic_helper_ir(cas, "c").unwrap();
        assert!(ir.contains("cmpxchg ptr addrspace(1) %p, i64 %ca, i64 %va syncscope(\"workgroup\") release monotonic"), "{ir}");
        let bad = AtomicAccess { op: AtomicOp::Max, sem: AtomicSem::Relaxed, scope: AtomicScope::Sys, bits: 32, float: true, signed: true, bf16: false };
        assert!(atomic_helper_ir(bad, "b").is_err());
    }
}
