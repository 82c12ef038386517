//! `drtc setup`: creates drtc's pinned Python environment (uv when available, else pip);
//! a fast no-op when it is already up to date.

use super::error::{DriverError, DriverResult};
use super::pool::runtime_error;
use clap::Args;
use drtc::verifier::{env, setup, DrtcHome};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Create drtc's pinned Python environment (torch, triton, numpy, ortools)",
    long_about = concat!(
        "Creates (or brings up to date) the virtual environment drtc runs its Python work in, under $DRTC_HOME (default ~/.cache/drtc), with the pinned versions of torch, triton, numpy and ortools; uv when available, else pip. A fast no-op when it is already up to date. $DRTC_PYTHON, when set, names another interpreter drtc uses instead.\n\nExample:\n  drtc setup --dry-run",
        exit_status_help!()
    )
)]
pub struct SetupArgs {
    /// Print what would be done, do nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Base interpreter for the environment (default: Python of the pinned version).
    #[arg(long)]
    pub python: Option<String>,
}

pub fn run(args: SetupArgs) -> DriverResult<ExitCode> {
    let home = DrtcHome::from_env();
    if std::env::var_os("DRTC_PYTHON").is_some_and(|v| !v.is_empty()) {
        eprintln!(
            "note: DRTC_PYTHON is set, so drtc runs that interpreter, not the environment set \
             up here"
        );
    }
    let plan = setup::plan(&home, args.python.as_deref()).map_err(runtime_error)?;
    let pins: Vec<String> = env::pins()
        .iter()
        .map(|p| format!("{}=={}", p.name, p.version))
        .collect();
    if plan.steps.is_empty() {
        println!(
            "drtc setup: {} is up to date ({})",
            plan.venv.display(),
            pins.join(", ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        println!(
            "drtc setup would run ({:?}; requirements written to {}):",
            plan.installer,
            plan.requirements.display()
        );
        for s in &plan.steps {
            println!("  {s}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    setup::execute(&plan).map_err(runtime_error)?;
    let left = setup::outdated(&home).map_err(runtime_error)?;
    if !left.is_empty() {
        let names: Vec<String> = left
            .iter()
            .map(|(n, v)| format!("{n} ({})", v.as_deref().unwrap_or("missing")))
            .collect();
        return Err(DriverError::Reported(format!(
            "setup finished but these packages are not at their pinned versions: {}",
            names.join(", ")
        )));
    }
    println!(
        "drtc setup: {} is ready ({})",
        plan.venv.display(),
        pins.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
