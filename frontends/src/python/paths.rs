//! Dotted names: constants (`torch.float32`, `math.pi`), the canonical key of a path
//! (`torch.nn.functional.relu` -> `F.relu`), and calls of a path, dispatched to the `math`
//! functions, `nn` layers or the spelling table.

use super::args::Args;
use super::emitter::{Emitter, Phase};
use super::error::{FrontendError, Span};
use super::layers;
use super::spelling::{call_function, torch_dtype};
use super::value::Val;

type R<T> = Result<T, FrontendError>;

/// The value of `path` when it names a constant (`torch.float32`, `math.pi`), else the path.
pub fn path_attr(path: &str) -> Val {
    if let Some(name) = path.strip_prefix("torch.") {
        if let Some(d) = torch_dtype(name) {
            return Val::DType(d);
        }
    }
    match path {
        "math.pi" | "torch.pi" => Val::Float(std::f64::consts::PI),
        "math.e" | "torch.e" => Val::Float(std::f64::consts::E),
        "math.inf" | "torch.inf" => Val::Float(f64::INFINITY),
        "math.nan" | "torch.nan" => Val::Float(f64::NAN),
        _ => Val::Path(path.into()),
    }
}

/// Shortens a dotted path to the table's key: `torch.nn.functional.relu` -> `F.relu`.
pub fn canonical(path: &str) -> String {
    for (long, short) in [
        ("torch.nn.functional.", "F."),
        ("torch.nn.modules.", "nn."),
        ("torch.nn.", "nn."),
        ("torch.Tensor.", "Tensor."),
        ("torch.", "torch."),
    ] {
        if let Some(rest) = path.strip_prefix(long) {
            // `nn.modules.conv.Conv2d` -> `nn.Conv2d`
            let rest = if short == "nn." {
                rest.rsplit('.').next().unwrap_or(rest)
            } else {
                rest
            };
            return format!("{short}{rest}");
        }
    }
    path.to_string()
}

/// Calls a dotted name (`torch.relu(...)`, `nn.Conv2d(...)`, `math.sqrt(...)`).
pub fn call_path(em: &mut Emitter, path: &str, args: Args, span: &Span) -> R<Val> {
    let key = canonical(path);
    if let Some(f) = key.strip_prefix("math.") {
        return math(f, &args, span);
    }
    match key.as_str() {
        "nn.Module.__init__" => return Ok(Val::None),
        "nn.Parameter" | "nn.parameter.Parameter" => {
            let b = args.bind("nn.Parameter", &["data", "requires_grad"])?;
            let data = b.required("data")?.clone();
            let t = em.tensor(&data, &b.span_of("data"))?;
            if em.phase != Phase::Init {
                return Err(FrontendError::unsupported(
                    "nn.Parameter can only be created in __init__",
                    span.clone(),
                ));
            }
            em.new_params.push(t);
            return Ok(Val::Tensor(t));
        }
        "torch.device" => return Ok(Val::Device),
        "torch.Size" => {
            let b = args.bind("torch.Size", &["sizes"])?;
            return Ok(Val::tuple(
                b.ints("sizes")?
                    .unwrap_or_default()
                    .into_iter()
                    .map(Val::Int)
                    .collect(),
            ));
        }
        _ => {}
    }
    if let Some(kind) = key.strip_prefix("nn.") {
        return layers::construct(em, kind, args, span);
    }
    if key.starts_with("torch.") || key.starts_with("F.") || key.starts_with("Tensor.") {
        return call_function(em, &key, args, span);
    }
    Err(FrontendError::unsupported(
        format!("`{path}` is not supported (not a torch, torch.nn or math function drtc knows)"),
        span.clone(),
    ))
}

fn math(f: &str, args: &Args, span: &Span) -> R<Val> {
    let nums: Vec<f64> = args
        .pos
        .iter()
        .map(|(v, s)| {
            v.as_number().ok_or_else(|| {
                FrontendError::lowering(
                    format!("`math.{f}` needs numbers, got {}", v.type_name()),
                    s.clone(),
                )
            })
        })
        .collect::<R<_>>()?;
    let one = || -> R<f64> {
        if nums.len() == 1 && args.kw.is_empty() {
            Ok(nums[0])
        } else {
            Err(FrontendError::lowering(
                format!("`math.{f}` takes one number"),
                span.clone(),
            ))
        }
    };
    let x = match f {
        "sqrt" => one()?.sqrt(),
        "exp" => one()?.exp(),
        "log" if nums.len() == 2 => nums[0].ln() / nums[1].ln(),
        "log" => one()?.ln(),
        "log2" => one()?.log2(),
        "log10" => one()?.log10(),
        "tanh" => one()?.tanh(),
        "cos" => one()?.cos(),
        "sin" => one()?.sin(),
        "erf" => {
            return Err(FrontendError::unsupported(
                "`math.erf` is not supported",
                span.clone(),
            ))
        }
        "fabs" => one()?.abs(),
        "pow" if nums.len() == 2 => nums[0].powf(nums[1]),
        "floor" | "ceil" => {
            let v = one()?;
            let r = if f == "floor" { v.floor() } else { v.ceil() };
            if !r.is_finite() || r.abs() > 9.0e18 {
                return Err(FrontendError::lowering(
                    format!("`math.{f}` of {v}"),
                    span.clone(),
                ));
            }
            return Ok(Val::Int(r as i64));
        }
        _ => {
            return Err(FrontendError::unsupported(
                format!("`math.{f}` is not supported"),
                span.clone(),
            ))
        }
    };
    if x.is_nan() && !nums.iter().any(|n| n.is_nan()) {
        // Python raises ValueError here
        return Err(FrontendError::lowering(
            format!("`math.{f}`: math domain error"),
            span.clone(),
        ));
    }
    Ok(Val::Float(x))
}
