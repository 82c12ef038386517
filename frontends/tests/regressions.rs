//! Inputs that once crashed the frontend (found by `fuzz.rs`), kept as plain tests: each
//! must come back as an error or a verified graph, never a panic.

use drtc_frontends::lower;

fn survives(src: &str) {
    match lower(src) {
        Ok(l) => {
            let errors: Vec<_> = drtc_ir::verify(&l.graph).into_iter().filter(|e| e.is_error()).collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        Err(e) => {
            let rendered = e.render("regression.py", src);
            assert!(rendered.contains("regression.py"), "{rendered}");
        }
    }
}

/// A non-ASCII character inside a triple-quoted string: the closing-quote scan sliced the
/// text inside the character.
#[test]
fn triple_quoted_string_with_multibyte_char() {
    survives("x = \"\"\"N×N\"\"\"\n");
    survives("x = '''N×N");
    survives("x = \"\"\"\\×\"\"\"");
}
