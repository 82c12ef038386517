//! `drtc suite-report results.jsonl`: the suite's table and summary, rebuilt from the JSON
//! rows a `drtc suite --json` run wrote (finished or stopped).

use super::error::{DriverError, DriverResult};
use super::suite_results::read_rows;
use super::suite_table::render;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Rebuild a suite's table and summary from its JSON rows",
    long_about = concat!(
        "Reads the JSON rows `drtc suite --json FILE` wrote (one per finished task; \
a stopped run's file works too) and prints the same table and summary the suite prints: \
status, kernels, compile time, eager / torch.compile / drtc medians, speedups, fast_1 and \
geometric means against each baseline.\n\nExample:\n  drtc suite-report results.jsonl \
--markdown table.md",
        exit_status_help!()
    )
)]
pub struct SuiteReportArgs {
    /// The results file (JSON lines).
    pub results: PathBuf,
    /// Also write the table as Markdown here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

pub fn run(args: SuiteReportArgs) -> DriverResult<ExitCode> {
    let (mut rows, skipped) = read_rows(&args.results)?;
    if rows.is_empty() {
        return Err(DriverError::Reported(format!(
            "{} holds no suite rows",
            args.results.display()
        )));
    }
    if skipped > 0 {
        eprintln!("note: {skipped} line(s) were not complete rows and are left out");
    }
    rows.sort_by_key(|r| {
        let t = r["task"].as_str().unwrap_or("");
        let n: u64 = t
            .split('_')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX);
        (n, t.to_string())
    });
    let (table, summary) = render(&rows);
    println!("{table}\n{summary}");
    if let Some(p) = &args.markdown {
        let md = format!(
            "Rebuilt by `drtc suite-report {}` from its JSON rows.\n\n{table}\n{summary}\n",
            args.results.display()
        );
        std::fs::write(p, md).map_err(|source| DriverError::Write {
            path: p.display().to_string(),
            source,
        })?;
    }
    Ok(ExitCode::SUCCESS)
}
