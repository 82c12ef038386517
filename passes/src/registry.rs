//! The registry: the one list of passes, mapping each name to its options and constructor.
//! Adding a pass = its file + one line in [`PASSES`]. Building a [`Pipeline`] checks every
//! name and option here, so mistakes are reported with the valid choices, at their column.

use crate::options::PassOptions;
use crate::{Pass, PassInfo, Pipeline, PipelineError};

/// Every pass, in alphabetical order.
pub static PASSES: &[PassInfo] = &[
    crate::egraph::canonicalize::INFO,
    crate::cse::INFO,
    crate::dce::INFO,
    crate::decompose::INFO,
    crate::fuse::INFO,
    crate::egraph::simplify::INFO,
];

/// The pass called `name`.
pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// Every pass name, in alphabetical order.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<_> = PASSES.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names
}

/// A listing of every pass with its summary and options, for help texts.
pub fn describe() -> String {
    let mut out = String::new();
    let mut infos: Vec<&PassInfo> = PASSES.iter().collect();
    infos.sort_by_key(|p| p.name);
    for p in infos {
        out.push_str(&format!("  {:<12} {}\n", p.name, p.summary));
        for o in p.options {
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
    out
}

/// Parses a pipeline string and builds its passes.
pub fn parse_and_build(source: &str) -> Result<(Pipeline, Vec<Box<dyn Pass>>), PipelineError> {
    let pipeline = Pipeline::parse(source)?;
    let passes = build(&pipeline)?;
    Ok((pipeline, passes))
}

/// Builds the passes of `pipeline`, checking names, options and values.
pub fn build(pipeline: &Pipeline) -> Result<Vec<Box<dyn Pass>>, PipelineError> {
    let src = &pipeline.source;
    let mut passes = vec![];
    for entry in &pipeline.entries {
        let span = &entry.name_span;
        let Some(info) = lookup(&entry.name) else {
            return Err(PipelineError::at(
                src,
                span.start,
                span.end,
                format!(
                    "unknown pass `{}`; valid passes: {}",
                    entry.name,
                    names().join(", ")
                ),
            ));
        };
        let mut options = PassOptions::defaults(info.options);
        for opt in &entry.options {
            let Some(def) = info.options.iter().find(|d| d.name == opt.key) else {
                let message = if info.options.is_empty() {
                    format!(
                        "unknown option `{}`: pass `{}` takes no options",
                        opt.key, info.name
                    )
                } else {
                    let valid: Vec<_> = info.options.iter().map(|d| d.name).collect();
                    format!(
                        "unknown option `{}` for pass `{}`; valid options: {}",
                        opt.key,
                        info.name,
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
                        info.name,
                        def.kind.describe(),
                        opt.value
                    ),
                ));
            };
            options.set(def.name, value);
        }
        let pass = (info.build)(&options).map_err(|message| {
            PipelineError::at(
                src,
                span.start,
                span.end,
                format!("pass `{}`: {message}", info.name),
            )
        })?;
        passes.push(pass);
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_sorted_and_match_the_passes() {
        let listed: Vec<_> = PASSES.iter().map(|p| p.name).collect();
        assert_eq!(listed, names(), "PASSES must stay in alphabetical order");
        for info in PASSES {
            let pass = (info.build)(&PassOptions::defaults(info.options)).unwrap();
            assert_eq!(pass.name(), info.name);
        }
    }

    #[test]
    fn builds_known_passes_in_order() {
        let (p, passes) = parse_and_build("dce,cse{commutative=false},dce").unwrap();
        let names: Vec<_> = passes.iter().map(|p| p.name()).collect();
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
        for info in PASSES {
            assert!(d.contains(info.name) && d.contains(info.summary), "{d}");
            for o in info.options {
                assert!(d.contains(o.name) && d.contains(o.help), "{d}");
            }
        }
    }
}
