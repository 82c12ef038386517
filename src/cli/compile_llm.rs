//! `drtc compile --backend llm`: the LLM search on one program (see
//! `drtc::driver::llm::compile`), with the server checked before any work, and the
//! template backend's module written instead when it cannot be used (`--fallback`).

use super::codegen_args::FallbackArg;
use super::compile::{device_and_options, run_template, CompileArgs};
use super::error::{DriverError, DriverResult};
use super::files::read_file;
use super::files::write;
use super::llm_args::program_dtype;
use drtc::driver::llm::compile::compile_with_llm;
use drtc::driver::llm::LlmContext;
use drtc::driver::load::load_programs;
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitCode;

pub fn run(args: CompileArgs) -> DriverResult<ExitCode> {
    if args.frontend == drtc::driver::frontend::Frontend::Export {
        return Err(DriverError::Reported(
            "--backend llm reads programs with the native frontend only (its prompts are \
             the program's own PyTorch code): drop --frontend export"
                .into(),
        ));
    }
    if args.no_verify || args.search == super::search_arg::SearchArg::Full {
        return Err(DriverError::Reported(
            "--backend llm verifies every candidate: drop --no-verify and --search".into(),
        ));
    }
    if let Err(e) = args.llm.preflight() {
        return match args.fallback {
            FallbackArg::None => Err(e),
            FallbackArg::Template => {
                eprintln!("warning: the LLM backend cannot be used: {}", e.message());
                eprintln!(
                    "warning: writing the template backend's module instead (--fallback \
                     template; --fallback none makes this an error, exit status 2)"
                );
                // the template module is written and verified as usual: its exit status is
                // the module's (the report names the fallback)
                run_template(args)
            }
        };
    }
    let contents = read_file(&args.file)?;
    let mut overrides = args.set.clone();
    if args.shrink {
        for o in drtc::driver::shrink::shrink_overrides(&contents) {
            if !overrides.iter().any(|x| x.name == o.name) {
                overrides.push(o);
            }
        }
    }
    super::overrides::say_overrides(&overrides, &args.set);
    // `auto` is the native frontend here: a program it refuses is refused with its reason
    let mut programs = load_programs(&args.file, &contents, &overrides, args.line)
        .map_err(DriverError::Reported)?;
    if programs.len() != 1 {
        return Err(DriverError::Reported(format!(
            "{} holds {} programs: pick one with --line, or run `drtc eval` over all of them",
            args.file.display(),
            programs.len()
        )));
    }
    let mut prog = programs
        .remove(0)
        .map_err(|e| DriverError::Reported(format!("{}: {}", e.name, e.message)))?;
    let (device, mut opts) = device_and_options(&args);
    opts.guard.reference_source = prog.reference_source.clone();
    let mut setup = args
        .llm
        .setup(device, &program_dtype(&prog.graph), None, None)?;
    setup.settings.rule = Some(opts.precision.rule().to_string());
    let cx = LlmContext::new(
        &setup.client,
        &setup.checker,
        &setup.pool,
        &setup.settings,
        setup.work.clone(),
    );
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos}/{len} candidates {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let compiled = compile_with_llm(&cx, &mut prog, &opts, &bar).map_err(DriverError::Reported)?;
    bar.finish_and_clear();
    write(&args.output, &compiled.source)?;
    let verified = compiled
        .candidates
        .iter()
        .filter(|c| c.status == drtc_llm::Status::Verified);
    eprintln!(
        "wrote {} ({} module; {} candidates, {} verified)",
        args.output.display(),
        compiled.chosen,
        compiled.candidates.len(),
        verified.count()
    );
    for n in &compiled.notes {
        eprintln!("note: {n}");
    }
    let v = &compiled.verification;
    if v.verified {
        match (v.reference_ms, v.time_ms) {
            (Some(r), Some(t)) => eprintln!(
                "verified on {}; eager {r:.4} ms, drtc {t:.4} ms: {:.2}x",
                device.name(),
                r / t
            ),
            _ => eprintln!("verified on {}", device.name()),
        }
    } else {
        eprintln!("NOT verified on {}:", device.name());
        for r in &v.reasons {
            eprintln!("  {r}");
        }
    }
    if let Some(path) = &args.report {
        let report = compiled.report(&cx);
        write(
            path,
            &serde_json::to_string_pretty(&report).unwrap_or_default(),
        )?;
    }
    Ok(super::exit::verified(v.verified))
}
