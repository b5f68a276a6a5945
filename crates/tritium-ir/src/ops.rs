//! The one op table: every op of docs/ir.md, in the doc's order, with its arity,
//! regions, attributes and purity, declared once in `op_table!` below. The macro
//! generates the `Opcode` enum (its discriminant is the binary opcode and the
//! index into `OPS`), so consumers `match` on variants and the compiler rejects
//! a new op that some verifier rule, lowering or transfer function forgot.
//! Python gets the names from `tritium._core.op_table()` so encoder and decoder
//! cannot drift.

/// The kind an attribute value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Float,
    Str,
    Bool,
    IntArray,
    /// int, float or bool (`const`'s `value`).
    Number,
}

impl AttrKind {
    pub fn describe(self) -> &'static str {
        match self {
            AttrKind::Int => "int",
            AttrKind::Float => "float",
            AttrKind::Str => "string",
            AttrKind::Bool => "bool",
            AttrKind::IntArray => "int array",
            AttrKind::Number => "int, float or bool",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct AttrSpec {
    pub name: &'static str,
    pub kind: AttrKind,
    pub required: bool,
}

/// How many results an op has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Results {
    Fixed(u32),
    /// Determined by operands, regions or the callee; checked per op.
    Variadic,
}

#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    pub name: &'static str,
    pub min_operands: u32,
    /// `None` = unbounded.
    pub max_operands: Option<u32>,
    pub results: Results,
    pub regions: u32,
    pub attrs: &'static [AttrSpec],
    pub terminator: bool,
    /// Results depend only on operands and attributes, with no other effect:
    /// passes may merge equal ones and drop unused ones. Off unless marked,
    /// so a new op is never removed by mistake.
    pub pure: bool,
}

const fn req(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, required: true }
}
const fn opt(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, required: false }
}

const fn op(name: &'static str, min: u32, max: Option<u32>, results: Results) -> OpInfo {
    OpInfo { name, min_operands: min, max_operands: max, results, regions: 0, attrs: &[], terminator: false, pure: false }
}
const fn fixed(name: &'static str, n: u32, res: u32) -> OpInfo {
    op(name, n, Some(n), Results::Fixed(res))
}
const fn with_attrs(mut o: OpInfo, attrs: &'static [AttrSpec]) -> OpInfo {
    o.attrs = attrs;
    o
}
const fn with_regions(mut o: OpInfo, n: u32) -> OpInfo {
    o.regions = n;
    o
}
const fn term(mut o: OpInfo) -> OpInfo {
    o.terminator = true;
    o
}
const fn pure(mut o: OpInfo) -> OpInfo {
    o.pure = true;
    o
}

use AttrKind::*;
use Results::{Fixed, Variadic};

/// `Variant => info,` pairs in opcode order: generates `Opcode`, `Opcode::ALL`
/// and `OPS` from one list, so a variant and its table row cannot separate.
macro_rules! op_table {
    ($($(#[$meta:meta])* $variant:ident => $info:expr,)*) => {
        /// An op of the IR; the discriminant is its binary opcode (docs/ir.md).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Opcode {
            $($(#[$meta])* $variant,)*
        }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];
        }

        /// Each op's arity, regions, attributes and flags, indexed by opcode.
        pub static OPS: &[OpInfo] = &[$($info,)*];
    };
}

const AXIS: &[AttrSpec] = &[req("axis", Int)];
const PROPAGATE_NAN: &[AttrSpec] = &[opt("propagate_nan", Bool)];
const HINT: &[AttrSpec] = &[req("values", IntArray)];
const CAN_REORDER: &[AttrSpec] = &[req("can_reorder", Bool)];
const CONTRACTS: &[AttrSpec] = &[opt(CONTRACT, Bool)];

/// The float `add` / `sub` / `mul` attribute allowing LLVM to fuse the op with
/// its neighbours (`a * b + c` into one `fma`, rounding once): LLVM's
/// `contract` fast-math flag. The frontend sets it on every float add, sub and
/// mul unless the kernel is compiled with `enable_fp_fusion=False` (Triton's
/// option, on by default); the verifier refuses it anywhere else.
pub const CONTRACT: &str = "contract";

op_table! {
    // constants and ids
    Const => pure(with_attrs(fixed("const", 0, 1), &[req("value", Number)])),
    Splat => pure(fixed("splat", 1, 1)),
    Arange => pure(with_attrs(fixed("arange", 0, 1), &[req("start", Int), req("end", Int)])),
    ProgramId => pure(with_attrs(fixed("program_id", 0, 1), AXIS)),
    NumPrograms => pure(with_attrs(fixed("num_programs", 0, 1), AXIS)),
    // elementwise arithmetic
    Add => pure(with_attrs(fixed("add", 2, 1), CONTRACTS)),
    Sub => pure(with_attrs(fixed("sub", 2, 1), CONTRACTS)),
    Mul => pure(with_attrs(fixed("mul", 2, 1), CONTRACTS)),
    Div => pure(fixed("div", 2, 1)),
    DivRn => pure(fixed("div_rn", 2, 1)),
    Rem => pure(fixed("rem", 2, 1)),
    And => pure(fixed("and", 2, 1)),
    Or => pure(fixed("or", 2, 1)),
    Xor => pure(fixed("xor", 2, 1)),
    Shl => pure(fixed("shl", 2, 1)),
    Shr => pure(fixed("shr", 2, 1)),
    Min => pure(with_attrs(fixed("min", 2, 1), PROPAGATE_NAN)),
    Max => pure(with_attrs(fixed("max", 2, 1), PROPAGATE_NAN)),
    Umulhi => pure(fixed("umulhi", 2, 1)),
    Cmp => pure(with_attrs(fixed("cmp", 2, 1), &[req("pred", Str)])),
    Neg => pure(fixed("neg", 1, 1)),
    Not => pure(fixed("not", 1, 1)),
    Abs => pure(fixed("abs", 1, 1)),
    Exp => pure(fixed("exp", 1, 1)),
    Exp2 => pure(fixed("exp2", 1, 1)),
    Log => pure(fixed("log", 1, 1)),
    Log2 => pure(fixed("log2", 1, 1)),
    Sqrt => pure(fixed("sqrt", 1, 1)),
    SqrtRn => pure(fixed("sqrt_rn", 1, 1)),
    Rsqrt => pure(fixed("rsqrt", 1, 1)),
    Sin => pure(fixed("sin", 1, 1)),
    Cos => pure(fixed("cos", 1, 1)),
    Floor => pure(fixed("floor", 1, 1)),
    Ceil => pure(fixed("ceil", 1, 1)),
    Erf => pure(fixed("erf", 1, 1)),
    Fma => pure(fixed("fma", 3, 1)),
    Select => pure(fixed("select", 3, 1)),
    Clamp => pure(with_attrs(fixed("clamp", 3, 1), PROPAGATE_NAN)),
    // casts and pointers
    Cast => pure(with_attrs(fixed("cast", 1, 1), &[opt("rounding", Str)])),
    Bitcast => pure(fixed("bitcast", 1, 1)),
    PtrToInt => pure(fixed("ptr_to_int", 1, 1)),
    IntToPtr => pure(fixed("int_to_ptr", 1, 1)),
    Addptr => pure(fixed("addptr", 2, 1)),
    // memory and atomics
    Load => with_attrs(
        op("load", 1, Some(3), Fixed(1)),
        &[req("cache", Str), req("eviction", Str), req("volatile", Bool)],
    ),
    Store => with_attrs(op("store", 2, Some(3), Fixed(0)), &[req("cache", Str), req("eviction", Str)]),
    AtomicRmw => with_attrs(
        op("atomic_rmw", 2, Some(3), Fixed(1)),
        &[req("kind", Str), req("sem", Str), req("scope", Str)],
    ),
    AtomicCas => with_attrs(fixed("atomic_cas", 3, 1), &[req("sem", Str), req("scope", Str)]),
    // shape ops
    Broadcast => pure(fixed("broadcast", 1, 1)),
    ExpandDims => pure(with_attrs(fixed("expand_dims", 1, 1), AXIS)),
    Reshape => pure(with_attrs(fixed("reshape", 1, 1), CAN_REORDER)),
    Permute => pure(with_attrs(fixed("permute", 1, 1), &[req("order", IntArray)])),
    Join => pure(fixed("join", 2, 1)),
    Split => pure(fixed("split", 1, 2)),
    Cat => pure(with_attrs(fixed("cat", 2, 1), CAN_REORDER)),
    // reductions, scans, dot
    Reduce => pure(with_regions(with_attrs(op("reduce", 1, None, Variadic), AXIS), 1)),
    Scan => pure(with_regions(with_attrs(op("scan", 1, None, Variadic), &[req("axis", Int), req("reverse", Bool)]), 1)),
    // `pending` (set by the pipeliner): the dot may still run when it returns,
    // with at most that many dots in flight; `dot_wait` ends them
    Dot => pure(with_attrs(
        fixed("dot", 3, 1),
        &[req("input_precision", Str), req("max_num_imprecise_acc", Int), opt("pending", Int)],
    )),
    // hints
    MultipleOf => pure(with_attrs(fixed("multiple_of", 1, 1), HINT)),
    MaxContiguous => pure(with_attrs(fixed("max_contiguous", 1, 1), HINT)),
    MaxConstancy => pure(with_attrs(fixed("max_constancy", 1, 1), HINT)),
    // control flow and calls
    For => with_attrs(with_regions(op("for", 3, None, Variadic), 1), &[opt("num_stages", Int)]),
    If => with_regions(op("if", 1, Some(1), Variadic), 2),
    While => with_regions(op("while", 0, None, Variadic), 2),
    Yield => term(op("yield", 0, None, Fixed(0))),
    Condition => term(op("condition", 1, None, Fixed(0))),
    Call => with_attrs(op("call", 0, None, Variadic), &[req("callee", Str)]),
    Return => term(op("return", 0, None, Fixed(0))),
    // debug
    Assert => with_attrs(fixed("assert", 1, 0), &[req("msg", Str)]),
    Print => with_attrs(op("print", 0, None, Fixed(0)), &[req("prefix", Str), req("hex", Bool)]),
    Barrier => fixed("barrier", 0, 0),
    // inline assembly (appended: earlier opcodes keep their numbers)
    InlineAsm => with_attrs(
        op("inline_asm", 0, None, Variadic),
        &[req("asm", Str), req("constraints", Str), req("pure", Bool), req("pack", Int)],
    ),
    // layouts (appended): the value itself, moved to another layout; only
    // layout assignment makes it (the layout lives in its side table)
    ConvertLayout => pure(fixed("convert_layout", 1, 1)),
    // block memory (appended): a block pointer's or tensor descriptor's whole
    // access as one op, operands `base, shape[r], strides[r], offsets[r]`,
    // then `other` / the value; expanded to addptr/load/store by
    // tritium-transforms::expand_block_memory unless a target claims it first
    BlockLoad => with_attrs(op("block_load", 4, None, Fixed(1)), BLOCK_LOAD),
    BlockStore => with_attrs(op("block_store", 5, None, Fixed(0)), BLOCK_STORE),
    BlockAtomic => with_attrs(op("block_atomic", 5, None, Fixed(0)), BLOCK_ATOMIC),
    // Triton 3.6's remaining ops (appended): `assume` tells LLVM a condition
    // holds (kept like an effect: it has no result); `gather` picks elements
    // of operand 0 along `axis` by the indices of operand 1; `histogram`
    // counts operand 0's integers into `num_bins` i32 bins (operand 1, if
    // given, masks elements out); `extern_elementwise` calls the library
    // function `symbol` (libdevice's `__nv_*`) per element; `name` is what
    // the kernel called (`libdevice.tan`), for messages
    Assume => fixed("assume", 1, 0),
    Gather => pure(with_attrs(fixed("gather", 2, 1), AXIS)),
    Histogram => pure(with_attrs(op("histogram", 1, Some(2), Fixed(1)), &[req("num_bins", Int)])),
    ExternElementwise => with_attrs(
        op("extern_elementwise", 0, None, Fixed(1)),
        &[req("symbol", Str), req("lib", Str), req("pure", Bool), opt("name", Str)],
    ),
    // software pipelining (appended; made only by the pipeliner): a
    // multi-stage shared-memory buffer, a view of one stage, asynchronous
    // copies from global memory into a stage, and their commit and wait
    LocalAlloc => fixed("local_alloc", 0, 1),
    LocalView => fixed("local_view", 2, 1),
    AsyncCopy => op("async_copy", 3, Some(5), Fixed(0)),
    AsyncCommit => fixed("async_commit", 0, 0),
    AsyncWait => with_attrs(fixed("async_wait", 0, 0), &[req("pending", Int)]),
    // waits until at most `pending` asynchronous dots are in flight; its
    // results are its operands (accumulators of those dots), safe to read
    DotWait => with_attrs(op("dot_wait", 1, None, Variadic), &[req("pending", Int)]),
    // TMA (appended; made only for sm_90a by tritium-transforms::claim_tma):
    // a `block_load` / `block_store` of a host tensor descriptor done by the
    // Tensor Memory Accelerator through a CUDA tensor map, the kernel
    // argument (`tensormap` attribute) in operand 0; the block op's own
    // operands and attributes follow unchanged, so the access means what the
    // block op meant (the interpreter runs it as one)
    TmaLoad => with_attrs(op("tma_load", 5, None, Fixed(1)), BLOCK_LOAD),
    TmaStore => with_attrs(op("tma_store", 6, None, Fixed(0)), BLOCK_STORE),
    // multi-buffered TMA (appended; made only by the pipeliner on sm_90a):
    // a ring of mbarriers is a `local_alloc` of `stages x 1` i64, one
    // barrier per stage, each completing a phase once `count` copies were
    // armed and all their bytes landed. `mbarrier_init` readies the ring
    // before its loop and `mbarrier_inval` retires it after; `tma_copy`
    // (buffer, stage, barriers, guard, then a `tma_load`'s operands and
    // attributes) arms the stage's barrier with the tile's bytes and issues
    // the copy into that stage when the i1 guard holds; `mbarrier_wait`
    // (barriers, stage, phase) waits until the stage's barrier completed the
    // phase of that parity (i32, 0 or 1)
    MbarrierInit => with_attrs(fixed("mbarrier_init", 1, 0), &[req("count", Int)]),
    MbarrierWait => fixed("mbarrier_wait", 3, 0),
    MbarrierInval => fixed("mbarrier_inval", 1, 0),
    TmaCopy => with_attrs(op("tma_copy", 9, None, Fixed(0)), BLOCK_LOAD),
    // a tensor map built on the device (appended; made only by
    // tritium-transforms::claim_tma on sm_90a, for a device-side descriptor
    // whose geometry axis info proves TMA-able): `tensormap_create(scratch,
    // base, shapes..., strides...)` writes the map of the rank-r array at
    // `base` (r shapes and the r - 1 leading strides as a block op takes
    // them, strides in elements; the last stride is 1) with box `box` (outermost first), `swizzle`
    // bytes and NaN fill when `nan` into slot `slot` (128 bytes each) of this
    // program's part of the launch's global scratch (operand 0: the i64
    // kernel argument marked `global_scratch`). Its i64 result is the map's
    // generic address, which `tma_load` / `tma_store` / `tma_copy` take as
    // their map
    TensormapCreate => with_attrs(op("tensormap_create", 3, Some(11), Fixed(1)), TENSORMAP_CREATE),
}

/// The kernel-argument attribute marking an i64 argument as the address of
/// the launch's global scratch (what Triton's `set_allocator` allocator
/// returns): its value (int) is the bytes each program owns, program
/// `x + nx * (y + ny * z)` the `value`-byte part that many bytes in. Set by
/// tritium-transforms::claim_tma when it builds tensor maps on the device.
pub const GLOBAL_SCRATCH_ATTR: &str = "global_scratch";

const TENSORMAP_CREATE: &[AttrSpec] = &[req("slot", Int), req("box", IntArray), req("swizzle", Int), req("nan", Bool)];

/// The kernel-argument attribute marking an i64 argument as a CUDA tensor
/// map passed by value (128 bytes, a `__grid_constant__` parameter): the
/// argument's value is the map's generic address. Set by
/// tritium-transforms::claim_tma, with `tensormap_of` (the index of the
/// host descriptor's base argument it describes), `tensormap_box` (the box
/// the map was encoded with, outermost dimension first) and
/// `tensormap_swizzle` (0, 32, 64 or 128 bytes).
pub const TENSORMAP_ATTR: &str = "tensormap";

const BLOCK_LOAD: &[AttrSpec] = &[
    req("boundary_check", IntArray),
    req("order", IntArray),
    req("descriptor", Bool),
    req("cache", Str),
    req("eviction", Str),
    req("volatile", Bool),
];
const BLOCK_STORE: &[AttrSpec] =
    &[req("boundary_check", IntArray), req("order", IntArray), req("descriptor", Bool), req("cache", Str), req("eviction", Str)];
const BLOCK_ATOMIC: &[AttrSpec] = &[
    req("boundary_check", IntArray),
    req("order", IntArray),
    req("descriptor", Bool),
    req("kind", Str),
    req("sem", Str),
    req("scope", Str),
];

/// `inline_asm` moves elements narrower than 32 bits packed into 32-bit
/// registers (as Triton): how many elements of `bits` share one register when
/// one asm invocation handles `pack` elements of each operand and result.
pub fn asm_elems_per_reg(bits: u32, pack: u32) -> u32 {
    if bits < 32 { (32 / bits).min(pack) } else { 1 }
}

/// The register constraints of an `inline_asm` constraint string, in operand
/// order (`$0...`): outputs (`=...`) then inputs; clobbers (`~{...}`) are left out.
pub fn asm_operand_constraints(constraints: &str) -> Vec<&str> {
    constraints.split(',').map(str::trim).filter(|c| !c.is_empty() && !c.starts_with('~')).collect()
}

/// Version of the binary format: bumped when the codec changes or an
/// existing op's number, operands or attributes change. Appending an op keeps
/// it (every earlier encoding still decodes to the same module); encoded IR
/// never crosses compiler versions anyway (the disk-cache key includes the version).
pub const FORMAT_VERSION: u32 = 1;

impl Opcode {
    pub fn from_index(i: u64) -> Option<Opcode> {
        usize::try_from(i).ok().and_then(|i| Opcode::ALL.get(i)).copied()
    }
    pub fn from_name(name: &str) -> Option<Opcode> {
        OPS.iter().position(|o| o.name == name).map(|i| Opcode::ALL[i])
    }
    pub fn info(self) -> &'static OpInfo {
        &OPS[self.index()]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_fit_u16() {
        assert!(OPS.len() < u16::MAX as usize);
        for (i, a) in OPS.iter().enumerate() {
            for b in &OPS[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn lookup_round_trips() {
        assert_eq!(Opcode::ALL.len(), OPS.len());
        for (i, o) in OPS.iter().enumerate() {
            assert_eq!(Opcode::from_name(o.name).unwrap().index(), i);
            assert_eq!(Opcode::from_index(i as u64), Some(Opcode::ALL[i]));
        }
        assert!(Opcode::from_name("nope").is_none());
        assert!(Opcode::from_index(OPS.len() as u64).is_none());
    }

    /// A variant spells its table name in CamelCase (`ProgramId` is "program_id"),
    /// so the two halves of a row cannot describe different ops.
    #[test]
    fn variants_spell_their_names() {
        for &op in Opcode::ALL {
            let camel: String = op.name().split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect();
            assert_eq!(format!("{op:?}"), camel);
        }
    }
}
