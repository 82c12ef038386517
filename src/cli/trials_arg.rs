//! `--trials`: how many trials a verification runs, at least the verifier's minimum.

/// Parses a trial count, refusing one below the verifier's minimum (it would run that many
/// anyway).
pub fn trials(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|e| format!("`{s}` is not a count ({e})"))?;
    let min = drtc::verifier::MIN_TRIALS;
    if n < min {
        return Err(format!(
            "must be at least {min} (the verifier's minimum number of trials)"
        ));
    }
    Ok(n)
}
