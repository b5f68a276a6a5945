//! Decoding arbitrary bytes never panics: random strings and mutations of
//! valid encodings (bit flips, truncations, splices, length-prefix changes)
//! must each give Ok or a DecodeError; decoded modules must verify or fail cleanly.
mod common;

use std::time::Instant;

use common::Rng;
use tritium_ir::{decode, encode, print, verify};

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut b = seeds[rng.below(seeds.len() as u64) as usize].clone();
    for _ in 0..1 + rng.below(4) {
        let len = b.len().max(1) as u64;
        match rng.below(6) {
            0 => {
                let i = rng.below(len) as usize;
                if i < b.len() {
                    b[i] ^= 1 << rng.below(8);
                }
            }
            1 => b.truncate(rng.below(len) as usize),
            2 => {
                let other = &seeds[rng.below(seeds.len() as u64) as usize];
                let at = rng.below(len) as usize;
                let from = rng.below(other.len().max(1) as u64) as usize;
                b.truncate(at);
                b.extend_from_slice(&other[from.min(other.len())..]);
            }
            3 => {
                // A length prefix or count made huge or slightly off.
                let i = rng.below(len) as usize;
                if i < b.len() {
                    b[i] = *rng.pick(&[0x7f, 0xff, 0x80, b[i].wrapping_add(1), b[i].wrapping_sub(1)]);
                    if b[i] & 0x80 != 0 {
                        b.splice(i + 1..i + 1, [0xff, 0xff, 0xff, 0x0f]);
                    }
                }
            }
            4 => {
                let i = rng.below(len) as usize;
                b.insert(i.min(b.len()), rng.next() as u8);
            }
            _ => {
                let i = rng.below(len) as usize;
                if i < b.len() {
                    b.remove(i);
                }
            }
        }
    }
    b
}

fn run(count: usize) -> (usize, usize) {
    let seeds: Vec<Vec<u8>> = (1..64).map(|s| encode(&common::random_module(s * 7919))).collect();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut ok = 0;
    let mut valid = 0;
    for i in 0..count {
        let input = if i % 10 == 0 {
            let mut b = b"TRIR\x01".to_vec();
            b.extend((0..rng.below(64)).map(|_| rng.next() as u8));
            b
        } else {
            mutate(&mut rng, &seeds)
        };
        if let Ok(m) = decode(&input) {
            ok += 1;
            let _ = print(&m);
            if verify(&m).is_ok() {
                valid += 1;
                assert_eq!(decode(&encode(&m)).map(|d| encode(&d)), Ok(encode(&m)));
            }
        }
    }
    (ok, valid)
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    // strings ["f"], no types, one loc ("f":0:0), one function @f with no
    // arguments or results whose body nests `if` regions 100,000 deep.
    let mut deep = b"TRIR\x01\x01\x01f".to_vec();
    deep.extend([0, 1, 0, 0, 0, 1, 0, 0, 0, 0]);
    let if_op = tritium_ir::Opcode::If as u8;
    for _ in 0..100_000 {
        // region: 0 args, 1 op (opcode, loc 0, 0 operands, 0 results, 0 attrs, 1 region)
        deep.extend([0, 1, if_op, 0, 0, 0, 0, 1]);
    }
    let err = decode(&deep).unwrap_err();
    assert!(err.msg.contains("nested deeper"), "{err}");
}

#[test]
fn mutated_inputs_never_panic() {
    let start = Instant::now();
    let (ok, valid) = run(20_000);
    println!("20000 inputs: {ok} decoded, {valid} verified, {:?}", start.elapsed());
}

#[test]
#[ignore]
fn a_million_mutated_inputs_never_panic() {
    let start = Instant::now();
    let (ok, valid) = run(1_000_000);
    println!("1000000 inputs: {ok} decoded, {valid} verified, {:?}", start.elapsed());
}
