//! The pass manager: runs a pipeline over a graph and does what no pass should do itself:
//! verify the IR after every pass (so a broken rewrite is blamed on the pass that made it),
//! capture the IR after chosen passes, and time each pass. Nothing is printed here;
//! callers get a [`PassReport`] and, as passes run, [`PassEvent`]s.

use crate::{registry, Changed, PassContext, PassError, Pipeline, Step};
use drtc_ir::{text, verify, Graph, VerifyError};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// How the manager runs a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagerOptions {
    /// Run the verifier (errors only) after every pass, and on the input first.
    pub verify_each: bool,
    /// Capture the printed IR after every run of these passes (by name).
    pub print_ir_after: Vec<String>,
}

impl Default for ManagerOptions {
    /// Verifies after each pass in debug builds (and so in tests), not in release builds.
    fn default() -> Self {
        ManagerOptions {
            verify_each: cfg!(debug_assertions),
            print_ir_after: vec![],
        }
    }
}

/// One run of one pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassRun {
    pub pass: &'static str,
    /// 1-based position in the pipeline.
    pub index: usize,
    pub changed: Changed,
    /// Time spent in the pass itself.
    pub duration: Duration,
    /// Time spent verifying its result, if verified.
    pub verify_duration: Option<Duration>,
    /// The decisions the pass logged.
    pub decisions: Vec<String>,
}

/// The IR printed after one run of a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrDump {
    pub pass: &'static str,
    /// 1-based position in the pipeline.
    pub index: usize,
    pub ir: String,
}

impl IrDump {
    /// A header line naming the pass, for printing before the IR.
    pub fn header(&self) -> String {
        format!(
            "// ----- IR after `{}` (pass {} of the pipeline) -----",
            self.pass, self.index
        )
    }
}

/// Something that happened while running, reported as it happens.
#[derive(Clone, Copy, Debug)]
pub enum PassEvent<'a> {
    /// A pass finished (before its result is verified).
    Ran(&'a PassRun),
    /// The IR after a pass named in `print_ir_after`.
    IrAfter(&'a IrDump),
}

/// What running a pipeline did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    pub runs: Vec<PassRun>,
    pub ir_dumps: Vec<IrDump>,
}

impl PassReport {
    /// Did any pass change the graph?
    pub fn changed(&self) -> Changed {
        self.runs.iter().fold(Changed::No, |acc, r| acc | r.changed)
    }

    /// Time spent in passes and verification.
    pub fn total(&self) -> Duration {
        self.runs
            .iter()
            .map(|r| r.duration + r.verify_duration.unwrap_or_default())
            .sum()
    }

    /// A table of the runs: pass, whether it changed the graph, time in the pass and in
    /// verification (milliseconds).
    pub fn timing_table(&self) -> String {
        let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
        let width = self
            .runs
            .iter()
            .map(|r| r.pass.len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "  # {:<width$}  changed  pass (ms)  verify (ms)",
            "pass"
        );
        for r in &self.runs {
            let verify = r.verify_duration.map_or_else(|| "-".to_string(), ms);
            let changed = if r.changed.is_yes() { "yes" } else { "no" };
            let _ = writeln!(
                out,
                "{:>3} {:<width$}  {changed:<7}  {:>9}  {verify:>11}",
                r.index,
                r.pass,
                ms(r.duration)
            );
        }
        let _ = writeln!(
            out,
            "    {:<width$}  {:<7}  {:>9}",
            "total",
            "",
            ms(self.total())
        );
        out
    }
}

/// Runs a pipeline: rewrites and analyses in order, with verification after each rewrite,
/// IR capture and timing.
pub struct PassManager {
    pipeline: Pipeline,
    steps: Vec<Step>,
    options: ManagerOptions,
}

impl PassManager {
    /// Parses `pipeline` and builds its steps from the registry.
    pub fn parse(pipeline: &str, options: ManagerOptions) -> Result<PassManager, PassError> {
        let (pipeline, steps) = registry::parse_and_build(pipeline)?;
        PassManager::new(pipeline, steps, options)
    }

    /// A manager for steps already built (`steps` are the entries of `pipeline`).
    /// Fails if `print_ir_after` names a pass that is not in the pipeline.
    pub fn new(
        pipeline: Pipeline,
        steps: Vec<Step>,
        options: ManagerOptions,
    ) -> Result<PassManager, PassError> {
        for name in &options.print_ir_after {
            if !steps.iter().any(|p| p.name() == name) {
                let mut valid: Vec<String> = vec![];
                for p in &steps {
                    if !valid.iter().any(|v| v == p.name()) {
                        valid.push(p.name().to_string());
                    }
                }
                return Err(PassError::PrintAfterUnknown {
                    name: name.clone(),
                    valid,
                });
            }
        }
        Ok(PassManager {
            pipeline,
            steps,
            options,
        })
    }

    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    pub fn options(&self) -> &ManagerOptions {
        &self.options
    }

    /// Runs the pipeline over `graph`.
    pub fn run(&self, graph: &mut Graph) -> Result<PassReport, PassError> {
        self.run_with(graph, &mut |_| {})
    }

    /// Runs the pipeline over `graph`, calling `on_event` as passes finish and IR is
    /// captured (so a caller can show them even if a later pass fails).
    pub fn run_with(
        &self,
        graph: &mut Graph,
        on_event: &mut dyn FnMut(PassEvent),
    ) -> Result<PassReport, PassError> {
        if self.options.verify_each {
            let errors = errors_of(graph);
            if !errors.is_empty() {
                return Err(PassError::InvalidInput { errors });
            }
        }
        let mut report = PassReport::default();
        for (i, step) in self.steps.iter().enumerate() {
            let index = i + 1;
            let mut cx = PassContext::new();
            let start = Instant::now();
            let changed = match step {
                Step::Rewrite(pass) => pass.run(graph, &mut cx)?,
                Step::Analysis(analysis) => {
                    analysis.run(graph, &mut cx)?;
                    Changed::No
                }
            };
            let duration = start.elapsed();
            let mut run = PassRun {
                pass: step.name(),
                index,
                changed,
                duration,
                verify_duration: None,
                decisions: cx.take_decisions(),
            };
            on_event(PassEvent::Ran(&run));
            if self.options.print_ir_after.iter().any(|n| n == step.name()) {
                let dump = IrDump {
                    pass: step.name(),
                    index,
                    ir: text::print(graph),
                };
                on_event(PassEvent::IrAfter(&dump));
                report.ir_dumps.push(dump);
            }
            // an analysis holds the graph by shared reference: nothing to verify after it
            if self.options.verify_each && matches!(step, Step::Rewrite(_)) {
                let start = Instant::now();
                let errors = errors_of(graph);
                run.verify_duration = Some(start.elapsed());
                if !errors.is_empty() {
                    return Err(PassError::Verify {
                        pass: step.name(),
                        index,
                        errors,
                    });
                }
            }
            report.runs.push(run);
        }
        Ok(report)
    }
}

/// The verifier's errors (not its warnings) for `graph`.
fn errors_of(graph: &Graph) -> Vec<VerifyError> {
    verify(graph).into_iter().filter(|e| e.is_error()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pass;
    use drtc_ir::{DType, GraphBuilder, Op, TensorType, ValueId};

    /// x -> exp, exp (duplicate), relu(exp#2) unused; returns exp#1 + exp#2.
    fn sample() -> Graph {
        let t = TensorType::new(DType::F32, vec![2, 3]);
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t);
        let a = b.op1(Op::Exp, &[x], []).unwrap();
        let c = b.op1(Op::Exp, &[x], []).unwrap();
        let _dead = b.op1(Op::Relu, &[c], []).unwrap();
        let s = b.op1(Op::Add, &[a, c], []).unwrap();
        b.finish(vec![s])
    }

    fn verifying(print_ir_after: &[&str]) -> ManagerOptions {
        ManagerOptions {
            verify_each: true,
            print_ir_after: print_ir_after.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn runs_passes_in_order_and_reports_changes() {
        let pm = PassManager::parse("cse,dce,cse", verifying(&[])).unwrap();
        let mut g = sample();
        let report = pm.run(&mut g).unwrap();
        let summary: Vec<_> = report
            .runs
            .iter()
            .map(|r| (r.pass, r.index, r.changed))
            .collect();
        assert_eq!(
            summary,
            [
                ("cse", 1, Changed::Yes),
                ("dce", 2, Changed::Yes),
                ("cse", 3, Changed::No)
            ]
        );
        assert_eq!(report.runs[0].decisions, ["merged #1 `exp` into #0"]);
        assert_eq!(
            report.runs[1].decisions,
            ["removed #1 `relu`: its results are unused"]
        );
        assert!(report.runs.iter().all(|r| r.verify_duration.is_some()));
        assert_eq!(report.changed(), Changed::Yes);
        assert_eq!(g.body().len(), 2);
        assert!(report.ir_dumps.is_empty());
    }

    #[test]
    fn captures_ir_after_every_run_of_named_passes() {
        let pm = PassManager::parse("cse,dce,cse", verifying(&["cse"])).unwrap();
        let mut g = sample();
        let mut events = vec![];
        let report = pm
            .run_with(&mut g, &mut |e| {
                events.push(match e {
                    PassEvent::Ran(r) => format!("ran {}", r.pass),
                    PassEvent::IrAfter(d) => format!("ir {} {}", d.pass, d.index),
                })
            })
            .unwrap();
        assert_eq!(
            events,
            ["ran cse", "ir cse 1", "ran dce", "ran cse", "ir cse 3"]
        );
        assert_eq!(report.ir_dumps.len(), 2);
        // after the first cse the dead relu is still there, after the last it is gone
        assert!(report.ir_dumps[0].ir.contains("relu"));
        assert!(!report.ir_dumps[1].ir.contains("relu"));
        assert_eq!(report.ir_dumps[1].ir, text::print(&g));
        assert_eq!(
            report.ir_dumps[0].header(),
            "// ----- IR after `cse` (pass 1 of the pipeline) -----"
        );
    }

    #[test]
    fn print_after_a_pass_not_in_the_pipeline_is_an_error() {
        let err = PassManager::parse("dce,fuse,dce", verifying(&["cse"]))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "cannot print the IR after `cse`: it is not in the pipeline (its passes: dce, fuse)"
        );
    }

    #[test]
    fn analyses_report_without_changing_or_reverifying_the_graph() {
        let pm = PassManager::parse("dce,fuse", verifying(&[])).unwrap();
        let mut g = sample();
        let report = pm.run(&mut g).unwrap();
        let fuse = &report.runs[1];
        assert_eq!((fuse.pass, fuse.changed), ("fuse", Changed::No));
        assert_eq!(
            fuse.verify_duration, None,
            "an analysis cannot break the graph"
        );
        assert!(report.runs[0].verify_duration.is_some());
        assert!(
            fuse.decisions
                .iter()
                .any(|d| d.starts_with("region 0 pointwise")),
            "{:?}",
            fuse.decisions
        );
    }

    #[test]
    fn bad_pipelines_are_pipeline_errors() {
        let err = PassManager::parse("dce,nope", verifying(&[]))
            .err()
            .unwrap();
        assert!(
            matches!(&err, PassError::Pipeline(e) if e.column == 5),
            "{err:?}"
        );
    }

    /// A deliberately wrong pass: returns a value that does not exist.
    struct Breaker;
    impl Pass for Breaker {
        fn name(&self) -> &'static str {
            "breaker"
        }
        fn run(&self, graph: &mut Graph, _: &mut PassContext) -> Result<Changed, PassError> {
            graph.set_outputs(vec![ValueId(999)]);
            Ok(Changed::Yes)
        }
    }

    fn with_breaker(options: ManagerOptions) -> PassManager {
        let (pipeline, mut steps) = registry::parse_and_build("dce").unwrap();
        steps.push(Step::Rewrite(Box::new(Breaker)));
        PassManager::new(pipeline, steps, options).unwrap()
    }

    #[test]
    fn verifier_failure_names_the_pass_and_lists_errors() {
        let err = with_breaker(verifying(&[])).run(&mut sample()).unwrap_err();
        match &err {
            PassError::Verify {
                pass,
                index,
                errors,
            } => {
                assert_eq!((*pass, *index), ("breaker", 2));
                assert_eq!(errors.len(), 1);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "the IR does not verify after pass `breaker` (pass 2 of the pipeline):\n  \
             error: output 0 is a dangling value (%999)"
        );
    }

    #[test]
    fn without_verify_each_a_broken_pass_goes_unnoticed() {
        let options = ManagerOptions {
            verify_each: false,
            print_ir_after: vec![],
        };
        let report = with_breaker(options).run(&mut sample()).unwrap();
        assert_eq!(report.runs.len(), 2);
        assert!(report.runs.iter().all(|r| r.verify_duration.is_none()));
    }

    #[test]
    fn invalid_input_is_reported_before_any_pass() {
        let mut g = sample();
        g.set_outputs(vec![]);
        let err = PassManager::parse("dce", verifying(&[]))
            .unwrap()
            .run(&mut g)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the input IR does not verify:\n  error: the graph returns nothing"
        );
    }

    #[test]
    fn timing_table_lists_every_run_and_a_total() {
        let pm = PassManager::parse("cse,dce", verifying(&[])).unwrap();
        let table = pm.run(&mut sample()).unwrap().timing_table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert!(lines[0].contains("pass") && lines[0].contains("changed"));
        assert!(lines[1].trim_start().starts_with("1 cse") && lines[1].contains("yes"));
        assert!(lines[2].trim_start().starts_with("2 dce") && lines[2].contains("yes"));
        assert!(lines[3].trim_start().starts_with("total"));
    }

    #[test]
    fn default_verifies_in_debug_builds() {
        assert_eq!(
            ManagerOptions::default().verify_each,
            cfg!(debug_assertions)
        );
    }
}
