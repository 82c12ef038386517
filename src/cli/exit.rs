//! drtc's exit statuses: one convention for every subcommand (ARCHITECTURE.md, "The command
//! line"). clap's own usage errors already exit with 2, so "your input is wrong" is 2.

use std::process::ExitCode;

/// Everything asked for was done (and verified, where verifying was asked for).
pub const OK: u8 = 0;
/// The candidate or the generated module is wrong: it ran, and did not verify (or, for
/// `fmt --check`, the file is not in canonical form).
pub const NOT_VERIFIED: u8 = 1;
/// The input is wrong: usage, a file that cannot be read, parsed or written, a program
/// drtc refuses, a reference that fails on its own.
pub const BAD_INPUT: u8 = 2;
/// drtc failed: its Python runtime could not start or answer, or an internal error.
pub const DRTC_FAILED: u8 = 3;
/// The work stopped early on purpose (`suite --stop-after`); run again with `--resume`.
pub const UNFINISHED: u8 = 4;

/// The exit code for "verified" (`true`) or "not verified" (`false`).
pub fn verified(ok: bool) -> ExitCode {
    ExitCode::from(if ok { OK } else { NOT_VERIFIED })
}

/// Whether a failed verification is the reference's own failure (every failed check is
/// `reference`): then the input is wrong, not the candidate.
pub fn reference_broken(report: &drtc::verifier::VerifyReport) -> bool {
    !report.verified
        && !report.failures.is_empty()
        && report
            .failures
            .iter()
            .all(|f| f.check == drtc::verifier::Check::Reference)
}

/// The exit code of a verification: 0 verified, 2 when the reference itself failed,
/// 1 when the candidate did not verify.
pub fn of_report(report: &drtc::verifier::VerifyReport) -> ExitCode {
    if report.verified {
        ExitCode::from(OK)
    } else if reference_broken(report) {
        ExitCode::from(BAD_INPUT)
    } else {
        ExitCode::from(NOT_VERIFIED)
    }
}
