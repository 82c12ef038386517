//! The suite's table and summary, built from its JSON rows alone, so that `drtc suite`
//! (as tasks finish) and `drtc suite-report` (from a results file) print the same thing.

use drtc::verifier::CompileMode;
use serde_json::Value;
use std::fmt::Write as _;

/// A row's status when it verified.
pub const VERIFIED: &str = "verified";

fn num(v: &Value, d: usize) -> String {
    v.as_f64()
        .map(|x| format!("{x:.d$}"))
        .unwrap_or_else(|| "-".into())
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Speedup over eager (`speedup` in files written before the compile baseline existed).
fn vs_eager(r: &Value) -> Option<f64> {
    r["speedup_vs_eager"].as_f64().or(r["speedup"].as_f64())
}

/// The reason a row did not verify, on one line.
pub fn detail(r: &Value) -> String {
    let status = r["status"].as_str().unwrap_or("?");
    let d = match status {
        "frontend" | "compile" | "unshrinkable" => {
            // rows written before renderers dropped their own `Error:` have it: one prefix
            let error = super::error::without_error_prefix(r["error"].as_str().unwrap_or(""));
            format!("{status}: {error}")
        }
        "failed" | "timeout" => format!("{status}: {}", strs(&r["reasons"]).join("; ")),
        s => s.to_string(),
    };
    d.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The settings every row carries, as one line ("device cuda, drtc precision tf32 ...").
pub fn settings_line(rows: &[Value]) -> String {
    let first = |k: &str| {
        rows.iter()
            .find_map(|r| r[k].as_str().map(str::to_string))
            .unwrap_or_else(|| "?".into())
    };
    let device = device_of(rows);
    let jobs = rows.iter().filter_map(|r| r["jobs"].as_u64()).max();
    let mut s = format!(
        "device {device}; drtc precision {}; torch precision {}",
        first("precision"),
        first("torch_precision")
    );
    if let Some(used) = rows.iter().find_map(|r| r["torch_precision_used"].as_str()) {
        write!(s, " (float32 matmul precision `{used}` as run)").unwrap();
    }
    if device == "cuda" {
        let modes = compile_modes(rows);
        if modes.len() > 1 || modes.first().is_some_and(|m| m != "default") {
            write!(
                s,
                "; baselines: eager and torch.compile modes {}, interleaved on the same inputs",
                modes.join(", ")
            )
            .unwrap();
        } else {
            s.push_str(if has_compile(rows) {
                "; baselines: eager and torch.compile (default mode), interleaved on the same \
                 inputs"
            } else {
                "; baseline: eager"
            });
        }
    } else {
        s.push_str("; verification only (timing and baselines need a GPU)");
    }
    let graphs_mode = rows.iter().find_map(|r| r["cuda_graphs"].as_str());
    if let Some(mode) = graphs_mode.filter(|_| device == "cuda") {
        let used = rows
            .iter()
            .filter(|r| {
                r["graphs"]["timed"]["used"] == true || r["graphs"]["verified"]["used"] == true
            })
            .count();
        write!(s, "; CUDA graphs {mode} (replayed in {used} task(s))").unwrap();
    }
    if let Some(j) = jobs {
        write!(s, "; {j} job(s)").unwrap();
        if device == "cuda" {
            s.push_str(", timing exclusive (one task timed at a time per GPU)");
        }
    }
    s
}

fn device_of(rows: &[Value]) -> String {
    rows.iter()
        .find_map(|r| r["device"].as_str().map(str::to_string))
        .unwrap_or_else(|| {
            // files written before rows carried their device
            if rows.iter().any(|r| r["eager_ms"].is_number()) {
                "cuda".into()
            } else {
                "cpu".into()
            }
        })
}

/// The torch.compile modes timed in any row, in torch.compile's order of modes.
fn compile_modes(rows: &[Value]) -> Vec<String> {
    CompileMode::ALL
        .iter()
        .map(|m| m.name())
        .filter(|m| {
            rows.iter()
                .any(|r| r["torch_compile_modes"][*m].is_object())
        })
        .map(str::to_string)
        .collect()
}

/// Modes beside the default one (each gets its own column and summary line).
fn extra_modes(rows: &[Value]) -> Vec<String> {
    compile_modes(rows)
        .into_iter()
        .filter(|m| m != "default")
        .collect()
}

fn has_sol(rows: &[Value]) -> bool {
    rows.iter().any(|r| r["speed_of_light"].is_object())
}

fn has_compile(rows: &[Value]) -> bool {
    rows.iter()
        .any(|r| r["baseline"] == "compile" || r["torch_compile_ms"].is_number())
}

/// Geometric mean over all rows of a speedup (rows without one count 1.0), and how many
/// verified rows beat it.
fn against(rows: &[Value], speedup: impl Fn(&Value) -> Option<f64>) -> (usize, f64) {
    let mut faster = 0;
    let mut log_sum = 0.0;
    for r in rows.iter().filter(|r| r["status"] == VERIFIED) {
        if let Some(s) = speedup(r) {
            log_sum += s.ln();
            if s > 1.0 {
                faster += 1;
            }
        }
    }
    (faster, (log_sum / rows.len().max(1) as f64).exp())
}

/// The Markdown table, headed by the settings line (device, precisions, baselines, jobs),
/// and the summary lines.
pub fn render(rows: &[Value]) -> (String, String) {
    let cuda = device_of(rows) == "cuda";
    let compile = cuda && has_compile(rows);
    let extra = extra_modes(rows);
    let sol = has_sol(rows);
    let mut t = format!(
        "{}

",
        settings_line(rows)
    );
    let header = t.len();
    t.push_str("| task | status | kernels | pytorch ops | compile ms |");
    if cuda {
        t.push_str(" eager ms |");
        if compile {
            t.push_str(" torch.compile ms |");
        }
        t.push_str(" drtc ms | vs eager |");
        if compile {
            t.push_str(" vs compile |");
        }
        for m in &extra {
            write!(t, " {m} ms |").unwrap();
        }
        if !extra.is_empty() {
            t.push_str(" best compile ms | vs best |");
        }
        if sol {
            t.push_str(" SoL ms | bound | drtc % of SoL |");
        }
    }
    let cols = t[header..].matches('|').count() - 1;
    t.push('\n');
    t.push_str(&"|---".repeat(cols));
    t.push_str("|\n");
    let mut compile_ms: Vec<f64> = vec![];
    let mut memory: Vec<(f64, &str)> = vec![];
    for r in rows {
        let detail: String = detail(r).replace('|', "/").chars().take(140).collect();
        let fb = strs(&r["fallback_ops"]).join(", ");
        write!(
            t,
            "| {} | {} | {} | {} | {} |",
            r["task"].as_str().unwrap_or(""),
            detail,
            r["kernels"]
                .as_u64()
                .map_or("-".to_string(), |k| k.to_string()),
            if fb.is_empty() { "-".into() } else { fb },
            num(&r["compile_ms"], 2),
        )
        .unwrap();
        if cuda {
            write!(t, " {} |", num(&r["eager_ms"], 4)).unwrap();
            if compile {
                write!(t, " {} |", num(&r["torch_compile_ms"], 4)).unwrap();
            }
            let eager = vs_eager(r).map_or(Value::Null, Value::from);
            write!(t, " {} | {} |", num(&r["drtc_ms"], 4), num(&eager, 2)).unwrap();
            if compile {
                write!(t, " {} |", num(&r["speedup_vs_compile"], 2)).unwrap();
            }
            for m in &extra {
                write!(t, " {} |", num(&r["torch_compile_modes"][m]["ms"], 4)).unwrap();
            }
            if !extra.is_empty() {
                let best = &r["best_compile"];
                let name = best["mode"].as_str().unwrap_or("");
                write!(t, " {} {name} |", num(&best["ms"], 4)).unwrap();
                write!(t, " {} |", num(&r["speedup_vs_best_compile"], 2)).unwrap();
            }
            if sol {
                let f = &r["speed_of_light"];
                let pct = f["fraction_drtc"].as_f64().map(|x| 100.0 * x);
                write!(
                    t,
                    " {} | {} | {} |",
                    num(&f["time_ms"], 4),
                    f["bound"].as_str().unwrap_or("-"),
                    num(&pct.map_or(Value::Null, Value::from), 1)
                )
                .unwrap();
            }
        }
        t.push('\n');
        if let Some(c) = r["compile_ms"].as_f64() {
            compile_ms.push(c);
        }
        if let Some(m) = r["memory_ratio"].as_f64() {
            memory.push((m, r["task"].as_str().unwrap_or("")));
        }
    }
    let n = rows.len().max(1);
    let by = |st: &str| rows.iter().filter(|r| r["status"] == st).count();
    let verified = by(VERIFIED);
    let mut s = String::new();
    write!(
        s,
        "{} programs on {}: {verified} verified (accuracy {:.1}%), {} failed verification, \
         {} timed out, {} rejected by the frontend, {} failed to compile, {} valid only at \
         their own sizes (not shrinkable)",
        rows.len(),
        device_of(rows),
        100.0 * verified as f64 / n as f64,
        by("failed"),
        by("timeout"),
        by("frontend"),
        by("compile"),
        by("unshrinkable")
    )
    .unwrap();
    let exported: Vec<&Value> = rows
        .iter()
        .filter(|r| r["frontend_used"]["name"] == "export")
        .collect();
    if !exported.is_empty() {
        let mut calls: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in &exported {
            for c in r["frontend_used"]["library_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                *calls
                    .entry(c["target"].as_str().unwrap_or("?"))
                    .or_default() += 1;
            }
        }
        let calls: Vec<String> = calls.iter().map(|(t, n)| format!("{t} x{n}")).collect();
        write!(
            s,
            "
read by the export frontend (torch.export): {} ({} verified); \
             library ops run by PyTorch: {}",
            exported.len(),
            exported.iter().filter(|r| r["status"] == VERIFIED).count(),
            if calls.is_empty() {
                "none".to_string()
            } else {
                calls.join(", ")
            }
        )
        .unwrap();
    }
    if cuda {
        let (faster, geo) = against(rows, vs_eager);
        write!(
            s,
            "\nvs eager: fast_1 (verified and faster) {faster}/{} = {:.1}%; geometric-mean \
             speedup over all programs (failures count 1.0): {geo:.3}x",
            rows.len(),
            100.0 * faster as f64 / n as f64,
        )
        .unwrap();
        if compile {
            let (faster, geo) = against(rows, |r| r["speedup_vs_compile"].as_f64());
            let failed = rows
                .iter()
                .filter(|r| r["status"] == VERIFIED && r["torch_compile_error"].is_string())
                .count();
            write!(
                s,
                "\nvs torch.compile: fast_1 {faster}/{} = {:.1}%; geometric-mean speedup over \
                 all programs (failures count 1.0): {geo:.3}x",
                rows.len(),
                100.0 * faster as f64 / n as f64,
            )
            .unwrap();
            if failed > 0 {
                write!(
                    s,
                    " (torch.compile itself failed on {failed} verified task(s), counted 1.0)"
                )
                .unwrap();
            }
        }
    }
    if cuda && !extra.is_empty() {
        mode_lines(rows, &mut s);
    }
    if cuda && sol {
        speed_of_light_lines(rows, &mut s);
    }
    accuracy_lines(rows, &mut s);
    if !compile_ms.is_empty() {
        compile_ms.sort_by(f64::total_cmp);
        write!(
            s,
            "\ncompile time (parse to written module): median {:.2} ms, max {:.2} ms",
            compile_ms[compile_ms.len() / 2],
            compile_ms[compile_ms.len() - 1]
        )
        .unwrap();
    }
    if !memory.is_empty() {
        memory.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (max, task) = memory[memory.len() - 1];
        write!(
            s,
            "\npeak GPU memory of verification over the reference's own peak: median {:.2}x, \
             max {max:.2}x ({task}), over {} tasks",
            memory[memory.len() / 2].0,
            memory.len()
        )
        .unwrap();
    }
    (t, s)
}

/// How many verified rows are at least as fast as a baseline within 3% (speedup ≥ 0.97).
fn as_fast(rows: &[Value], speedup: impl Fn(&Value) -> Option<f64>) -> usize {
    rows.iter()
        .filter(|r| r["status"] == VERIFIED)
        .filter_map(&speedup)
        .filter(|&s| s >= 0.97)
        .count()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// One summary line per torch.compile mode and one against the best mode per task: fast_1,
/// at least as fast within 3%, geometric mean, and each side's compile time.
fn mode_lines(rows: &[Value], s: &mut String) {
    let n = rows.len();
    let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
    for m in compile_modes(rows) {
        let speedup = |r: &Value| {
            let ms = r["torch_compile_modes"][&m]["ms"].as_f64()?;
            Some(ms / r["drtc_ms"].as_f64()?)
        };
        let (faster, geo) = against(rows, speedup);
        let even = as_fast(rows, speedup);
        let over = (rows.iter())
            .filter(|r| r["torch_compile_modes"][&m]["over_budget"].as_bool() == Some(true))
            .count();
        let failed = (rows.iter())
            .filter(|r| r["torch_compile_modes"][&m]["error"].is_string())
            .count()
            - over;
        let compile_s = median(
            rows.iter()
                .filter_map(|r| r["torch_compile_modes"][&m]["compile_ms"].as_f64())
                .map(|ms| ms / 1e3)
                .collect(),
        );
        write!(
            s,
            "
vs torch.compile {m}: faster {faster}/{n} = {:.1}%; at least as fast (within \
             3%) {even}/{n} = {:.1}%; geometric mean {geo:.3}x; its first call (compiling) \
             median {} s; failed on {failed}{}",
            pct(faster),
            pct(even),
            compile_s.map_or("-".into(), |x| format!("{x:.1}")),
            if over > 0 {
                format!("; still compiling at --compile-budget on {over} (not timed)")
            } else {
                String::new()
            },
        )
        .unwrap();
    }
    let best = |r: &Value| r["speedup_vs_best_compile"].as_f64();
    let (faster, geo) = against(rows, best);
    let even = as_fast(rows, best);
    write!(
        s,
        "
vs the best torch.compile mode per task: faster {faster}/{n} = {:.1}%; at least as \
         fast (within 3%) {even}/{n} = {:.1}%; geometric mean {geo:.3}x",
        pct(faster),
        pct(even),
    )
    .unwrap();
}

/// Speed of light: the device's measured limits, and per family the median fraction of it
/// that drtc and the best torch.compile mode reach; memory-bound tasks below half of it.
fn speed_of_light_lines(rows: &[Value], s: &mut String) {
    let timed: Vec<&Value> = rows
        .iter()
        .filter(|r| r["status"] == VERIFIED && r["speed_of_light"].is_object())
        .collect();
    if let Some(p) = timed.first().map(|r| &r["speed_of_light"]["peaks"]) {
        write!(
            s,
            "
speed of light ({}; {}): copy {} GB/s, fp32 {} TFLOP/s, tf32 {} TFLOP/s, bf16 \
             {} TFLOP/s",
            p["device"].as_str().unwrap_or("?"),
            p["source"].as_str().unwrap_or("?"),
            num(&p["copy_gb_s"], 0),
            num(&p["fp32_tflops"], 1),
            num(&p["tf32_tflops"], 1),
            num(&p["bf16_tflops"], 1),
        )
        .unwrap();
    }
    let mut families: std::collections::BTreeMap<&str, Vec<&Value>> = Default::default();
    for r in &timed {
        families
            .entry(r["work"]["family"].as_str().unwrap_or("?"))
            .or_default()
            .push(r);
    }
    for (family, rs) in &families {
        let of = |k: &str| {
            median(
                rs.iter()
                    .filter_map(|r| r["speed_of_light"][k].as_f64())
                    .collect(),
            )
        };
        let show = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:.0}%", 100.0 * x));
        write!(
            s,
            "
speed of light, {family} ({} tasks): median drtc {}, best torch.compile {}, \
             eager {}",
            rs.len(),
            show(of("fraction_drtc")),
            show(of("fraction_best_compile")),
            show(of("fraction_eager")),
        )
        .unwrap();
    }
    let memory: Vec<&&Value> = timed
        .iter()
        .filter(|r| r["speed_of_light"]["bound"] == "memory")
        .collect();
    if !memory.is_empty() {
        let fr = |r: &Value| r["speed_of_light"]["fraction_drtc"].as_f64().unwrap_or(0.0);
        let low: Vec<String> = memory
            .iter()
            .filter(|r| fr(r) < 0.5)
            .map(|r| {
                format!(
                    "{} {:.0}%",
                    r["task"].as_str().unwrap_or("?"),
                    100.0 * fr(r)
                )
            })
            .collect();
        write!(
            s,
            "
memory-bound tasks: {}; drtc's median {:.0}% of the copy bandwidth's speed of \
             light; below 50%: {}",
            memory.len(),
            100.0 * median(memory.iter().map(|r| fr(r)).collect()).unwrap_or(0.0),
            if low.is_empty() {
                "none".into()
            } else {
                low.join(", ")
            }
        )
        .unwrap();
    }
}

/// The summary's lines on the reference-accuracy rule: which verified tasks needed the
/// float64 truth, and how torch.compile's own outputs fare under drtc's rule.
fn accuracy_lines(rows: &[Value], s: &mut String) {
    let by_truth: Vec<&str> = rows
        .iter()
        .filter(|r| r["status"] == VERIFIED && r["reference_accuracy"].is_object())
        .map(|r| r["task"].as_str().unwrap_or("?"))
        .collect();
    if !by_truth.is_empty() {
        write!(
            s,
            "\nverified by the reference-accuracy rule (PyTorch's own result is outside the \
             value rule against float64, and drtc's error is within 2x of it): {} ({})",
            by_truth.len(),
            by_truth.join(", ")
        )
        .unwrap();
    }
    let checked: Vec<&Value> = rows
        .iter()
        .filter(|r| r["torch_compile_outputs"].is_object())
        .collect();
    if !checked.is_empty() {
        let strict_fail: Vec<&&Value> = checked
            .iter()
            .filter(|r| r["torch_compile_outputs"]["ok_without_truth"] == false)
            .collect();
        let rescued = strict_fail
            .iter()
            .filter(|r| r["torch_compile_outputs"]["ok"] == true)
            .count();
        let names: Vec<&str> = strict_fail
            .iter()
            .map(|r| r["task"].as_str().unwrap_or("?"))
            .collect();
        // like with like: drtc against torch.compile where torch.compile meets the rule
        // drtc is held to (against the reference, or by the reference-accuracy rule)
        let fair: Vec<Value> = rows
            .iter()
            .filter(|r| r["torch_compile_outputs"]["ok"] == true)
            .cloned()
            .collect();
        let (faster, geo) = against(&fair, |r| r["speedup_vs_compile"].as_f64());
        write!(
            s,
            "\ntorch.compile's outputs under drtc's value rule: {} of {} timed tasks fail it \
             against the reference{}; {rescued} of those pass by the reference-accuracy rule",
            strict_fail.len(),
            checked.len(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" ({})", names.join(", "))
            }
        )
        .unwrap();
        write!(
            s,
            "\nvs torch.compile where its outputs meet drtc's value rule: fast_1 {faster}/{} = \
             {:.1}%; geometric-mean speedup (failures count 1.0): {geo:.3}x",
            fair.len(),
            100.0 * faster as f64 / fair.len().max(1) as f64
        )
        .unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(task: &str, status: &str, eager: f64, compiled: f64, drtc: f64) -> Value {
        json!({
            "task": task, "status": status, "device": "cuda", "precision": "tf32",
            "torch_precision": "high", "baseline": "compile", "jobs": 3, "kernels": 1,
            "compile_ms": 0.5, "eager_ms": eager, "torch_compile_ms": compiled,
            "drtc_ms": drtc, "speedup_vs_eager": eager / drtc,
            "speedup_vs_compile": compiled / drtc, "reasons": [], "memory_ratio": 2.0,
        })
    }

    #[test]
    fn summary_holds_torch_compile_to_the_same_value_rule() {
        let mut a = row("1_a", VERIFIED, 2.0, 1.0, 0.5);
        a["torch_compile_outputs"] = json!({"ok": true, "ok_without_truth": true});
        let mut b = row("2_b", VERIFIED, 1.0, 0.5, 1.0);
        b["torch_compile_outputs"] = json!({"ok": false, "ok_without_truth": false});
        b["reference_accuracy"] = json!({"outputs": 5, "worst_ratio": 1.01});
        let mut c = row("3_c", VERIFIED, 1.0, 0.9, 1.0);
        c["torch_compile_outputs"] = json!({"ok": true, "ok_without_truth": false});
        let (_, summary) = render(&[a, b, c]);
        assert!(
            summary.contains("verified by the reference-accuracy rule"),
            "{summary}"
        );
        assert!(summary.contains(": 1 (2_b)"), "{summary}");
        assert!(
            summary.contains(
                "2 of 3 timed tasks fail it against the reference (2_b, 3_c); 1 of those pass"
            ),
            "{summary}"
        );
        // like with like: 1_a (2.0x) and 3_c (0.9x), not 2_b
        assert!(
            summary.contains(&format!(
                "meet drtc's value rule: fast_1 1/2 = 50.0%; geometric-mean speedup (failures count 1.0): {:.3}x",
                (2.0f64 * 0.9).sqrt()
            )),
            "{summary}"
        );
    }

    #[test]
    fn summary_has_fast_1_and_geomean_against_both_baselines() {
        let mut failed = row("3_c", "failed", 1.0, 1.0, 1.0);
        failed["reasons"] = json!(["values: output 0: relative norm error 2e-3\n  >= 1e-3"]);
        let rows = vec![
            row("1_a", VERIFIED, 2.0, 1.0, 0.5),
            row("2_b", VERIFIED, 1.0, 0.5, 1.0),
            failed,
        ];
        let (table, summary) = render(&rows);
        let table = table.split_once("\n\n").unwrap().1;
        assert!(table.starts_with(
            "| task | status | kernels | pytorch ops | compile ms | eager ms | \
             torch.compile ms | drtc ms | vs eager | vs compile |\n|---|---|---|---|---|---|---|---|---|---|\n"
        ));
        assert!(table.contains(
            "| 1_a | verified | 1 | - | 0.50 | 2.0000 | 1.0000 | 0.5000 | 4.00 | 2.00 |"
        ));
        assert!(
            table.contains("| 3_c | failed: values: output 0: relative norm error 2e-3 >= 1e-3 |")
        );
        // vs eager: 4.0 and 1.0 and (failed) 1.0: geomean 4^(1/3)
        assert!(
            summary.contains("vs eager: fast_1 (verified and faster) 1/3 = 33.3%"),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("{:.3}x", 4f64.powf(1.0 / 3.0))),
            "{summary}"
        );
        // vs compile: 2.0 and 0.5 and 1.0: geomean 1.0, one faster
        assert!(summary.contains("vs torch.compile: fast_1 1/3 = 33.3%; geometric-mean speedup over all programs (failures count 1.0): 1.000x"), "{summary}");
        let (settings, _) = render(&rows)
            .0
            .split_once("\n\n")
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        assert!(settings.starts_with("device cuda; drtc precision tf32; torch precision high; baselines: eager and torch.compile"), "{settings}");
        assert!(
            settings.contains("3 job(s), timing exclusive"),
            "{settings}"
        );
        assert!(summary.contains("median 2.00x, max 2.00x"), "{summary}");
    }

    #[test]
    fn every_mode_and_the_best_have_columns_and_lines_with_speed_of_light() {
        let mut rows = vec![
            row("1_a", VERIFIED, 2.0, 1.0, 0.5),
            row("2_b", VERIFIED, 1.0, 0.5, 1.0),
        ];
        let peaks = json!({"device": "H", "source": "measured", "copy_gb_s": 4000.0,
                           "fp32_tflops": 50.0, "tf32_tflops": 400.0, "bf16_tflops": 800.0});
        let facts = [
            (0.8, "pointwise", "memory", 0.4),
            (1.02, "contraction", "compute", 0.9),
        ];
        for (r, (ro, family, bound, frac)) in rows.iter_mut().zip(facts) {
            let drtc = r["drtc_ms"].as_f64().unwrap();
            let default = r["torch_compile_ms"].as_f64().unwrap();
            r["torch_compile_modes"] = json!({
                "default": {"ms": default, "compile_ms": 3000.0, "error": null},
                "reduce-overhead": {"ms": ro, "compile_ms": 5000.0, "error": null},
            });
            let best = default.min(ro);
            let name = if ro < default {
                "reduce-overhead"
            } else {
                "default"
            };
            r["best_compile"] = json!({"mode": name, "ms": best});
            r["speedup_vs_best_compile"] = json!(best / drtc);
            r["work"] = json!({"family": family});
            r["speed_of_light"] = json!({"time_ms": frac * drtc, "bound": bound,
                                         "fraction_drtc": frac, "fraction_eager": 0.1,
                                         "fraction_best_compile": 0.2, "peaks": peaks});
        }
        let (table, summary) = render(&rows);
        assert!(
            table.contains("baselines: eager and torch.compile modes default, reduce-overhead"),
            "{table}"
        );
        assert!(
            table.contains(
                "| vs compile | reduce-overhead ms | best compile ms | vs best | SoL ms | bound \
                 | drtc % of SoL |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| 0.8000 | 0.8000 reduce-overhead | 1.60 | 0.2000 | memory | 40.0 |"),
            "{table}"
        );
        // reduce-overhead: 1.6x and 1.02x; the best mode: 1.6x (1_a) and 0.5x (2_b)
        assert!(
            summary.contains(
                "vs torch.compile reduce-overhead: faster 2/2 = 100.0%; at least as fast \
                 (within 3%) 2/2 = 100.0%; geometric mean 1.277x; its first call (compiling) \
                 median 5.0 s; failed on 0"
            ),
            "{summary}"
        );
        assert!(
            summary.contains(
                "vs the best torch.compile mode per task: faster 1/2 = 50.0%; at least as \
                 fast (within 3%) 1/2 = 50.0%; geometric mean 0.894x"
            ),
            "{summary}"
        );
        assert!(
            summary.contains("speed of light, pointwise (1 tasks): median drtc 40%"),
            "{summary}"
        );
        assert!(
            summary.contains("memory-bound tasks: 1; drtc's median 40% of the copy bandwidth's speed of light; below 50%: 1_a 40%"),
            "{summary}"
        );
    }

    #[test]
    fn a_mode_over_its_compile_budget_is_counted_apart_from_failures() {
        let mut rows = vec![
            row("1_a", VERIFIED, 2.0, 1.0, 0.5),
            row("2_b", VERIFIED, 1.0, 0.5, 1.0),
        ];
        let over = json!({"ms": null, "compile_ms": null, "over_budget": true,
                          "error": "over budget: torch.compile (max-autotune) was still compiling after 300 s"});
        let failed = json!({"ms": null, "compile_ms": null, "over_budget": false,
                            "error": "torch.compile failed: RuntimeError"});
        for (r, m) in rows.iter_mut().zip([over, failed]) {
            let default = r["torch_compile_ms"].clone();
            r["torch_compile_modes"] = json!({
                "default": {"ms": default, "compile_ms": 3000.0, "error": null},
                "max-autotune": m,
            });
        }
        let (_, summary) = render(&rows);
        assert!(
            summary.contains("failed on 1; still compiling at --compile-budget on 1 (not timed)"),
            "{summary}"
        );
    }

    #[test]
    fn cpu_rows_have_no_timing_columns_and_old_rows_still_render() {
        let cpu = vec![json!({"task": "1_a", "status": "verified", "device": "cpu",
                              "precision": "tf32", "torch_precision": "default", "jobs": 2})];
        let (table, summary) = render(&cpu);
        assert!(table.contains("\n\n| task | status | kernels | pytorch ops | compile ms |\n"));
        assert!(
            table.starts_with("device cpu;")
                && table.contains("verification only (timing and baselines need a GPU)")
        );
        assert!(!summary.contains("fast_1"));
        // A row of a file written before the compile baseline existed.
        let old = vec![json!({"task": "1_a", "status": "verified", "eager_ms": 2.0,
                              "drtc_ms": 1.0, "speedup": 2.0})];
        let (table, summary) = render(&old);
        assert!(table.contains("| 2.0000 | 1.0000 | 2.00 |"), "{table}");
        assert!(
            summary.contains("fast_1 (verified and faster) 1/1"),
            "{summary}"
        );
    }
}
