//! Names of LLVM/PTX symbols. PTX identifiers allow only `[A-Za-z0-9_$]`
//! (not starting with a digit), and LLVM's NVPTX backend aborts the process on
//! anything else, while tile IR function names are any string (a Python
//! kernel may be called `kérnel`). Valid names are kept as they are, so the
//! runtime finds ordinary kernels by their Python name; others are escaped.

/// The symbol for a function named `name`: `name` itself when it is a valid
/// PTX identifier, else `__tritium_` followed by every byte that is not an
/// ASCII letter or digit written as `_xx` (hex). The escaped form is
/// injective, and no valid name it could collide with starts that way unless
/// the user spells out `__tritium_...` themselves.
pub fn symbol_name(name: &str) -> String {
    let valid = !name.is_empty()
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        && !name.starts_with("__tritium_");
    if valid {
        return name.to_string();
    }
    let mut out = String::from("__tritium_");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() {
            out.push(b as char);
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::symbol_name;

    #[test]
    fn valid_names_are_kept_and_others_escaped_injectively() {
        assert_eq!(symbol_name("add_kernel"), "add_kernel");
        assert_eq!(symbol_name("k$1"), "k$1");
        assert_eq!(symbol_name("kérnel"), "__tritium_k_c3_a9rnel");
        assert_eq!(symbol_name("1k"), "__tritium_1k");
        assert_eq!(symbol_name(""), "__tritium_");
        assert_ne!(symbol_name("a b"), symbol_name("a_20b"));
        assert_ne!(symbol_name("__tritium_x"), "__tritium_x");
    }
}
