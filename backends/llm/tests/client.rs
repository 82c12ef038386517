//! The client against the replay server: retries on 429 and 5xx, a server that never
//! answers, servers that ignore `n`, preflight errors naming URL and status, the cache
//! and offline mode. No test talks to anything but 127.0.0.1.

#[path = "../../../tests/support/replay.rs"]
mod replay;

use drtc_llm::{
    render, ChatMessage, Client, ClientOptions, LlmError, Preflight, PromptMode, PromptTarget,
    ResponseCache, Sampling,
};
use replay::{ReplayServer, Reply, Rule};
use std::time::Duration;

fn options(url: &str) -> ClientOptions {
    let mut o = ClientOptions::new(url, "replay-model");
    o.api_key = None;
    o.retries = 3;
    o.backoff = Duration::from_millis(10);
    o.read_timeout = Duration::from_secs(5);
    o.connect_timeout = Duration::from_secs(2);
    o
}

fn messages(tag: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("sys"),
        ChatMessage::user(format!("program {tag}")),
    ]
}

fn cache_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("drtc-llm-client-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn rate_limit_then_success_is_retried() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "program a",
            vec![
                Reply::Status(429, Some(0)),
                Reply::Status(503, None),
                Reply::Answers(vec!["ok".into()]),
            ],
        )],
    );
    let c = Client::new(options(&s.url), None);
    let r = c.samples(&messages("a"), &Sampling::default(), 1);
    let got = r[0].as_ref().expect("answered after retries");
    assert_eq!(got.content, "ok");
    assert_eq!(got.attempts, 3);
    assert_eq!(got.prompt_tokens, 100);
    assert_eq!(got.completion_tokens, 50);
    assert_eq!(s.requests().len(), 3);
}

#[test]
fn persistent_server_error_fails_the_samples_with_the_status() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new("program b", vec![Reply::Status(500, None)])],
    );
    let c = Client::new(options(&s.url), None);
    let r = c.samples(&messages("b"), &Sampling::default(), 2);
    assert_eq!(r.len(), 2);
    match &r[0] {
        Err(LlmError::Status {
            status: 500, url, ..
        }) => assert!(url.contains("/chat/completions")),
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    assert!(r[1].is_err());
    // first try and three retries
    assert_eq!(s.requests().len(), 4);
}

#[test]
fn a_timed_out_request_is_retried() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "program c",
            vec![
                Reply::Hang(Duration::from_secs(5)),
                Reply::Answers(vec!["on time".into()]),
            ],
        )],
    );
    let mut o = options(&s.url);
    o.read_timeout = Duration::from_millis(500);
    o.retries = 1;
    let r = Client::new(o, None).samples(&messages("c"), &Sampling::default(), 1);
    let got = r[0].as_ref().expect("the retry is answered");
    assert_eq!((got.content.as_str(), got.attempts), ("on time", 2));
}

#[test]
fn a_server_that_never_answers_times_out() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "program h",
            vec![Reply::Hang(Duration::from_secs(5))],
        )],
    );
    let mut o = options(&s.url);
    o.read_timeout = Duration::from_millis(500);
    o.retries = 1;
    let c = Client::new(o, None);
    let start = std::time::Instant::now();
    let r = c.samples(&messages("h"), &Sampling::default(), 1);
    let e = r[0].as_ref().expect_err("no answer in time");
    assert!(matches!(e, LlmError::Unreachable { .. }), "{e}");
    assert!(e.to_string().contains(&s.url), "{e}");
    assert_eq!(s.requests().len(), 2);
    assert!(start.elapsed() < Duration::from_secs(4));
}

#[test]
fn servers_that_ignore_n_get_one_request_per_sample_with_distinct_seeds() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new("program d", vec![Reply::OneChoice("one".into())])],
    );
    let c = Client::new(options(&s.url), None);
    let sampling = Sampling {
        seed: Some(7),
        ..Sampling::default()
    };
    let r = c.samples(&messages("d"), &sampling, 3);
    assert!(r
        .iter()
        .all(|x| x.as_ref().is_ok_and(|c| c.content == "one")));
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3, "one n=3 request, then two single ones");
    assert_eq!(reqs[0]["n"], 3);
    let seeds: Vec<u64> = reqs.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, vec![7, 8, 9]);
    assert_eq!(reqs[0]["model"], "replay-model");
    assert_eq!(reqs[0]["messages"][1]["content"], "program d");
}

#[test]
fn n_choices_in_one_request_and_usage_split() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "program e",
            vec![Reply::Answers(vec!["x".into(), "y".into()])],
        )],
    );
    let c = Client::new(options(&s.url), None);
    let r = c.samples(&messages("e"), &Sampling::default(), 2);
    let texts: Vec<&str> = r
        .iter()
        .map(|x| x.as_ref().unwrap().content.as_str())
        .collect();
    assert_eq!(texts, vec!["x", "y"]);
    let total: u64 = r
        .iter()
        .map(|x| x.as_ref().unwrap().completion_tokens)
        .sum();
    assert_eq!(total, 100);
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn cache_answers_reruns_and_offline_uses_only_the_cache() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "program f",
            vec![Reply::Answers(vec!["a".into(), "b".into()])],
        )],
    );
    let dir = cache_dir("cache");
    let c = Client::new(options(&s.url), Some(ResponseCache::new(&dir)));
    let first = c.samples(&messages("f"), &Sampling::default(), 2);
    assert_eq!(s.requests().len(), 1);
    let again = c.samples(&messages("f"), &Sampling::default(), 2);
    assert_eq!(s.requests().len(), 1, "a rerun costs no request");
    assert!(again.iter().all(|x| x.as_ref().unwrap().cached));
    assert_eq!(
        first[1].as_ref().unwrap().content,
        again[1].as_ref().unwrap().content
    );
    // other sampling parameters are another key
    let mut o = options(&s.url);
    o.offline = true;
    let offline = Client::new(o, Some(ResponseCache::new(&dir)));
    let hot = Sampling {
        temperature: 1.0,
        ..Sampling::default()
    };
    assert!(matches!(
        offline.samples(&messages("f"), &hot, 1)[0],
        Err(LlmError::Offline)
    ));
    // a third sample was never asked for
    let three = offline.samples(&messages("f"), &Sampling::default(), 3);
    assert!(three[0].is_ok() && three[1].is_ok());
    assert!(matches!(three[2], Err(LlmError::Offline)));
    assert_eq!(s.requests().len(), 1, "offline sends nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn preflight_checks_model_key_and_reachability() {
    let s = ReplayServer::start(Some(vec!["replay-model".into()]), vec![]);
    assert_eq!(
        Client::new(options(&s.url), None).preflight().unwrap(),
        Preflight::ModelListed
    );
    let mut wrong = options(&s.url);
    wrong.model = "no-such-model".into();
    let e = Client::new(wrong, None).preflight().unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("no-such-model") && msg.contains(&s.url) && msg.contains("replay-model"),
        "{msg}"
    );

    let bare = ReplayServer::start(None, vec![]);
    // no /models endpoint: tolerated
    assert_eq!(
        Client::new(options(&bare.url), None).preflight().unwrap(),
        Preflight::NoModelList
    );

    // a port nobody listens on
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let e = Client::new(options(&url), None).preflight().unwrap_err();
    assert!(
        matches!(e, LlmError::Unreachable { .. }) && e.to_string().contains(&url),
        "{e}"
    );
}

#[test]
fn refused_key_names_the_status() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new("program g", vec![Reply::Status(401, None)])],
    );
    let c = Client::new(options(&s.url), None);
    let e = c
        .samples(&messages("g"), &Sampling::default(), 1)
        .remove(0)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("HTTP 401") && msg.contains("API key") && msg.contains(&s.url),
        "{msg}"
    );
    assert_eq!(s.requests().len(), 1, "a refused key is not retried");
}

#[test]
fn rendered_prompts_go_out_as_chat_messages() {
    let s = ReplayServer::start(
        None,
        vec![Rule::new(
            "fused_operator(x)",
            vec![Reply::Answers(vec!["ok".into()])],
        )],
    );
    let program = "import torch\n\n\ndef get_inputs():\n    return [torch.randn([4], dtype=torch.float32)]\n\n\ndef fused_operator(x):\n    tensor_0 = torch.exp(x)\n    return [tensor_0]\n";
    let m = render(
        PromptMode::Regions,
        program,
        &PromptTarget::new("NVIDIA H200", "float32"),
        None,
    )
    .unwrap();
    let c = Client::new(options(&s.url), None);
    assert!(c.samples(&m, &Sampling::default(), 1)[0].is_ok());
    let req = &s.requests()[0];
    assert_eq!(req["messages"][0]["role"], "system");
    assert!(req["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("torch.exp(x)"));
}
