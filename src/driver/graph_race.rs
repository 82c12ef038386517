//! The measured CUDA-graph decision: when the cost rule of `--cuda-graphs auto` says a
//! module's replay pays, or says it does not for a forward of at least
//! [`RACE_MIN_LAUNCHES`] launches, the module with graphs and the same module without them
//! are each verified and timed on the GPU, and the faster verified one is kept. The cost
//! rule counts launches at a fixed host cost each and output copies; it cannot see what a
//! replay costs a given program (the output copies a replay needs so a later call cannot
//! overwrite a returned tensor, the key check, a capture's memory pool) nor what a launch
//! costs it (Mamba2's 15 kernels and views took 2.09 ms of host time per call for 1.27 ms
//! on the device, an H100, where the rule counted 48 us:
//! `bench/results/level3_mamba2_probe_h100_a6d0f02.txt`), so both are measured, not
//! guessed. The choice is cached under the module's text, device, Triton version and
//! policy, like the region search's.

use crate::driver::search_context::{
    bench_modules, keep_first, race_file, read_record, write_record, SearchContext, Timed, Untimed,
};
use drtc_backends::graphs::GraphMode;
use drtc_backends::stitch::{emit_module, GeneratedModule, ModuleForm};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;

/// A forward of at least this many launches races its graphs even where the cost rule
/// says they do not pay.
pub const RACE_MIN_LAUNCHES: usize = 8;

/// What the race did, for the search log.
pub struct GraphRace {
    pub log: String,
    /// Modules verified and timed.
    pub timed: usize,
    pub cache_hit: bool,
}

/// Races `module` (emitted from `g` and `plan`) with its CUDA graphs against the same
/// module without them (its lowering plan with graphs off or on, whichever `--cuda-graphs
/// auto`'s rule did not pick), when the rule turned them on or the forward has at least
/// [`RACE_MIN_LAUNCHES`] launches; keeps the faster verified one (the rule's pick when
/// neither verifies or one ran out of GPU memory: the compile step's own verification
/// reports it). `None` when there
/// is nothing to race.
pub fn race_graphs(
    (g, plan): (&Graph, &FusionPlan),
    module: &mut GeneratedModule,
    form: &ModuleForm,
    cx: &SearchContext,
) -> Option<GraphRace> {
    if module.plan.options.graphs != GraphMode::Auto {
        return None;
    }
    let rule_on = module.graphs.enabled;
    if !rule_on && module.graphs.cost.launches < RACE_MIN_LAUNCHES {
        return None;
    }
    let mut other_plan = module.plan.clone();
    other_plan.set_graphs(if rule_on {
        GraphMode::Off
    } else {
        GraphMode::On
    });
    let other = emit_module(g, plan, &other_plan, form);
    if !rule_on && !other.graphs.enabled {
        return None; // graphs cannot capture this forward (random ops, no GPU)
    }
    let cx_id = cx.id(module.plan.options.precision);
    let file = race_file(cx, "graphs", &cx_id, &module.source);
    if let Some(v) = read_record(&file, &cx_id) {
        let replay = v["replay"].as_bool()?;
        let why = v["why"].as_str().unwrap_or_default().to_string();
        if replay != rule_on {
            switch(module, other, &format!("cached: {why}"));
        }
        return Some(GraphRace {
            log: format!(
                "CUDA graphs: cached {} ({why})",
                if replay { "replay" } else { "eager" }
            ),
            timed: 0,
            cache_hit: true,
        });
    }
    // both at once: side by side on the pool's workers, timed one at a time (the gate)
    let (on, off) = if rule_on {
        (&module.source, &other.source)
    } else {
        (&other.source, &module.source)
    };
    let mut both = bench_modules(
        cx,
        &[
            (on.as_str(), "graphs_on".to_string()),
            (off.as_str(), "graphs_off".to_string()),
        ],
    )
    .into_iter()
    .map(|(r, _)| r);
    let (with, without) = (both.next()?, both.next()?);
    let Some((replay, why)) = verdict(&with, &without) else {
        return Some(GraphRace {
            log: format!(
                "CUDA graphs: undecided, the cost rule's kept ({})",
                [with, without]
                    .iter()
                    .filter_map(|r| r.as_ref().err().map(|u| u.why.as_str()))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            timed: 2,
            cache_hit: false,
        });
    };
    write_record(
        &file,
        &cx_id,
        serde_json::json!({"replay": replay, "why": why}),
    );
    if replay != rule_on {
        switch(module, other, &why);
    }
    Some(GraphRace {
        log: format!(
            "CUDA graphs: {} ({why})",
            if replay {
                "replay kept"
            } else {
                "eager forward kept"
            }
        ),
        timed: 2,
        cache_hit: false,
    })
}

/// Whether to replay, and why, from the two modules' verified times (`keep_first`'s
/// rule: the faster verified one; a tie keeps the replay).
fn verdict(
    with: &Result<Timed, Untimed>,
    without: &Result<Timed, Untimed>,
) -> Option<(bool, String)> {
    keep_first(("replay", with), ("eager forward", without))
}

/// Keeps `other`, the module the cost rule did not pick; its report says the race decided
/// it.
fn switch(module: &mut GeneratedModule, mut other: GeneratedModule, why: &str) {
    let cost = module.graphs.cost.describe();
    other.graphs.mode = GraphMode::Auto;
    other.graphs.reason = if module.graphs.enabled {
        format!(
            "the cost rule said they pay ({cost}), but on the GPU the eager forward was faster: {why}"
        )
    } else {
        format!(
            "the cost rule said they do not pay ({cost}), but on the GPU the replay was faster: {why}"
        )
    };
    *module = other;
}

#[cfg(test)]
mod tests {
    use super::{verdict, Timed, Untimed};

    fn t(ms: f64, reference_ms: f64) -> Result<Timed, Untimed> {
        Ok(Timed { ms, reference_ms })
    }

    #[test]
    fn the_faster_verified_module_wins_and_a_failed_one_never_does() {
        let (replay, why) = verdict(&t(6.2, 10.0), &t(4.8, 10.0)).unwrap();
        assert!(!replay, "{why}");
        assert!(
            why.contains("eager forward 4.8000 ms, 0.480 of the reference, replay 6.2000 ms"),
            "{why}"
        );
        assert!(verdict(&t(1.0, 2.0), &t(1.5, 2.0)).unwrap().0);
        // a tie keeps what the cost rule chose
        assert!(verdict(&t(1.0, 2.0), &t(1.0, 2.0)).unwrap().0);
        // compared against the reference timed in the same pass: a replay timed while the
        // GPU ran 20% slower (its reference too) still wins
        assert!(verdict(&t(1.1, 2.4), &t(1.0, 2.0)).unwrap().0);
        // a module that failed verification is not chosen, however fast it was
        let failed = Err(Untimed {
            why: "not verified: max abs error 1e-2".into(),
            out_of_memory: false,
        });
        let (replay, why) = verdict(&failed, &t(9.0, 9.0)).unwrap();
        assert!(
            !replay && why.contains("the replay does not count (not verified"),
            "{why}"
        );
        assert!(verdict(&t(9.0, 9.0), &failed).unwrap().0);
        assert!(verdict(&failed, &failed).is_none());
        // a module whose check ran out of GPU memory decides nothing, either way
        let short = Err(Untimed {
            why: "not verified: out_of_memory: verification ran out of memory".into(),
            out_of_memory: true,
        });
        assert!(verdict(&short, &t(9.0, 9.0)).is_none());
        assert!(verdict(&t(1.0, 9.0), &short).is_none());
    }
}
