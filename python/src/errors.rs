//! The exceptions `drtc` raises, one per layer, all under `DrtcError`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    drtc,
    DrtcError,
    PyException,
    "Base class of every error drtc raises."
);
create_exception!(
    drtc,
    FrontendError,
    DrtcError,
    "A program drtc cannot read or lower. The message is the CLI's, with the source line and \
     a caret; `.span` is the (start, end) byte range, `.kind` the error kind, `.detail` the \
     one-line message."
);
create_exception!(
    drtc,
    CompileError,
    DrtcError,
    "The compile pipeline failed (a pass, the verifier, a pipeline string)."
);
create_exception!(
    drtc,
    SynthError,
    DrtcError,
    "Bad synthesis settings, or CP-SAT could not be loaded."
);
create_exception!(
    drtc,
    RuntimeEnvError,
    DrtcError,
    "The runtime could not run: no Python environment, missing packages, no GPU when one was \
     asked for, a worker that did not start. (A candidate's failure is not an error: it is in \
     the verification report.)"
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DrtcError", py.get_type::<DrtcError>())?;
    m.add("FrontendError", py.get_type::<FrontendError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("SynthError", py.get_type::<SynthError>())?;
    m.add("RuntimeEnvError", py.get_type::<RuntimeEnvError>())?;
    Ok(())
}

/// A `FrontendError` for `e` in `source` (named `name` in the caret rendering).
pub fn frontend(
    py: Python<'_>,
    e: &drtc_frontends::FrontendError,
    name: &str,
    source: &str,
) -> PyErr {
    use drtc_frontends::FrontendError as F;
    let err = FrontendError::new_err(e.render(name, source));
    let kind = match e {
        F::Syntax { .. } => "syntax",
        F::Unsupported { .. } => "unsupported",
        F::Random { .. } => "random",
        F::Lowering { .. } => "lowering",
        F::Format { .. } => "format",
    };
    let span = e.span();
    let value = err.value(py);
    // setting attributes on a fresh exception instance cannot fail in practice; if it did,
    // the rendered message is still there
    let _ = value.setattr("span", (span.start, span.end));
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("detail", e.to_string());
    err
}

pub fn runtime(e: impl Into<drtc::verifier::RuntimeError>) -> PyErr {
    // the runtime's messages name the CLI's flags; in Python they are keyword arguments
    let text = e
        .into()
        .to_string()
        .replace("`--device cpu`", "`device=\"cpu\"`");
    RuntimeEnvError::new_err(text)
}
