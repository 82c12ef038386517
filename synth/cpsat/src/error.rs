//! The binding's error type: the library could not be found or loaded, or the solver
//! rejected the model.

/// What can go wrong when loading or calling CP-SAT.
#[derive(Debug, thiserror::Error)]
pub enum CpSatError {
    #[error(
        "cannot find OR-Tools' CP-SAT library (libortools.so.9); tried: {tried}.\n\
         Install it with `drtc setup`, or by hand with\n  \
         pip install --no-deps --target ~/.cache/drtc/ortools ortools=={version}\n\
         and point DRTC_ORTOOLS_LIB at ~/.cache/drtc/ortools/ortools/.libs/libortools.so.9"
    )]
    NotFound {
        tried: String,
        version: &'static str,
    },
    #[error("cannot load `{path}`: {message}")]
    Load { path: String, message: String },
    #[error("CP-SAT rejected the model: {0}")]
    ModelInvalid(String),
    #[error("CP-SAT returned a response that does not decode: {0}")]
    Decode(String),
    #[error("the model is too large to send ({0} bytes)")]
    TooLarge(usize),
}
