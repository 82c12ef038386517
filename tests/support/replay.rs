//! A replay server for the LLM backend's tests: an OpenAI-compatible endpoint on
//! 127.0.0.1 (ephemeral port) that answers from recorded answers. Each rule matches the
//! first user message of a request (the prompt with the program) by a substring and
//! serves its replies in order, the last one repeating. Every request is answered on its
//! own thread, so a hanging reply does not hold up the others.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Reply {
    /// HTTP 200 with one choice per answer (at most the request's `n`).
    Answers(Vec<String>),
    /// HTTP 200 with exactly one choice whatever `n` asks (a server that ignores `n`).
    OneChoice(String),
    /// An HTTP error, with an optional `Retry-After` header (seconds).
    Status(u16, Option<u32>),
    /// Wait this long, then answer the rest of the rule (a server that never answers in
    /// time).
    Hang(Duration),
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub contains: String,
    pub replies: Vec<Reply>,
}

impl Rule {
    pub fn new(contains: &str, replies: Vec<Reply>) -> Self {
        Rule {
            contains: contains.into(),
            replies,
        }
    }
}

struct State {
    rules: Vec<(Rule, usize)>,
    requests: Vec<Value>,
    model_requests: usize,
}

pub struct ReplayServer {
    pub url: String,
    state: Arc<Mutex<State>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A recorded answer under `tests/data/llm/answers/`.
pub fn answer(name: &str) -> String {
    let path = format!(
        "{}/tests/data/llm/answers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn completion(contents: &[String]) -> Value {
    let choices: Vec<Value> = contents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"index": i, "message": {"role": "assistant", "content": c},
                   "finish_reason": "stop"})
        })
        .collect();
    json!({
        "id": "replay", "object": "chat.completion", "model": "replay",
        "choices": choices,
        "usage": {"prompt_tokens": 100, "completion_tokens": 50 * contents.len(),
                  "total_tokens": 100 + 50 * contents.len()},
    })
}

fn respond(req: tiny_http::Request, status: u16, body: String, headers: &[(&str, String)]) {
    let mut resp = tiny_http::Response::from_string(body).with_status_code(status);
    for (k, v) in headers {
        if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            resp = resp.with_header(h);
        }
    }
    let _ = req.respond(resp);
}

fn handle(state: &Mutex<State>, models: &Option<Vec<String>>, mut req: tiny_http::Request) {
    let url = req.url().to_string();
    if url.ends_with("/models") {
        state.lock().unwrap().model_requests += 1;
        match models {
            Some(m) => {
                let data: Vec<Value> = m
                    .iter()
                    .map(|id| json!({"id": id, "object": "model"}))
                    .collect();
                respond(
                    req,
                    200,
                    json!({"object": "list", "data": data}).to_string(),
                    &[],
                );
            }
            None => respond(req, 404, "not found".into(), &[]),
        }
        return;
    }
    let mut body = String::new();
    let _ = req.as_reader().read_to_string(&mut body);
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let n = v["n"].as_u64().unwrap_or(1) as usize;
    let first_user = v["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let mut replies = vec![];
    {
        let mut s = state.lock().unwrap();
        s.requests.push(v.clone());
        if let Some((rule, next)) = s
            .rules
            .iter_mut()
            .find(|(r, _)| first_user.contains(&r.contains))
        {
            // a hang is followed by the next reply, as one response
            loop {
                let i = (*next).min(rule.replies.len() - 1);
                *next += 1;
                let r = rule.replies[i].clone();
                let hang = matches!(r, Reply::Hang(_));
                replies.push(r);
                if !hang || *next >= rule.replies.len() {
                    break;
                }
            }
        }
    }
    if replies.is_empty() {
        respond(req, 400, "no recorded answer for this prompt".into(), &[]);
        return;
    }
    for r in replies {
        match r {
            Reply::Hang(d) => std::thread::sleep(d),
            Reply::Answers(a) => {
                let k = a.len().min(n.max(1));
                respond(req, 200, completion(&a[..k]).to_string(), &[]);
                return;
            }
            Reply::OneChoice(a) => {
                respond(req, 200, completion(&[a]).to_string(), &[]);
                return;
            }
            Reply::Status(code, retry) => {
                let headers: Vec<(&str, String)> = retry
                    .map(|s| ("Retry-After", s.to_string()))
                    .into_iter()
                    .collect();
                respond(
                    req,
                    code,
                    json!({"error": {"message": "replayed error"}}).to_string(),
                    &headers,
                );
                return;
            }
        }
    }
    respond(req, 500, "hang without a following reply".into(), &[]);
}

impl ReplayServer {
    /// Starts a server; `models` is its `/models` list (`None`: no such endpoint).
    pub fn start(models: Option<Vec<String>>, rules: Vec<Rule>) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let state = Arc::new(Mutex::new(State {
            rules: rules.into_iter().map(|r| (r, 0)).collect(),
            requests: vec![],
            model_requests: 0,
        }));
        let (s, st) = (server.clone(), state.clone());
        let thread = std::thread::spawn(move || {
            for req in s.incoming_requests() {
                let (st, models) = (st.clone(), models.clone());
                std::thread::spawn(move || handle(&st, &models, req));
            }
        });
        ReplayServer {
            url: format!("http://127.0.0.1:{port}/v1"),
            state,
            server,
            thread: Some(thread),
        }
    }

    /// The chat-completion request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn model_requests(&self) -> usize {
        self.state.lock().unwrap().model_requests
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
