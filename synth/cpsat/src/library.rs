//! Finding and loading `libortools.so.9` at run time, and the one call into its C API.
//!
//! Search order: `$DRTC_ORTOOLS_LIB` (the library file or a folder holding it), then the
//! `ortools` package of drtc's Python as `drtc_env` locates it (`$DRTC_PYTHON`, else the
//! venv of `drtc setup` under `$DRTC_HOME`), then the venv's site-packages read without
//! starting Python. The wheel's folder layout must be kept: the library finds its abseil
//! and protobuf siblings through relative paths.

use crate::proto::{CpModelProto, CpSolverResponse, SatParameters};
use crate::CpSatError;
use prost::Message;
use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The OR-Tools wheel version whose field numbers `proto.rs` pins.
pub const ORTOOLS_VERSION: &str = "9.15.6755";

const LIB_NAME: &str = "libortools.so.9";

/// `void SolveCpModelWithParameters(const void* creq, int creq_len, const void* cparams,
/// int cparams_len, void** cres, int* cres_len)`; the response buffer is `malloc`ed.
type SolveFn =
    unsafe extern "C" fn(*const c_void, c_int, *const c_void, c_int, *mut *mut c_void, *mut c_int);

extern "C" {
    fn free(ptr: *mut c_void);
}

/// A loaded CP-SAT library. Cheap to clone; calls from several threads at once are fine
/// (each solve is independent).
#[derive(Clone)]
pub struct CpSat {
    inner: Arc<Loaded>,
}

struct Loaded {
    solve: SolveFn,
    path: PathBuf,
    // keeps `solve` valid; dropped last
    _lib: libloading::Library,
}

impl std::fmt::Debug for CpSat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpSat")
            .field("path", &self.inner.path)
            .finish()
    }
}

fn lib_in_package_dir(dir: &Path) -> PathBuf {
    dir.join(".libs").join(LIB_NAME)
}

/// The `ortools` package folder as seen by `python`, if it imports.
fn ortools_dir_from_python(python: &str) -> Option<PathBuf> {
    let out = drtc_env::python_command(python)
        .args([
            "-c",
            "import os, ortools; print(os.path.dirname(ortools.__file__))",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(s.trim()))
}

/// Where the drtc venv keeps its site-packages (any python3.x).
fn venv_candidates(venv: &Path) -> Vec<PathBuf> {
    let mut found = vec![];
    if let Ok(entries) = std::fs::read_dir(venv.join("lib")) {
        for e in entries.flatten() {
            let p = e.path().join("site-packages").join("ortools");
            found.push(lib_in_package_dir(&p));
        }
    }
    found
}

impl CpSat {
    /// Finds the library (see the module doc) and loads it.
    pub fn load() -> Result<CpSat, CpSatError> {
        let path = Self::locate()?;
        Self::load_from(&path)
    }

    /// Finds `libortools.so.9` without loading it.
    pub fn locate() -> Result<PathBuf, CpSatError> {
        let mut tried = vec![];
        if let Ok(p) = std::env::var("DRTC_ORTOOLS_LIB") {
            let p = PathBuf::from(p);
            let p = if p.is_dir() {
                [
                    p.join(LIB_NAME),
                    lib_in_package_dir(&p),
                    p.join("ortools/.libs").join(LIB_NAME),
                ]
                .into_iter()
                .find(|c| c.is_file())
                .unwrap_or(p)
            } else {
                p
            };
            if p.is_file() {
                return Ok(p);
            }
            tried.push(format!("$DRTC_ORTOOLS_LIB={}", p.display()));
        }
        // drtc's Python, found as every launch finds it (drtc_env)
        let home = drtc_env::DrtcHome::from_env();
        if let Ok(env) = drtc_env::PythonEnv::locate(&home) {
            let py = env.python.display().to_string();
            if let Some(dir) = ortools_dir_from_python(&py) {
                let p = lib_in_package_dir(&dir);
                if p.is_file() {
                    return Ok(p);
                }
            }
            tried.push(format!("`{py} -c 'import ortools'`"));
        }
        // the venv's site-packages, read without starting its Python
        let venv = home.venv();
        for p in venv_candidates(&venv) {
            if p.is_file() {
                return Ok(p);
            }
        }
        tried.push(format!("the drtc venv {}", venv.display()));
        Err(CpSatError::NotFound {
            tried: tried.join(", "),
            version: ORTOOLS_VERSION,
        })
    }

    /// Loads the library at `path`.
    pub fn load_from(path: &Path) -> Result<CpSat, CpSatError> {
        let load_err = |e: libloading::Error| CpSatError::Load {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        // SAFETY: loading runs the library's initializers; libortools is a plain C++ library
        // with no unusual load-time behaviour.
        let lib = unsafe { libloading::Library::new(path) }.map_err(load_err)?;
        // SAFETY: the symbol has the C signature declared by `SolveFn` (ortools/sat/c_api).
        let solve: SolveFn =
            *unsafe { lib.get::<SolveFn>(b"SolveCpModelWithParameters\0") }.map_err(load_err)?;
        Ok(CpSat {
            inner: Arc::new(Loaded {
                solve,
                path: path.to_path_buf(),
                _lib: lib,
            }),
        })
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Solves a model with parameters; both are encoded here, so only well-formed
    /// protobufs ever reach the library.
    pub fn solve_proto(
        &self,
        model: &CpModelProto,
        params: &SatParameters,
    ) -> Result<CpSolverResponse, CpSatError> {
        let req = model.encode_to_vec();
        let par = params.encode_to_vec();
        let req_len = c_int::try_from(req.len()).map_err(|_| CpSatError::TooLarge(req.len()))?;
        let par_len = c_int::try_from(par.len()).map_err(|_| CpSatError::TooLarge(par.len()))?;
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut out_len: c_int = 0;
        // SAFETY: both buffers are valid for their lengths during the call; the library
        // writes a malloc'ed buffer and its length into `out`/`out_len`.
        unsafe {
            (self.inner.solve)(
                req.as_ptr().cast(),
                req_len,
                par.as_ptr().cast(),
                par_len,
                &mut out,
                &mut out_len,
            )
        };
        if out.is_null() {
            return Err(CpSatError::Decode("no response buffer".into()));
        }
        let bytes = {
            // SAFETY: `out` points to `out_len` bytes written by the library.
            let s =
                unsafe { std::slice::from_raw_parts(out as *const u8, out_len.max(0) as usize) };
            s.to_vec()
        };
        // SAFETY: the buffer was allocated with malloc by the library and is freed once.
        unsafe { free(out) };
        CpSolverResponse::decode(bytes.as_slice()).map_err(|e| CpSatError::Decode(e.to_string()))
    }
}
