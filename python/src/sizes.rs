//! `set=` and `shrink=`: the CLI's `--set NAME=VALUE` and `--shrink` on a program's source
//! (module-level constants overridden, the size caps of CPU checking), for every function
//! that reads a program.

use drtc::driver::constants::{apply_overrides, ConstantOverride};
use drtc::driver::shrink::merged_overrides;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// `src` with `set` (a dict of constant names to values: a `str` is Python source text,
/// anything else its `repr`) and, when `shrink`, the size caps (a name in `set` wins over
/// its cap); and the overrides applied, `NAME=VALUE` each. `src` unchanged when neither.
pub fn sized(
    src: &str,
    set: Option<&Bound<'_, PyDict>>,
    shrink: bool,
) -> PyResult<(String, Vec<String>)> {
    let mut given = vec![];
    for (k, v) in set.into_iter().flat_map(|d| d.iter()) {
        let name: String = k
            .extract()
            .map_err(|_| PyValueError::new_err("set: every key must be a str"))?;
        let value = match v.cast::<PyString>() {
            Ok(s) => s.to_string(),
            Err(_) => v.repr()?.to_string(),
        };
        let o: ConstantOverride = format!("{name}={value}")
            .parse()
            .map_err(|e: String| PyValueError::new_err(format!("set: {e}")))?;
        given.push(o);
    }
    let all = merged_overrides(src, &given, shrink);
    if all.is_empty() {
        return Ok((src.to_string(), vec![]));
    }
    let changed = apply_overrides(src, &all).map_err(|missing| {
        PyValueError::new_err(format!(
            "set names no module-level constant of the program: {}",
            missing.join(", ")
        ))
    })?;
    Ok((changed, drtc::driver::constants::described(&all)))
}
