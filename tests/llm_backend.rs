//! `drtc compile --backend llm` and `drtc eval` against the replay server on 127.0.0.1:
//! recorded answers (correct kernels, wrong values, a compile error, no code block, a
//! hanging kernel, PyTorch-only code, a syntax error) get the right verdicts, no wrong
//! candidate is ever chosen, feedback rounds carry the verifier's findings, an unusable
//! server is a clear error with the template module still written, and eval's metrics
//! and resume hold. Verification runs on CPU under Triton's interpreter, on tiny shapes.

mod support {
    pub mod replay;
}

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::replay::{answer, ReplayServer, Reply, Rule};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/llm")).join(name)
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("llm_backend")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs drtc with a fresh drtc home (an empty response cache) and the usual Python.
fn drtc(home: &Path, args: &[&str]) -> Output {
    let python = drtc::verifier::PythonEnv::locate(&drtc::verifier::DrtcHome::from_env())
        .expect("drtc's Python environment (run `drtc setup`)");
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .env("DRTC_HOME", home)
        .env("DRTC_PYTHON", &python.python)
        .env_remove("DRTC_LLM_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run drtc")
}

/// `drtc eval` of `tasks` on CPU against the replay server at `url` (model `m`, `samples`
/// answers a task), then `extra`.
fn eval(home: &Path, tasks: &Path, url: &str, samples: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        s(tasks),
        "--llm-url",
        url,
        "--llm-model",
        "m",
        "--samples",
        samples,
        "--device",
        "cpu",
    ];
    args.extend_from_slice(extra);
    drtc(home, &args)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The report's candidates of one region, as (origin, sample, turn, status, reason, chosen).
fn candidates(
    report: &Value,
    region: &str,
) -> Vec<(String, Option<u64>, u64, String, String, bool)> {
    report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["region"] == region)
        .map(|c| {
            (
                c["origin"].as_str().unwrap().to_string(),
                c["sample"].as_u64(),
                c["turn"].as_u64().unwrap(),
                c["status"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap_or("").to_string(),
                c["chosen"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn assert_only_verified_chosen(report: &Value) {
    for c in report["candidates"].as_array().unwrap() {
        if c["chosen"] == true {
            assert_eq!(
                c["status"], "verified",
                "a non-verified candidate was chosen: {c}"
            );
        }
    }
}

#[test]
fn regions_get_verdicts_and_only_verified_kernels_are_chosen() {
    let server = ReplayServer::start(
        Some(vec!["replay-model".into()]),
        vec![
            Rule::new(
                "torch.mul(x, w)",
                vec![Reply::Answers(vec![
                    answer("region_mul_ok.md"),
                    answer("region_mul_wrong.md"),
                    answer("region_mul_compile_error.md"),
                ])],
            ),
            Rule::new(
                "torch.sigmoid(t0)",
                vec![Reply::Answers(vec![
                    answer("region_sigmoid_nocode.md"),
                    answer("region_sigmoid_hang.md"),
                    answer("region_sigmoid_ok.md"),
                ])],
            ),
        ],
    );
    let dir = scratch("regions");
    let (out, report) = (dir.join("out.py"), dir.join("report.json"));
    let o = drtc(
        &dir,
        &[
            "compile",
            s(&data("mul_sigmoid.py")),
            "-o",
            s(&out),
            "--backend",
            "llm",
            "--llm-url",
            &server.url,
            "--llm-model",
            "replay-model",
            "--samples",
            "3",
            "--device",
            "cpu",
            "--max-region-ops",
            "1",
            "--candidate-timeout",
            "20",
            "--report",
            s(&report),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["regions"].as_array().unwrap().len(), 2);
    let r0 = candidates(&r, "region 0");
    let statuses: Vec<(&str, Option<u64>, &str)> = r0
        .iter()
        .map(|c| (c.0.as_str(), c.1, c.3.as_str()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("template", None, "verified"),
            ("llm", Some(0), "verified"),
            ("llm", Some(1), "rejected"),
            ("llm", Some(2), "rejected"),
        ],
        "{r0:?}"
    );
    assert!(r0[2].4.contains("values"), "{r0:?}");
    assert!(r0[3].4.contains("crash"), "{r0:?}");
    let r1 = candidates(&r, "region 1");
    let by_sample = |k: u64| r1.iter().find(|c| c.1 == Some(k)).unwrap();
    assert_eq!(by_sample(0).3, "no_code");
    assert_eq!(by_sample(1).3, "rejected");
    assert!(by_sample(1).4.contains("timeout"), "{r1:?}");
    assert_eq!(by_sample(2).3, "verified");
    // on CPU nothing is timed: each region keeps its verified template kernel
    assert!(r0[0].5 && r1[0].5, "{r0:?} {r1:?}");
    assert_eq!(r["chosen"], "template");
    assert_eq!(r["verification"]["verified"], true);
    assert_only_verified_chosen(&r);
    assert!(r["notes"].to_string().contains("not timed"));
    assert_eq!(r["prompt_tokens"], 200);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("@triton.jit"));
    // two requests (one per region, n=3), after the model check
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0]["n"], 3);
    assert!(server.model_requests() >= 1);
}

#[test]
fn whole_mode_feedback_rounds_fix_a_wrong_model() {
    let server = ReplayServer::start(
        None,
        vec![Rule::new(
            "torch.tanh(x * 2.0 + self.bias)",
            vec![
                Reply::Answers(vec![answer("kb_wrong.md"), answer("seed_syntax.md")]),
                Reply::Answers(vec![answer("kb_ok.md")]),
            ],
        )],
    );
    let dir = scratch("whole");
    let (out, report) = (dir.join("out.py"), dir.join("report.json"));
    let o = drtc(
        &dir,
        &[
            "compile",
            s(&data("kb_scale_bias.py")),
            "-o",
            s(&out),
            "--backend",
            "llm",
            "--llm-url",
            &server.url,
            "--llm-model",
            "m",
            "--samples",
            "2",
            "--turns",
            "2",
            "--mode",
            "whole",
            "--device",
            "cpu",
            "--report",
            s(&report),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let c = candidates(&r, "whole");
    let find = |sample: u64, turn: u64| {
        c.iter()
            .find(|x| x.1 == Some(sample) && x.2 == turn)
            .unwrap_or_else(|| panic!("no sample {sample} turn {turn}: {c:?}"))
    };
    assert_eq!(find(0, 0).3, "rejected");
    assert!(find(0, 0).4.contains("values"), "{c:?}");
    assert_eq!(find(1, 0).3, "rejected");
    assert!(find(1, 0).4.contains("syntax error at line"), "{c:?}");
    assert_eq!(find(0, 1).3, "verified");
    assert_eq!(find(1, 1).3, "verified");
    assert_only_verified_chosen(&r);
    // the feedback rounds carried the verifier's and the checker's findings
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let last_user: Vec<String> = reqs[1..]
        .iter()
        .map(|q| {
            let m = q["messages"].as_array().unwrap();
            assert_eq!(m.len(), 4, "system, user, assistant, feedback");
            assert_eq!(m[2]["role"], "assistant");
            m[3]["content"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(
        last_user.iter().any(|m| m.contains("relative norm error")),
        "{last_user:?}"
    );
    assert!(
        last_user.iter().any(|m| m.contains("syntax error at line")),
        "{last_user:?}"
    );

    // a rerun with --offline answers from the cache: no request, the same verdicts
    let again = dir.join("again.json");
    let o = drtc(
        &dir,
        &[
            "compile",
            s(&data("kb_scale_bias.py")),
            "-o",
            s(&out),
            "--backend",
            "llm",
            "--llm-url",
            "http://127.0.0.1:9/v1",
            "--llm-model",
            "m",
            "--samples",
            "2",
            "--turns",
            "2",
            "--mode",
            "whole",
            "--device",
            "cpu",
            "--offline",
            "--report",
            s(&again),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(server.requests().len(), 3);
    let r2: Value = serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    let verdicts = |r: &Value| -> Vec<(String, u64, String)> {
        candidates(r, "whole")
            .into_iter()
            .map(|c| (c.0, c.2, c.3))
            .collect()
    };
    assert_eq!(verdicts(&r), verdicts(&r2));
    let llm: Vec<&Value> = r2["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["origin"] == "llm")
        .collect();
    assert_eq!(llm.len(), 4);
    assert!(llm.iter().all(|c| c["cached"] == true), "{llm:?}");
}

#[test]
fn an_unusable_server_is_a_clear_error_and_the_template_is_still_written() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let dir = scratch("unreachable");
    let out = dir.join("out.py");
    let args = |out: &Path, fallback: &str| {
        vec![
            "compile".to_string(),
            s(&data("mul_sigmoid.py")).into(),
            "-o".into(),
            s(out).into(),
            "--backend".into(),
            "llm".into(),
            "--llm-url".into(),
            url.clone(),
            "--llm-model".into(),
            "m".into(),
            "--device".into(),
            "cpu".into(),
            "--fallback".into(),
            fallback.into(),
        ]
    };
    let a = args(&out, "template");
    let o = drtc(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>());
    let t = text(&o);
    // the template module is written and verified: the exit status is the module's
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains(&format!("{url}/models")) && t.contains("cannot reach"),
        "{t}"
    );
    assert!(
        t.contains("writing the template backend's module instead"),
        "{t}"
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("def triton_fused_operator"));

    let none = dir.join("none.py");
    let a = args(&none, "none");
    let o = drtc(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.code() == Some(2) && !none.exists(), "{}", text(&o));

    // a wrong model name, before any work
    let server = ReplayServer::start(Some(vec!["served".into()]), vec![]);
    let mut a = args(&none, "none");
    a[7] = server.url.clone();
    let o = drtc(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>());
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("no model `m`") && t.contains("served"),
        "{t}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn eval_measures_pass_at_k_and_resumes() {
    let dir = scratch("eval");
    let bench = dir.join("bench.jsonl");
    let a = std::fs::read_to_string(data("mul_sigmoid.py")).unwrap();
    let b = "import torch\n\n\ndef get_inputs():\n    return [\n        torch.randn([4, 8], dtype=torch.float32),\n    ]\n\n\ndef fused_operator(x):\n    tensor_0 = torch.abs(x)\n    return [tensor_0]\n";
    let lines: Vec<String> = [a.as_str(), b]
        .iter()
        .map(|p| serde_json::json!({"pytorch": p, "difficulty": 1}).to_string())
        .collect();
    std::fs::write(&bench, lines.join("\n") + "\n").unwrap();
    let server = ReplayServer::start(
        None,
        vec![
            Rule::new(
                "torch.sigmoid(tensor_0)",
                vec![Reply::Answers(vec![
                    answer("seed_ok.md"),
                    answer("seed_pytorch_only.md"),
                ])],
            ),
            Rule::new("torch.abs(x)", vec![Reply::Status(500, None)]),
        ],
    );
    let (results, table) = (dir.join("results.jsonl"), dir.join("table.md"));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--mode",
            "whole",
            "--retries",
            "0",
            // four workers over two samples: both tasks are judged at once
            "--jobs",
            "4",
            "-o",
            s(&results),
            "--markdown",
            s(&table),
        ];
        args.extend_from_slice(extra);
        eval(&dir, &bench, &server.url, "2", &args)
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 task(s) at a time"), "{}", text(&o));
    let mut rows: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    // rows are written as tasks finish: the sigmoid task first here
    rows.sort_by_key(|r| r["ops"].to_string().contains("abs"));
    let verified: Vec<Vec<bool>> = rows
        .iter()
        .map(|r| {
            r["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["verified"] == true)
                .collect()
        })
        .collect();
    assert_eq!(verified, vec![vec![true, false], vec![false, false]]);
    assert!(rows[0]["samples"][1]["reason"]
        .as_str()
        .unwrap()
        .contains("computes with PyTorch"));
    assert!(rows[1]["samples"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("HTTP 500"));
    let md = std::fs::read_to_string(&table).unwrap();
    assert!(md.contains("| accuracy (pass@1) | 25.0% |"), "{md}");
    assert!(md.contains("| pass@2 | 50.0% |"), "{md}");
    assert!(md.contains("not measured"), "{md}");
    assert!(
        md.contains("| sigmoid | 1 | 1 | 100.0% |") && md.contains("| abs | 1 | 0 | 0.0% |"),
        "{md}"
    );
    let asked = server.requests().len();
    // an interrupted run left half a line behind
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&results)
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"task\": \"half").unwrap();
    drop(f);
    // resume: both tasks are done, nothing is asked again, the table is the same
    let o = run(&["--resume"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(server.requests().len(), asked);
    let text_after = std::fs::read_to_string(&results).unwrap();
    let parsed = text_after
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok())
        .count();
    assert_eq!(parsed, 2);
    assert!(text_after.ends_with("half\n"), "{text_after}");
    assert!(std::fs::read_to_string(&table)
        .unwrap()
        .contains("| pass@2 | 50.0% |"));
}

/// An answer that runs out of memory beside another worker is judged again alone, and
/// its row says so (the first attempt's reasons), with the verdict of the second.
#[test]
fn eval_rows_say_when_an_answer_was_retried_alone() {
    let dir = scratch("eval_retried");
    let bench = dir.join("bench.jsonl");
    let task = std::fs::read_to_string(data("mul_sigmoid.py")).unwrap();
    std::fs::write(
        &bench,
        serde_json::json!({"pytorch": task, "difficulty": 1}).to_string() + "\n",
    )
    .unwrap();
    let server = ReplayServer::start(
        None,
        vec![Rule::new(
            "torch.sigmoid(tensor_0)",
            vec![Reply::Answers(vec![
                answer("seed_oom.md"),
                answer("seed_ok.md"),
            ])],
        )],
    );
    let results = dir.join("results.jsonl");
    let o = eval(
        &dir,
        &bench,
        &server.url,
        "2",
        &[
            "--mode",
            "whole",
            "--retries",
            "0",
            "--no-strict",
            "--jobs",
            "2",
            "-o",
            s(&results),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let row: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    let cands = row["candidates"].as_array().unwrap();
    let oom = cands
        .iter()
        .find(|c| c["retried_alone"].is_array())
        .unwrap_or_else(|| panic!("no candidate retried alone: {cands:#?}"));
    assert_eq!(oom["status"], "rejected", "{oom:#?}");
    assert!(
        oom["retried_alone"][0]
            .as_str()
            .unwrap()
            .contains("out of memory"),
        "{oom:#?}"
    );
    // the honest answer was not retried
    assert!(
        cands
            .iter()
            .any(|c| c["status"] == "verified" && c.get("retried_alone").is_none()),
        "{cands:#?}"
    );
}

#[test]
fn eval_region_mode_stitches_each_sample() {
    let server = ReplayServer::start(
        None,
        vec![
            Rule::new(
                "torch.mul(x, w)",
                vec![Reply::Answers(vec![
                    answer("region_mul_ok.md"),
                    answer("region_mul_wrong.md"),
                ])],
            ),
            Rule::new(
                "torch.sigmoid(t0)",
                vec![Reply::Answers(vec![
                    answer("region_sigmoid_ok.md"),
                    answer("region_sigmoid_ok.md"),
                ])],
            ),
        ],
    );
    let dir = scratch("eval_regions");
    let results = dir.join("results.jsonl");
    let o = eval(
        &dir,
        &data("mul_sigmoid.py"),
        &server.url,
        "2",
        &[
            "--mode",
            "regions",
            "--max-region-ops",
            "1",
            "--jobs",
            "2",
            "-o",
            s(&results),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("verifying up to 2 answer(s) at once on cpu")
            && text(&o).contains("1 task(s) at a time"),
        "{}",
        text(&o)
    );
    let row: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    let samples = row["samples"].as_array().unwrap();
    assert_eq!(samples[0]["verified"], true, "{row}");
    assert_eq!(samples[1]["verified"], false);
    let reason = samples[1]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("region 0:") && reason.contains("values"),
        "{reason}"
    );
    assert_eq!(row["candidates"].as_array().unwrap().len(), 4);
    // every answer that reached the verifier says where its check's time went
    for c in row["candidates"].as_array().unwrap() {
        let t = &c["check_s"];
        let (wall, verify) = (t["wall_s"].as_f64(), t["verify_s"].as_f64());
        assert!(
            matches!((wall, verify), (Some(w), Some(v)) if v > 0.0 && w >= v),
            "{c}"
        );
    }
    assert!(
        text(&o).contains("| accuracy (pass@1) | 50.0% |"),
        "{}",
        text(&o)
    );
}

#[test]
fn eval_whole_mode_judges_programs_the_frontend_cannot_lower() {
    let server = ReplayServer::start(
        None,
        vec![Rule::new(
            "torch.rad2deg(x)",
            vec![Reply::Answers(vec![answer("kb_rad2deg_ok.md")])],
        )],
    );
    let dir = scratch("eval_unlowered");
    let results = dir.join("results.jsonl");
    let o = eval(
        &dir,
        &data("unlowered"),
        &server.url,
        "1",
        &["--mode", "whole", "-o", s(&results)],
    );
    assert!(o.status.success(), "{}", text(&o));
    let row: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    assert_eq!(row["error"], Value::Null, "{row}");
    assert_eq!(row["samples"][0]["verified"], true, "{row}");
    assert!(
        row["candidates"].to_string().contains("could not lower"),
        "{row}"
    );
    assert!(
        text(&o).contains("| accuracy (pass@1) | 100.0% |"),
        "{}",
        text(&o)
    );
}
