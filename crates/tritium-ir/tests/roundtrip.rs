//! Property tests: random valid modules survive encode → decode and
//! print → parse unchanged.
mod common;

use proptest::prelude::*;
use tritium_ir::{decode, encode, parse, print, verify};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn binary_round_trip(seed in any::<u64>()) {
        let m = common::random_module(seed);
        prop_assert_eq!(verify(&m), Ok(()));
        let bytes = encode(&m);
        let d = decode(&bytes).unwrap();
        prop_assert_eq!(encode(&d), bytes.clone());
        // The decoded module is canonical: it decodes back to itself.
        prop_assert_eq!(decode(&encode(&d)).unwrap(), d.clone());
        prop_assert_eq!(print(&d), print(&m));
    }

    #[test]
    fn text_round_trip(seed in any::<u64>()) {
        let m = common::random_module(seed);
        let text = print(&m);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(verify(&parsed), Ok(()));
        prop_assert_eq!(encode(&parsed), encode(&m));
        prop_assert_eq!(print(&parsed), text);
    }
}
