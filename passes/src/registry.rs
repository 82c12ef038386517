//! The registry: the one list of rewrites ([`PASSES`]) and of analyses ([`ANALYSES`]),
//! mapping each name to its options and constructor. Adding a pass = its file + one line
//! in [`PASSES`] (an analysis: one line in [`ANALYSES`]). Building a [`Pipeline`] checks
//! every name and option here, so mistakes are reported with the valid choices, at their
//! column.

use crate::options::{OptionDef, PassOptions};
use crate::{AnalysisInfo, PassInfo, Pipeline, PipelineError, Step};

/// Every rewrite, in alphabetical order.
pub static PASSES: &[PassInfo] = &[
    crate::egraph::canonicalize::INFO,
    crate::conv_bias::INFO,
    crate::cse::INFO,
    crate::dce::INFO,
    crate::expand_einsum::INFO,
    crate::expand_losses::INFO,
    crate::reverse_scans::INFO,
    crate::egraph::simplify::INFO,
    crate::transposed_convs::INFO,
];

/// Every analysis (steps that only report), in alphabetical order.
pub static ANALYSES: &[AnalysisInfo] = &[crate::decompose::INFO, crate::fuse::INFO];

/// A name a pipeline may use: a rewrite or an analysis.
#[derive(Clone, Copy)]
enum Entry {
    Pass(&'static PassInfo),
    Analysis(&'static AnalysisInfo),
}

impl Entry {
    fn name(self) -> &'static str {
        match self {
            Entry::Pass(p) => p.name,
            Entry::Analysis(a) => a.name,
        }
    }

    fn summary(self) -> &'static str {
        match self {
            Entry::Pass(p) => p.summary,
            Entry::Analysis(a) => a.summary,
        }
    }

    fn options(self) -> &'static [OptionDef] {
        match self {
            Entry::Pass(p) => p.options,
            Entry::Analysis(a) => a.options,
        }
    }

    fn build(self, options: &PassOptions) -> Result<Step, String> {
        match self {
            Entry::Pass(p) => (p.build)(options).map(Step::Rewrite),
            Entry::Analysis(a) => (a.build)(options).map(Step::Analysis),
        }
    }
}

fn entry(name: &str) -> Option<Entry> {
    lookup(name)
        .map(Entry::Pass)
        .or_else(|| lookup_analysis(name).map(Entry::Analysis))
}

/// The rewrite called `name`.
pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// The analysis called `name`.
pub fn lookup_analysis(name: &str) -> Option<&'static AnalysisInfo> {
    ANALYSES.iter().find(|a| a.name == name)
}

/// Every name a pipeline may use (rewrites and analyses), in alphabetical order.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<_> = PASSES
        .iter()
        .map(|p| p.name)
        .chain(ANALYSES.iter().map(|a| a.name))
        .collect();
    names.sort_unstable();
    names
}

/// Every rewrite's name, in alphabetical order.
pub fn pass_names() -> Vec<&'static str> {
    let mut names: Vec<_> = PASSES.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names
}

fn describe_entries(out: &mut String, entries: impl Iterator<Item = Entry>) {
    let mut entries: Vec<Entry> = entries.collect();
    entries.sort_by_key(|e| e.name());
    for e in entries {
        out.push_str(&format!("  {:<12} {}\n", e.name(), e.summary()));
        for o in e.options() {
            out.push_str(&format!(
                "  {:<12}   {{{}={}}}: {} (default {})\n",
                "",
                o.name,
                o.kind.describe_short(),
                o.help,
                o.default
            ));
        }
    }
}

/// A listing of every rewrite and every analysis with its summary and options, under the
/// headings `Passes:` and `Analyses ...:`, for help texts.
pub fn describe() -> String {
    let mut out = String::from("Passes:\n");
    describe_entries(&mut out, PASSES.iter().map(Entry::Pass));
    out.push_str("\nAnalyses (they report their decisions; the graph is unchanged):\n");
    describe_entries(&mut out, ANALYSES.iter().map(Entry::Analysis));
    out
}

/// Parses a pipeline string and builds its steps.
pub fn parse_and_build(source: &str) -> Result<(Pipeline, Vec<Step>), PipelineError> {
    let pipeline = Pipeline::parse(source)?;
    let steps = build(&pipeline)?;
    Ok((pipeline, steps))
}

/// Builds the steps of `pipeline`, checking names, options and values.
pub fn build(pipeline: &Pipeline) -> Result<Vec<Step>, PipelineError> {
    let src = &pipeline.source;
    let mut steps = vec![];
    for e in &pipeline.entries {
        let span = &e.name_span;
        let Some(info) = entry(&e.name) else {
            return Err(PipelineError::at(
                src,
                span.start,
                span.end,
                format!(
                    "unknown pass `{}`; valid passes: {}",
                    e.name,
                    names().join(", ")
                ),
            ));
        };
        let defs = info.options();
        let mut options = PassOptions::defaults(defs);
        for opt in &e.options {
            let Some(def) = defs.iter().find(|d| d.name == opt.key) else {
                let message = if defs.is_empty() {
                    format!(
                        "unknown option `{}`: pass `{}` takes no options",
                        opt.key,
                        info.name()
                    )
                } else {
                    let valid: Vec<_> = defs.iter().map(|d| d.name).collect();
                    format!(
                        "unknown option `{}` for pass `{}`; valid options: {}",
                        opt.key,
                        info.name(),
                        valid.join(", ")
                    )
                };
                return Err(PipelineError::at(
                    src,
                    opt.key_span.start,
                    opt.key_span.end,
                    message,
                ));
            };
            let Some(value) = def.kind.parse(&opt.value) else {
                return Err(PipelineError::at(
                    src,
                    opt.value_span.start,
                    opt.value_span.end,
                    format!(
                        "option `{}` of pass `{}` must be {}, got `{}`",
                        def.name,
                        info.name(),
                        def.kind.describe(),
                        opt.value
                    ),
                ));
            };
            options.set(def.name, value);
        }
        let step = info.build(&options).map_err(|message| {
            PipelineError::at(
                src,
                span.start,
                span.end,
                format!("pass `{}`: {message}", info.name()),
            )
        })?;
        steps.push(step);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_sorted_and_match_the_passes() {
        let listed: Vec<_> = PASSES.iter().map(|p| p.name).collect();
        assert_eq!(
            listed,
            pass_names(),
            "PASSES must stay in alphabetical order"
        );
        for info in PASSES {
            let pass = (info.build)(&PassOptions::defaults(info.options)).unwrap();
            assert_eq!(pass.name(), info.name);
        }
        let listed: Vec<_> = ANALYSES.iter().map(|a| a.name).collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(listed, sorted, "ANALYSES must stay in alphabetical order");
        for info in ANALYSES {
            let analysis = (info.build)(&PassOptions::defaults(info.options)).unwrap();
            assert_eq!(analysis.name(), info.name);
            assert!(
                lookup(info.name).is_none(),
                "`{}` is listed twice",
                info.name
            );
        }
        let mut all = names();
        all.dedup();
        assert_eq!(all.len(), PASSES.len() + ANALYSES.len());
    }

    #[test]
    fn analyses_build_as_analysis_steps_and_passes_as_rewrites() {
        let (_, steps) = parse_and_build("dce,fuse{max-ops=4},decompose").unwrap();
        let kinds: Vec<_> = steps
            .iter()
            .map(|s| (s.name(), matches!(s, Step::Analysis(_))))
            .collect();
        assert_eq!(kinds, [("dce", false), ("fuse", true), ("decompose", true)]);
    }

    #[test]
    fn builds_known_passes_in_order() {
        let (p, steps) = parse_and_build("dce,cse{commutative=false},dce").unwrap();
        let names: Vec<_> = steps.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["dce", "cse", "dce"]);
        assert_eq!(p.to_string(), "dce,cse{commutative=false},dce");
    }

    fn err(s: &str) -> PipelineError {
        match parse_and_build(s) {
            Ok(_) => panic!("`{s}` should not build"),
            Err(e) => e,
        }
    }

    #[test]
    fn unknown_pass_lists_the_valid_ones() {
        let e = err("dce,bogus,cse");
        assert_eq!(
            e.message,
            format!("unknown pass `bogus`; valid passes: {}", names().join(", "))
        );
        assert!(e.message.contains("cse") && e.message.contains("dce"));
        assert_eq!((e.column, e.width), (5, 5));
        assert_eq!(
            e.render(),
            format!(
                "invalid pipeline: {}\n  dce,bogus,cse\n      ^^^^^",
                e.message
            )
        );
    }

    #[test]
    fn unknown_option_lists_the_valid_ones() {
        let e = err("cse{bogus=1}");
        assert_eq!(
            e.message,
            "unknown option `bogus` for pass `cse`; valid options: commutative"
        );
        assert_eq!((e.column, e.width), (5, 5));
    }

    #[test]
    fn option_on_a_pass_without_options_says_so() {
        let e = err("dce{max-ops=6}");
        assert_eq!(
            e.message,
            "unknown option `max-ops`: pass `dce` takes no options"
        );
        assert_eq!(e.column, 5);
    }

    #[test]
    fn bad_option_value_names_the_expected_kind() {
        let e = err("cse{commutative=maybe}");
        assert_eq!(
            e.message,
            "option `commutative` of pass `cse` must be a bool (true or false), got `maybe`"
        );
        assert_eq!((e.column, e.width), (17, 5));
    }

    #[test]
    fn describe_lists_every_pass_and_option() {
        let d = describe();
        let (passes, analyses) = d.split_once("\nAnalyses").expect("two sections");
        for info in PASSES {
            assert!(
                passes.contains(info.name) && passes.contains(info.summary),
                "{d}"
            );
            for o in info.options {
                assert!(passes.contains(o.name) && passes.contains(o.help), "{d}");
            }
        }
        for info in ANALYSES {
            assert!(
                analyses.contains(info.name) && analyses.contains(info.summary),
                "{d}"
            );
            for o in info.options {
                assert!(
                    analyses.contains(o.name) && analyses.contains(o.help),
                    "{d}"
                );
            }
        }
    }
}
