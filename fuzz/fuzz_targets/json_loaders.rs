//! drtc's JSON-lines loaders on arbitrary text: the seed `.jsonl` splitter (and the
//! lowering of what it yields), the verifier's `--line N` reader, and the synth-report
//! records with the report built from them, including the benchmark overlap scan. Errors
//! are fine; panics are not.
#![no_main]

use drtc_frontends::split_programs;
use drtc_synth::report::{overlap, scan_kernelbench, Record, Report};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    for p in split_programs("fuzz.jsonl", src) {
        match p {
            Ok(p) => {
                if let Err(e) = drtc_frontends::lower(&p.text) {
                    let _ = e.render(&p.name, &p.text);
                }
            }
            Err((e, raw)) => {
                let _ = e.render(&raw.name, &raw.text);
            }
        }
    }
    for n in 0..4 {
        let _ = drtc::verifier::program_file::seed_program(src, n);
    }
    let records: Vec<Record> = src
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let report = Report::new(&records);
    let names: Vec<&str> = report.ops.keys().map(String::as_str).collect();
    let _ = report.op_imbalance(&names);
    let _ = report.op_chi_square(&names);
    let bench = vec![("fuzz.py".to_string(), scan_kernelbench(src))];
    let _ = overlap(&records, &bench);
});
