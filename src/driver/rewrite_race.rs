//! The measured decision on the `transposed-convs` rewrite: a program whose stride-1
//! transposed convolutions the rewrite turned into convolutions is compiled and searched a
//! second time with them as written, both modules are verified and timed on the GPU, and
//! the faster verified one is kept. Which of cuDNN's two kernels is faster depends on more
//! than the shapes a rule can see: in the race on an H100 (fp32 policy, cuDNN at PyTorch's
//! defaults on both sides) level-1 58's module ran 1.27 ms with the rewrite against 7.67 as
//! written, level-2 13's (16 to 64 channels over 32x128x128) 11.73 against 7.89 (the rows'
//! search logs in `bench/results/tconv_race_h100_default_vs_modes.jsonl`), so it is
//! measured, not guessed. The choice is cached under the rewritten module's text, device, Triton version
//! and policy, like the other races'.

use crate::driver::compile::Compiled;
use crate::driver::search_context::{
    bench_modules, keep_first, race_file, read_record, write_record, SearchContext,
};
use std::path::{Path, PathBuf};

/// What the cache says about a rewritten module, before anything is compiled again.
pub enum Cached {
    /// Nothing cached: race.
    Race,
    /// A recorded choice: whether the program as written was faster, and why.
    Choice { as_written: bool, why: String },
}

/// The cache file of `rewritten`'s race (its text after the region search) and the
/// context it is recorded under.
fn cache_file(rewritten: &Compiled, cx: &SearchContext) -> (PathBuf, String) {
    let cx_id = cx.id(rewritten.module.plan.options.precision);
    let file = race_file(cx, "transposed", &cx_id, &rewritten.module.source);
    (file, cx_id)
}

/// The cached choice of `rewritten`'s race.
pub fn cached(rewritten: &Compiled, cx: &SearchContext) -> Cached {
    let (file, cx_id) = cache_file(rewritten, cx);
    read_choice(&file, &cx_id)
}

/// The choice recorded in `file` under `cx_id`.
fn read_choice(file: &Path, cx_id: &str) -> Cached {
    let choice = read_record(file, cx_id).and_then(|v| {
        let why = v["why"].as_str().unwrap_or_default().to_string();
        Some((v["as_written"].as_bool()?, why))
    });
    match choice {
        Some((as_written, why)) => Cached::Choice { as_written, why },
        None => Cached::Race,
    }
}

/// Records a decided race in `file` under `cx_id`.
fn record_choice(file: &Path, cx_id: &str, as_written: bool, why: &str) {
    let fields = serde_json::json!({"as_written": as_written, "why": why});
    write_record(file, cx_id, fields);
}

/// Verifies and times both searched modules, keeps the faster verified one in
/// `rewritten` (the rewrite on a tie; the rewritten module, which the compile step's own
/// verification then reports, when neither counts or one ran out of GPU memory) and
/// caches a decided race. The line for the search log.
pub fn decide(rewritten: &mut Compiled, written: Compiled, cx: &SearchContext) -> String {
    let mut both = bench_modules(
        cx,
        &[
            (rewritten.module.source.as_str(), "rewritten".to_string()),
            (written.module.source.as_str(), "as_written".to_string()),
        ],
    )
    .into_iter()
    .map(|(r, _)| r);
    let (Some(a), Some(b)) = (both.next(), both.next()) else {
        return "transposed convolutions: undecided (nothing timed)".into();
    };
    let Some((keep_rewrite, why)) = keep_first(
        ("module with convolutions", &a),
        ("module with transposed convolutions", &b),
    ) else {
        let whys: Vec<String> = [a, b]
            .into_iter()
            .filter_map(|r| r.err().map(|u| u.why))
            .collect();
        return format!(
            "transposed convolutions: undecided, the rewrite kept ({})",
            whys.join("; ")
        );
    };
    let (file, cx_id) = cache_file(rewritten, cx);
    record_choice(&file, &cx_id, !keep_rewrite, &why);
    if !keep_rewrite {
        *rewritten = written;
    }
    line(!keep_rewrite, &why)
}

/// The search log's line of a choice.
pub fn line(as_written: bool, why: &str) -> String {
    format!(
        "transposed convolutions: {} ({why})",
        if as_written {
            "kept as written"
        } else {
            "computed as convolutions"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_choice_is_reused_only_under_its_own_context() {
        let dir = std::env::temp_dir().join(format!("drtc-rewrite-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("transposed_0.json");
        let h100 = "NVIDIA H100|triton 3.6|fp32|quick";
        assert!(
            matches!(read_choice(&file, h100), Cached::Race),
            "nothing recorded"
        );
        record_choice(&file, h100, true, "measured: as written 7.9 ms");
        match read_choice(&file, h100) {
            Cached::Choice { as_written, why } => {
                assert!(as_written);
                assert_eq!(why, "measured: as written 7.9 ms");
            }
            Cached::Race => panic!("the recorded choice"),
        }
        // another device (or Triton, policy, scope) races again
        let h200 = "NVIDIA H200|triton 3.6|fp32|quick";
        assert!(matches!(read_choice(&file, h200), Cached::Race));
        assert_eq!(
            line(true, "measured"),
            "transposed convolutions: kept as written (measured)"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
