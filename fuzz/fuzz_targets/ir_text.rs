//! The IR text parser on arbitrary text: parsing either fails with an error that renders,
//! or gives a graph the verifier can judge; a graph that verifies prints canonically
//! (`print(parse(print(g))) == print(g)`) and survives a JSON round trip.
#![no_main]

use drtc_ir::{text, verify, Graph};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let g = match text::parse(src) {
        Ok(g) => g,
        Err(e) => {
            let _ = e.render(src, "fuzz.drt");
            return;
        }
    };
    if verify(&g).iter().any(|e| e.is_error()) {
        return;
    }
    let printed = text::print(&g);
    let back = text::parse(&printed)
        .unwrap_or_else(|e| panic!("printed IR does not parse: {e}\n{printed}"));
    assert_eq!(text::print(&back), printed, "printing is not canonical");
    let json = serde_json::to_string(&g).expect("graph serializes");
    let from_json: Graph = serde_json::from_str(&json).expect("graph JSON reads back");
    assert_eq!(text::print(&from_json), printed, "JSON round trip");
});
