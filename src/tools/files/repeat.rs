//! How a file tool's change is recognised when the model makes it again: digests of what the
//! call was — the content a write leaves, the `old_text`/`new_text` pair of an edit. The digest
//! is FNV-1a, written out here so that it is the same in every build and a resumed session finds
//! the steps of the one it continues (`agent::steps_done` keeps them).

/// FNV-1a's 64-bit offset basis and prime.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// What a repeated call is, to find the step it repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeated {
    /// A write of content the file already has: the step that left this content.
    Content(u64),
    /// An edit already applied: the step that made this same edit.
    Edit(u64),
}

/// A stable 64-bit digest of `parts`, each followed by a separator so that ("ab", "c") and
/// ("a", "bc") differ.
pub fn digest(parts: &[&[u8]]) -> u64 {
    let mut hash = FNV_OFFSET;
    for part in parts {
        for &byte in part.iter().chain(&[0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(FNV_PRIME);
        }
    }
    hash
}

/// The digest an edit is known by.
pub fn edit_digest(old_text: &str, new_text: &str) -> u64 {
    digest(&[old_text.as_bytes(), new_text.as_bytes()])
}

/// The digest of a file's content.
pub fn content_digest(content: &[u8]) -> u64 {
    digest(&[content])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_stable_and_keep_parts_apart() {
        // FNV-1a of the empty input followed by the separator byte, computed by hand once.
        assert_eq!(digest(&[b""]), (FNV_OFFSET ^ 0xff).wrapping_mul(FNV_PRIME));
        assert_ne!(edit_digest("ab", "c"), edit_digest("a", "bc"));
        assert_eq!(content_digest(b"x"), content_digest(b"x"));
    }
}
