//! The Python-subset frontend on arbitrary text: lowering either gives a verified graph
//! whose printed IR parses back to itself, or an error that renders; it never panics.
#![no_main]

use drtc_frontends::{lower, Signature};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match lower(src) {
        Err(e) => {
            let _ = e.render("fuzz.py", src);
        }
        Ok(l) => {
            let errors: Vec<_> = drtc_ir::verify(&l.graph)
                .into_iter()
                .filter(|e| e.is_error())
                .collect();
            assert!(
                errors.is_empty(),
                "lowered graph does not verify: {errors:?}"
            );
            let text = drtc_ir::text::print(&l.graph);
            let back = drtc_ir::text::parse(&text)
                .unwrap_or_else(|e| panic!("printed IR does not parse: {e}\n{text}"));
            assert_eq!(drtc_ir::text::print(&back), text, "print/parse round trip");
            let sig = Signature::of(&l.graph).to_json();
            serde_json::from_str::<serde_json::Value>(&sig).expect("signature is JSON");
        }
    }
});
