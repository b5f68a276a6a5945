//! PTX instruction text for the NVPTX target's inline assembly: register
//! constraints and type suffixes of a memory word, vector and cache-hint
//! suffixes, and the `atom`/`red` instruction for an atomic access.
use inkwell::types::BasicTypeEnum;

use super::nvptx::NvArch;
use super::{Access, AtomicAccess, AtomicOp, AtomicScope, AtomicSem, MemHints};
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;

/// PTX register class letter, type suffix and zero of a word.
pub(super) fn word_constraint(access: Access) -> Result<(&'static str, &'static str, &'static str)> {
    match (access.word_bits, access.float) {
        // bytes travel in 16-bit registers: PTX allows ld/st.b8 on wider registers
        (8, false) => Ok(("h", "b8", "0")),
        (16, false) => Ok(("h", "b16", "0")),
        (32, false) => Ok(("r", "b32", "0")),
        (64, false) => Ok(("l", "b64", "0")),
        (32, true) => Ok(("f", "f32", "0f00000000")),
        (64, true) => Ok(("d", "f64", "0d0000000000000000")),
        (bits, _) => Err(CodegenError::Internal(format!("no PTX register for {bits}-bit words"))),
    }
}

/// The LLVM type of a word's register (bytes live in i16 registers).
pub(super) fn word_type<'c>(llvm: &Llvm<'c>, access: Access) -> BasicTypeEnum<'c> {
    match (access.word_bits, access.float) {
        (32, true) => llvm.context.f32_type().into(),
        (64, true) => llvm.context.f64_type().into(),
        (8, _) => llvm.context.i16_type().into(),
        (bits, _) => llvm.context.custom_width_int_type(bits).into(),
    }
}

pub(super) fn vec_suffix(words: u32) -> Result<&'static str> {
    match words {
        1 => Ok(""),
        2 => Ok(".v2"),
        4 => Ok(".v4"),
        _ => Err(CodegenError::Internal(format!("no PTX vector access of {words} words"))),
    }
}

/// The qualifiers after `ld.global`/`st.global`: cache operator then L1 eviction priority.
pub(super) fn hint_suffix(hints: &MemHints) -> String {
    let mut s = String::new();
    if !hints.cache.is_empty() {
        s.push('.');
        s.push_str(hints.cache.trim_start_matches('.'));
    }
    match hints.eviction.as_str() {
        "evict_first" | "evict_last" => s.push_str(&format!(".L1::{}", hints.eviction)),
        _ => {}
    }
    s
}

/// `atom.global` instruction name for `a` on `arch` (PTX ISA 7.4+: every sem
/// and scope with every op; f16 add since sm_70, bf16 add only on sm_90).
pub(super) fn atom_instruction(arch: NvArch, a: AtomicAccess) -> std::result::Result<String, String> {
    let sem = match a.sem {
        AtomicSem::Relaxed => "relaxed",
        AtomicSem::Acquire => "acquire",
        AtomicSem::Release => "release",
        AtomicSem::AcqRel => "acq_rel",
    };
    let scope = match a.scope {
        AtomicScope::Cta => "cta",
        AtomicScope::Gpu => "gpu",
        AtomicScope::Sys => "sys",
    };
    let bits = a.bits;
    let op_ty = match (a.op, a.float, bits) {
        (AtomicOp::Add, true, 16) if a.bf16 => {
            if matches!(arch, NvArch::Sm80 | NvArch::Sm89) {
                return Err(format!("atomic add of bf16 needs sm_90 (atom.add.noftz.bf16), not {}", arch.name()));
            }
            "add.noftz.bf16".to_string()
        }
        (AtomicOp::Add, true, 16) => "add.noftz.f16".to_string(),
        (AtomicOp::Add, true, 32 | 64) => format!("add.f{bits}"),
        (AtomicOp::Add, false, 32 | 64) => format!("add.u{bits}"),
        (AtomicOp::Max | AtomicOp::Min, false, 32 | 64) => {
            let name = if a.op == AtomicOp::Max { "max" } else { "min" };
            format!("{name}.{}{bits}", if a.signed { 's' } else { 'u' })
        }
        (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Xchg, _, 32 | 64) | (AtomicOp::Cas, _, 16 | 32 | 64) => {
            let name = match a.op {
                AtomicOp::And => "and",
                AtomicOp::Or => "or",
                AtomicOp::Xor => "xor",
                AtomicOp::Xchg => "exch",
                _ => "cas",
            };
            format!("{name}.b{bits}")
        }
        (op, float, bits) => {
            let ty = if float { "float" } else { "integer" };
            return Err(format!("no PTX atomic {op:?} on {bits}-bit {ty} elements"));
        }
    };
    Ok(format!("atom.{sem}.{scope}.global.{op_ty}"))
}

pub(super) fn brace_list(first: u32, n: u32) -> String {
    let items: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    if n == 1 {
        items[0].clone()
    } else {
        format!("{{{}}}", items.join(", "))
    }
}
