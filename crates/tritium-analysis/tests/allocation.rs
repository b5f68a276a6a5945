//! First-fit allocation: buffers live at the same time never overlap; buffers
//! of disjoint intervals share space; bad requests are errors, not panics.
use tritium_analysis::{Allocation, BufferKind, BufferRequest};
use tritium_ir::Op;

fn req(op: u32, bytes: u32, start: u32, end: u32) -> BufferRequest {
    BufferRequest { op: Op(op), kind: BufferKind::Scratch, bytes, align: 16, start, end }
}

#[test]
fn disjoint_intervals_share_offset_zero() {
    let a = Allocation::compute(&[req(0, 100, 0, 0), req(1, 64, 1, 1)]).unwrap();
    assert!(a.buffers.iter().all(|b| b.offset == 0));
    assert_eq!(a.total, 100);
}

#[test]
fn overlapping_intervals_are_placed_apart_and_aligned() {
    let a = Allocation::compute(&[req(0, 100, 0, 2), req(1, 64, 1, 1), req(2, 8, 3, 3)]).unwrap();
    assert_eq!(a.offset_of(Op(0), BufferKind::Scratch), Some(0));
    assert_eq!(a.offset_of(Op(1), BufferKind::Scratch), Some(112));
    assert_eq!(a.offset_of(Op(2), BufferKind::Scratch), Some(0));
    assert_eq!(a.total, 176);
}

#[test]
fn bad_alignment_is_an_error() {
    let mut r = req(0, 4, 0, 0);
    r.align = 3;
    assert!(Allocation::compute(&[r]).is_err());
}
