//! Validation of synthesized programs: each is proved valid and finite before it is kept.
//!
//! Two methods (`Method`), one long-lived Python worker (`Validator`, `validate.py`) for a
//! whole run:
//!
//! - `Run(device)`: the program runs in PyTorch at full size on the inputs of `trials`
//!   seeds; errors, outputs whose shapes differ from the IR's and NaN/Inf outputs reject
//!   it. Exact, but at the default FLOP range about 10 s and up to 13 GB per program on a
//!   CPU.
//! - `Meta`: the program's PyTorch code runs at full size on PyTorch's `meta` device (every
//!   call, argument, shape and dtype checked, no memory and no arithmetic), and finiteness
//!   is proved by the interval analysis of `drtc_ir::range` at the exact sizes, for every
//!   input `torch.randn` can return (`RANDN_BOUND`) whatever the seed.
//!
//! `choose` picks per program: the run when it fits the element budget, else `Meta`.

use super::generate::SynthProgram;
use super::soundness::input_range;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};

const SCRIPT: &str = include_str!("validate.py");
/// Lines of the worker's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// Where programs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda,
}

impl Device {
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }
}

/// How one program is validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Run at full size on the device, `trials` input seeds.
    Run(Device),
    /// Run on the meta device (validity) plus the interval proof (finiteness).
    Meta,
}

impl Method {
    /// The name written in each program's record (`"validation"`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Run(Device::Cpu) => "run-cpu",
            Method::Run(Device::Cuda) => "run-cuda",
            Method::Meta => "meta+interval",
        }
    }
}

/// Elements of every tensor of the program (inputs and every node's results): what a run
/// at full size holds in memory at most, give or take PyTorch's temporaries.
pub fn total_elements(p: &SynthProgram) -> u64 {
    let g = &p.graph;
    let numel = |v| {
        g.ty(v)
            .shape
            .iter()
            .map(|&d| d.max(0) as u64)
            .product::<u64>()
    };
    let inputs: u64 = g.inputs().iter().map(|&v| numel(v)).sum();
    let results: u64 = g
        .body()
        .iter()
        .flat_map(|&n| g.node(n).outputs.clone())
        .map(numel)
        .sum();
    inputs + results
}

/// The method for `p` when runs on `device` are allowed up to `budget` elements (of all
/// tensors together) and `flop_budget` FLOPs; beyond either, `Meta`.
pub fn choose(p: &SynthProgram, device: Device, budget: u64, flop_budget: u64) -> Method {
    if total_elements(p) <= budget && p.flops <= flop_budget {
        Method::Run(device)
    } else {
        Method::Meta
    }
}

/// Why validation itself could not run (as opposed to a program it rejected).
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("cannot start `{python}`: {source}")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("the validation worker did not start: {reason}; its stderr ends:\n{stderr}")]
    Start { reason: String, stderr: String },
    #[error(
        "the validation worker {status} while validating program {index} ({ops}; {flops} FLOPs, \
         {elements} elements, method {method}); its stderr ends:\n{stderr}"
    )]
    Died {
        index: usize,
        ops: String,
        flops: u64,
        elements: u64,
        method: &'static str,
        status: String,
        stderr: String,
    },
    #[error("the validation worker failed: {0}")]
    Worker(String),
}

/// The verdict on one program: `rejection` is `None` when it is valid and finite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub index: usize,
    pub method: Method,
    pub rejection: Option<String>,
}

/// The Python interpreter drtc uses (`drtc_env`'s locator: `$DRTC_PYTHON`, else the venv
/// of `drtc setup` under `$DRTC_HOME`). When there is none, the venv's path: starting it
/// then fails with that path in the message, rather than running some other Python.
pub fn default_python() -> String {
    let home = drtc_env::DrtcHome::from_env();
    match drtc_env::PythonEnv::locate(&home) {
        Ok(env) => env.python.display().to_string(),
        Err(_) => home.venv_python().display().to_string(),
    }
}

/// The interval proof: `None` when no value of `p` can leave its op's domain or the safe
/// magnitude of its dtype, for any input `torch.randn` returns; else why not.
pub fn interval_proof(p: &SynthProgram) -> Option<String> {
    drtc_ir::range::violations(&p.graph, input_range())
        .first()
        .map(|v| format!("not proved finite: {v}"))
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// A validation worker kept for a whole run (Python and torch start once); restarted
/// after it dies.
pub struct Validator {
    python: String,
    device: Device,
    trials: usize,
    worker: Option<Running>,
}

impl Validator {
    /// A validator; the worker starts on first use.
    pub fn new(python: &str, device: Device, trials: usize) -> Self {
        Validator {
            python: python.to_string(),
            device,
            trials: trials.max(1),
            worker: None,
        }
    }

    fn start(&self) -> Result<Running, ValidateError> {
        // run from an empty folder: `python -c` puts the working folder first on sys.path,
        // and a stray `re.py` or `json.py` there would shadow the standard library
        let cwd = std::env::temp_dir().join(format!("drtc-synth-validate-{}", std::process::id()));
        std::fs::create_dir_all(&cwd).map_err(|e| ValidateError::Worker(e.to_string()))?;
        let mut child = drtc_env::python_command(&self.python)
            .current_dir(&cwd)
            .args(["-c", SCRIPT, self.device.name(), &self.trials.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| ValidateError::Spawn {
                python: self.python.clone(),
                source,
            })?;
        let missing = || ValidateError::Worker("the worker's pipes are missing".into());
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(missing)?);
        let err = child.stderr.take().ok_or_else(missing)?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == STDERR_LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let mut w = Running {
            child,
            stdin,
            stdout,
            stderr,
        };
        // the worker says `ready` once torch is imported
        let mut line = String::new();
        let ready = w
            .stdout
            .read_line(&mut line)
            .ok()
            .filter(|&n| n > 0)
            .is_some()
            && serde_json::from_str::<serde_json::Value>(&line)
                .is_ok_and(|v| v["event"] == "ready");
        if !ready {
            let _ = w.child.kill();
            let status = w.child.wait().map(|s| s.to_string()).unwrap_or_default();
            std::thread::sleep(std::time::Duration::from_millis(50));
            return Err(ValidateError::Start {
                reason: if line.trim().is_empty() {
                    format!("it exited ({status}) before saying it was ready")
                } else {
                    format!("it answered {:?} instead of `ready`", line.trim())
                },
                stderr: stderr_text(&w.stderr),
            });
        }
        Ok(w)
    }

    /// Validates `programs` with the given methods (one each, in order); a verdict per
    /// program, in order. Programs that `Meta` validates get the interval proof first.
    pub fn check(
        &mut self,
        programs: &[(&SynthProgram, Method)],
    ) -> Result<Vec<Verdict>, ValidateError> {
        let mut verdicts: Vec<Option<Verdict>> = vec![None; programs.len()];
        let mut sent = vec![];
        for (k, &(p, method)) in programs.iter().enumerate() {
            if method == Method::Meta {
                if let Some(why) = interval_proof(p) {
                    verdicts[k] = Some(Verdict {
                        index: p.index,
                        method,
                        rejection: Some(why),
                    });
                    continue;
                }
            }
            sent.push(k);
        }
        if sent.is_empty() {
            return Ok(verdicts.into_iter().flatten().collect());
        }
        if self.worker.is_none() {
            self.worker = Some(self.start()?);
        }
        let w = self.worker.as_mut().expect("started above");
        let mut answered = 0;
        let result = exchange(w, programs, &sent, &mut verdicts, &mut answered);
        if let Err(e) = result {
            // the worker is gone or out of step: the program it was on is named
            let mut dead = self.worker.take().expect("running");
            let _ = dead.child.kill();
            let status = dead
                .child
                .wait()
                .map(|s| describe_status(&s))
                .unwrap_or_else(|_| format!("failed ({e})"));
            std::thread::sleep(std::time::Duration::from_millis(50));
            let &(p, method) = &programs[sent[answered.min(sent.len() - 1)]];
            return Err(ValidateError::Died {
                index: p.index,
                ops: p
                    .ops
                    .iter()
                    .map(|o| o.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                flops: p.flops,
                elements: total_elements(p),
                method: method.name(),
                status,
                stderr: stderr_text(&dead.stderr),
            });
        }
        Ok(verdicts.into_iter().flatten().collect())
    }
}

impl Drop for Validator {
    fn drop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            let _ = w.child.kill();
            let _ = w.child.wait();
        }
    }
}

/// Sends the programs `sent` (indices into `programs`) and reads their answers, in order;
/// `answered` counts the answers read.
fn exchange(
    w: &mut Running,
    programs: &[(&SynthProgram, Method)],
    sent: &[usize],
    verdicts: &mut [Option<Verdict>],
    answered: &mut usize,
) -> Result<(), String> {
    // answers are one short line each, so a batch's answers fit the pipe's buffer while
    // the jobs are written; a write that fails (the worker died) stops the writing, and the
    // answers it gave before dying are still read, so that the program it died on is named
    let mut write_error = None;
    for &k in sent {
        let (p, method) = programs[k];
        let shapes: Vec<&Vec<i64>> = p
            .graph
            .outputs()
            .iter()
            .map(|&v| &p.graph.ty(v).shape)
            .collect();
        let dtypes: Vec<&str> = p
            .graph
            .outputs()
            .iter()
            .map(|&v| p.graph.ty(v).dtype.torch_name())
            .collect();
        let job = serde_json::json!({
            "index": p.index,
            "pytorch": p.python,
            "shapes": shapes,
            "dtypes": dtypes,
            "meta": method == Method::Meta,
        });
        if let Err(e) = writeln!(w.stdin, "{job}") {
            write_error = Some(e);
            break;
        }
    }
    if write_error.is_none() {
        write_error = w.stdin.flush().err();
    }
    for &k in sent {
        let mut line = String::new();
        let n = w
            .stdout
            .read_line(&mut line)
            .map_err(|e| format!("reading an answer: {e}"))?;
        if n == 0 {
            return Err(match &write_error {
                Some(e) => format!("no answer (writing a job: {e})"),
                None => "no answer".into(),
            });
        }
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        let (p, method) = programs[k];
        if v["index"].as_u64() != Some(p.index as u64) {
            return Err(format!("answer out of order: {line}"));
        }
        verdicts[k] = Some(Verdict {
            index: p.index,
            method,
            rejection: v["reason"].as_str().map(str::to_string),
        });
        *answered += 1;
    }
    Ok(())
}

fn stderr_text(tail: &Mutex<VecDeque<String>>) -> String {
    let t = tail.lock().unwrap_or_else(|p| p.into_inner());
    if t.is_empty() {
        "(nothing)".into()
    } else {
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

fn describe_status(s: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if s.signal() == Some(9) {
            return "was killed (SIGKILL: the kernel's out-of-memory killer, or a limit)".into();
        }
        if let Some(sig) = s.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    format!("exited ({s})")
}

/// Validates `programs` in one fresh worker, each with `Run(device)` on `trials` seeds; a
/// verdict for each, in order.
pub fn validate(
    python: &str,
    device: Device,
    trials: usize,
    programs: &[&SynthProgram],
) -> Result<Vec<Verdict>, ValidateError> {
    let jobs: Vec<(&SynthProgram, Method)> =
        programs.iter().map(|&p| (p, Method::Run(device))).collect();
    Validator::new(python, device, trials).check(&jobs)
}
