//! Attribute values and dictionaries. Dictionaries are sorted maps so that
//! printing and encoding are deterministic; floats compare by bits so that a
//! NaN attribute survives a round-trip as an equal module.
use std::collections::BTreeMap;

use crate::ops::AttrKind;

#[derive(Clone, Debug)]
pub enum Attr {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    IntArray(Vec<i64>),
}

pub type Attrs = BTreeMap<String, Attr>;

impl PartialEq for Attr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Attr::Int(a), Attr::Int(b)) => a == b,
            (Attr::Float(a), Attr::Float(b)) => a.to_bits() == b.to_bits(),
            (Attr::Str(a), Attr::Str(b)) => a == b,
            (Attr::Bool(a), Attr::Bool(b)) => a == b,
            (Attr::IntArray(a), Attr::IntArray(b)) => a == b,
            _ => false,
        }
    }
}

impl Attr {
    pub fn kind_name(&self) -> &'static str {
        match self {
            Attr::Int(_) => "int",
            Attr::Float(_) => "float",
            Attr::Str(_) => "string",
            Attr::Bool(_) => "bool",
            Attr::IntArray(_) => "int array",
        }
    }
    pub fn matches(&self, kind: AttrKind) -> bool {
        matches!(
            (self, kind),
            (Attr::Int(_), AttrKind::Int)
                | (Attr::Float(_), AttrKind::Float)
                | (Attr::Str(_), AttrKind::Str)
                | (Attr::Bool(_), AttrKind::Bool)
                | (Attr::IntArray(_), AttrKind::IntArray)
                | (Attr::Int(_) | Attr::Float(_) | Attr::Bool(_), AttrKind::Number)
        )
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attr::Bool(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_int_array(&self) -> Option<&[i64]> {
        match self {
            Attr::IntArray(v) => Some(v),
            _ => None,
        }
    }
}
