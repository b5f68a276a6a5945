//! tritium-ir stages: `verify` (the verifier's or parser's answer),
//! `parse-print` (the printed module) and `roundtrip` (text and binary forms
//! reproduce the input exactly).
use tritium_ir::{decode, encode, parse, print, verify};

use crate::case::Step;
use crate::subtest::{Checking, Input, Output, SubTest};

/// "ok", or the parse or verify error a user would see.
pub struct Verify;

impl SubTest for Verify {
    fn checking(&self) -> Checking {
        Checking::Exact
    }
    fn run(&self, input: &Input<'_>, _: &Step) -> Result<Output, String> {
        let answer = match parse(&input.text) {
            Err(e) => format!("parse error: {e}"),
            Ok(m) => match verify(&m) {
                Err(e) => format!("error: {e}"),
                Ok(()) => "ok".into(),
            },
        };
        Ok(Output::Text(answer))
    }
}

pub struct ParsePrint;

impl SubTest for ParsePrint {
    fn checking(&self) -> Checking {
        Checking::Exact
    }
    fn run(&self, input: &Input<'_>, _: &Step) -> Result<Output, String> {
        Ok(Output::Text(print(&input.module()?)))
    }
}

/// The module prints back to its own text, and its binary form decodes and
/// re-encodes to the same bytes and text.
pub struct Roundtrip;

fn normalize(text: &str) -> Vec<&str> {
    text.lines().map(str::trim_end).filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty()).collect()
}

impl SubTest for Roundtrip {
    fn checking(&self) -> Checking {
        Checking::SelfChecking
    }
    fn run(&self, input: &Input<'_>, _: &Step) -> Result<Output, String> {
        let m = input.module()?;
        let printed = print(&m);
        if normalize(&printed) != normalize(&input.text) {
            return Err(format!("printed text differs:\n--- printed\n{printed}--- input\n{}", input.text));
        }
        let bytes = encode(&m);
        let decoded = decode(&bytes).map_err(|e| format!("decode: {e}"))?;
        verify(&decoded).map_err(|e| format!("verify decoded: {e}"))?;
        if print(&decoded) != printed {
            return Err("the decoded module prints differently".into());
        }
        if encode(&decoded) != bytes {
            return Err("re-encoding the decoded module changes the bytes".into());
        }
        if encode(&parse(&printed).map_err(|e| format!("reparse: {e}"))?) != bytes {
            return Err("print → parse → encode differs from encode".into());
        }
        Ok(Output::Text(String::new()))
    }
}
