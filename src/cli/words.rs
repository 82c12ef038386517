//! Words in the CLI's messages.

/// `n` and `word`, in the plural unless `n` is 1: "1 kernel", "3 regions".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
