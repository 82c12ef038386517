//! Size rules for checking big programs on the CPU interpreter: module-level integer
//! constants are capped by what their *name* says they are (never by task), so that
//! `drtc compile --shrink` and the benchmark suite's CPU mode run quickly while keeping
//! every structural parameter (kernel sizes, strides, groups, reduction dims) as written.

use super::constants::ConstantOverride;

const CHANNEL_CAP: i64 = 32;
const SPATIAL_CAP: i64 = 12;

/// Larger spatial caps to try, in order, when a program shrunk with [`SPATIAL_CAP`] no
/// longer loads (a whole model that halves its image five times needs more than 12).
const WIDER_SPATIAL_CAPS: [i64; 2] = [32, 64];

/// The overrides to try, in order, when a program no longer loads with
/// [`shrink_overrides`]' caps: wider
/// spatial caps, then each cap again with shape coincidences kept ([`coupled_overrides`]);
/// none twice, none equal to the first.
fn fallbacks(source: &str) -> Vec<Vec<ConstantOverride>> {
    let first = shrink_overrides(source);
    let mut out: Vec<Vec<ConstantOverride>> = vec![];
    let wider = WIDER_SPATIAL_CAPS.map(|c| shrink_overrides_with(source, c));
    let coupled = [SPATIAL_CAP]
        .iter()
        .chain(&WIDER_SPATIAL_CAPS)
        .map(|&c| coupled_overrides(source, c));
    for o in wider.into_iter().chain(coupled) {
        if o != first && !out.contains(&o) {
            out.push(o);
        }
    }
    out
}

/// Every integer in a constant's value (`3`, `(3, 5)`, `16 * 2`).
fn ints_in(text: &str) -> Vec<i64> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    t.split(',').filter_map(int_value).collect()
}

/// The widest window a kernel/dilation constant allows: spatial dims stay larger than it.
fn window_span(source: &str) -> i64 {
    let (mut k, mut d) = (1i64, 1i64);
    for line in source.lines().filter(|l| !l.starts_with([' ', '\t', '#'])) {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        let top = ints_in(value.split('#').next().unwrap_or(""))
            .into_iter()
            .max()
            .unwrap_or(1);
        if name.contains("kernel") {
            k = k.max(top);
        } else if name.contains("dilation") {
            d = d.max(top);
        }
    }
    (k - 1) * d + 1
}

/// The cap for a constant called `name`, if the name is a size.
pub fn cap_for(name: &str) -> Option<i64> {
    let n = name.to_ascii_lowercase();
    let is = |words: &[&str]| words.iter().any(|w| n == *w);
    if is(&["batch_size", "batch", "b"]) {
        Some(2)
    } else if is(&[
        "height",
        "width",
        "depth",
        "h",
        "w",
        "d",
        "height_in",
        "width_in",
        "depth_in",
        "length",
        "input_length",
        "sequence_length",
        "seq_len",
        "l",
        "dim1",
        "dim2",
        "dim3",
        "image_height",
        "image_width",
    ]) {
        Some(SPATIAL_CAP)
    } else if is(&[
        "in_channels",
        "out_channels",
        "channels",
        "features",
        "in_features",
        "out_features",
        "hidden_size",
        "input_size",
        "output_size",
        "num_classes",
        "embedding_dimension",
        "embed_dim",
        "n_embd",
        "num_features",
        "feature_size",
        "num_input_features",
        "num_output_features",
    ]) {
        Some(CHANNEL_CAP)
    } else if is(&["m", "n", "k", "i", "j", "dim"]) {
        Some(48)
    } else {
        None
    }
}

/// The value of an integer literal or of a product/sum of integer literals
/// (`16384 * 2`, `1024 + 1`); `None` for anything else.
fn int_value(text: &str) -> Option<i64> {
    let t = text.trim();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '*' | '+' | ' ' | '_'))
        || t.contains("**")
    {
        return None;
    }
    let mut sum: i64 = 0;
    for term in t.split('+') {
        let mut prod: i64 = 1;
        for f in term.split('*') {
            prod = prod.checked_mul(f.trim().replace('_', "").parse::<i64>().ok()?)?;
        }
        sum = sum.checked_add(prod)?;
    }
    Some(sum)
}

/// The largest top-level `*groups` constant (group counts must keep dividing channels).
fn max_groups(source: &str) -> i64 {
    source
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#']))
        .filter_map(|l| l.split_once('='))
        .filter(|(n, _)| n.trim().to_ascii_lowercase().ends_with("groups"))
        .filter_map(|(_, v)| int_value(v.split('#').next().unwrap_or("")))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// Overrides for every top-level `NAME = <int>` (or `a, b = <int>, <int>`) whose name is
/// a size larger than its cap. Channel-like caps are rounded up to a multiple of the
/// largest `*groups` constant, so group counts still divide them.
pub fn shrink_overrides(source: &str) -> Vec<ConstantOverride> {
    shrink_overrides_with(source, SPATIAL_CAP)
}

/// [`shrink_overrides`] with spatial sizes capped at `spatial_cap` instead.
pub fn shrink_overrides_with(source: &str, spatial_cap: i64) -> Vec<ConstantOverride> {
    let groups = max_groups(source);
    let spatial = spatial_cap.max(window_span(source) + 4);
    // the value a size constant `name = v` is shrunk to, when it is smaller than `v`
    let target = |name: &str, v: i64| {
        let t = match cap_for(name)? {
            SPATIAL_CAP => spatial,
            CHANNEL_CAP => channel_value(v, groups),
            c => c,
        };
        (t < v).then_some(t)
    };
    let mut out: Vec<ConstantOverride> = vec![];
    for line in source.lines() {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        if rhs.starts_with('=') || lhs.ends_with(['!', '<', '>']) {
            continue;
        }
        let rhs = rhs.split('#').next().unwrap_or("");
        let names: Vec<&str> = lhs.split(',').map(str::trim).collect();
        let values: Vec<&str> = rhs.split(',').map(str::trim).collect();
        // `a = b = 3` binds the last value to every target: handle the simple forms only
        let pairs: Vec<(&str, &str)> = if names.len() == values.len() {
            names.into_iter().zip(values).collect()
        } else {
            continue;
        };
        for (name, value) in pairs {
            let Some(t) = int_value(value).and_then(|v| target(name, v)) else {
                continue;
            };
            out.retain(|o| o.name != name);
            out.push(ConstantOverride {
                name: name.to_string(),
                value: t.to_string(),
            });
        }
    }
    // lists of layer sizes: `layer_sizes = [400, 800]`, `hidden_sizes = [1024] * 16`
    for line in source.lines() {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        let name = lhs.trim();
        let lower = name.to_ascii_lowercase();
        if !(lower.ends_with("sizes") || lower.ends_with("widths")) || rhs.starts_with('=') {
            continue;
        }
        if let Some(value) = capped_list(rhs.split('#').next().unwrap_or(""), CHANNEL_CAP) {
            out.retain(|o| o.name != name);
            out.push(ConstantOverride {
                name: name.to_string(),
                value,
            });
        }
    }
    // chained `height = width = 2048` lines
    for line in source.lines() {
        if line.starts_with([' ', '\t', '#'])
            || line.matches('=').count() < 2
            || line.contains("==")
        {
            continue;
        }
        let parts: Vec<&str> = line.split('=').map(str::trim).collect();
        let Some(v) = int_value(parts[parts.len() - 1]) else {
            continue;
        };
        for name in &parts[..parts.len() - 1] {
            if let Some(t) = target(name, v) {
                if !out.iter().any(|o| o.name == *name) {
                    out.push(ConstantOverride {
                        name: name.to_string(),
                        value: t.to_string(),
                    });
                }
            }
        }
    }
    out
}

/// [`shrink_overrides_with`] keeping the program's shape coincidences: every other
/// top-level integer, alone or in a tuple or list (`input_shape = (32768,)`), equal to a
/// shrunk constant's value as written takes that constant's shrunk value too, so two sizes
/// the program broadcasts against each other (`batch_size = 32768` rows against a
/// `(32768,)` row shape) stay equal. A value two shrunk constants shared but shrank
/// differently is left alone. One of [`fallbacks`], tried when the plain caps broke the
/// program.
fn coupled_overrides(source: &str, spatial_cap: i64) -> Vec<ConstantOverride> {
    let mut out = shrink_overrides_with(source, spatial_cap);
    let bindings = top_level_bindings(source);
    // a shrunk constant's value as written -> its shrunk value (None: ambiguous)
    let mut shrunk: Vec<(i64, Option<i64>)> = vec![];
    for o in &out {
        let (Some(from), Some(to)) = (
            bindings
                .iter()
                .find(|(n, _)| *n == o.name)
                .and_then(|(_, v)| int_value(v)),
            int_value(&o.value),
        ) else {
            continue;
        };
        match shrunk.iter_mut().find(|(f, _)| *f == from) {
            Some((_, t)) if *t != Some(to) => *t = None,
            Some(_) => {}
            None => shrunk.push((from, Some(to))),
        }
    }
    let coupled = |v: i64| shrunk.iter().find(|(f, _)| *f == v).and_then(|(_, t)| *t);
    for (name, value) in &bindings {
        if out.iter().any(|o| o.name == *name) {
            continue;
        }
        let rewritten = match int_value(value) {
            Some(v) => coupled(v).map(|t| t.to_string()),
            None => coupled_literal(value, &coupled),
        };
        if let Some(value) = rewritten {
            out.push(ConstantOverride {
                name: name.clone(),
                value,
            });
        }
    }
    out
}

/// `(name, value text)` for every top-level `name = value` and `a, b = v1, v2`, and each
/// name of a chained `a = b = v`.
fn top_level_bindings(source: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    for line in source.lines() {
        if line.starts_with([' ', '\t', '#']) || line.contains("==") {
            continue;
        }
        let code = line.split('#').next().unwrap_or("");
        let parts: Vec<&str> = code.split('=').map(str::trim).collect();
        if parts.len() < 2 || parts.iter().any(|p| p.ends_with(['!', '<', '>'])) {
            continue;
        }
        let value = parts[parts.len() - 1];
        if parts.len() > 2 {
            out.extend(
                parts[..parts.len() - 1]
                    .iter()
                    .map(|n| (n.to_string(), value.to_string())),
            );
            continue;
        }
        let names: Vec<&str> = parts[0].split(',').map(str::trim).collect();
        let values: Vec<&str> = value.split(',').map(str::trim).collect();
        if names.len() > 1 && names.len() == values.len() {
            out.extend(
                names
                    .iter()
                    .zip(&values)
                    .map(|(n, v)| (n.to_string(), v.to_string())),
            );
        } else if names.len() == 1 {
            out.push((names[0].to_string(), value.to_string()));
        }
    }
    out
}

/// A tuple or list literal of integers (`(32768,)`, `[64, 64]`) with each element that
/// `coupled` maps replaced; `None` when it is no such literal or nothing changed.
fn coupled_literal(text: &str, coupled: &dyn Fn(i64) -> Option<i64>) -> Option<String> {
    let t = text.trim();
    let (open, close) = match t.chars().next()? {
        '(' => ('(', ')'),
        '[' => ('[', ']'),
        _ => return None,
    };
    let inner = t.strip_prefix(open)?.strip_suffix(close)?;
    let items: Vec<&str> = inner.split(',').map(str::trim).collect();
    let trailing = items.last() == Some(&"");
    let items = if trailing {
        &items[..items.len() - 1]
    } else {
        &items[..]
    };
    let values: Vec<i64> = items.iter().map(|x| int_value(x)).collect::<Option<_>>()?;
    if values.is_empty() || values.iter().all(|&v| coupled(v).is_none()) {
        return None;
    }
    let new: Vec<String> = values
        .iter()
        .map(|&v| coupled(v).unwrap_or(v).to_string())
        .collect();
    Some(format!(
        "{open}{}{}{close}",
        new.join(", "),
        if trailing || (open == '(' && new.len() == 1) {
            ","
        } else {
            ""
        }
    ))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// What a channel-like constant `v` shrinks to: about [`CHANNEL_CAP`], a multiple of the
/// group count (at least 4 channels per group) and of every power of two up to 16 that
/// divides `v`, so a model's own `assert channels % 4 == 0` still holds.
fn channel_value(v: i64, groups: i64) -> i64 {
    let twos = gcd(v, 16).max(1);
    let unit = twos / gcd(twos, groups) * groups;
    let least = if groups > 1 { 4 * groups } else { 1 };
    let t = unit * (CHANNEL_CAP / unit).max(1);
    t.max((least + unit - 1) / unit * unit)
}

/// `[400, 800]` or `[1024] * 16` with every size capped at `cap`; `None` when the text is
/// not such a list or nothing exceeds the cap.
fn capped_list(text: &str, cap: i64) -> Option<String> {
    let t = text.trim();
    let (list, times) = match t.rsplit_once('*') {
        Some((l, n)) if l.trim_end().ends_with(']') => (l.trim(), Some(int_value(n)?)),
        _ => (t, None),
    };
    let inner = list.strip_prefix('[')?.strip_suffix(']')?;
    let items: Vec<i64> = inner
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(int_value)
        .collect::<Option<_>>()?;
    if items.is_empty() || items.iter().all(|&v| v <= cap) {
        return None;
    }
    let capped: Vec<String> = items.iter().map(|&v| v.min(cap).to_string()).collect();
    Some(match times {
        Some(n) => format!("[{}] * {n}", capped.join(", ")),
        None => format!("[{}]", capped.join(", ")),
    })
}

/// Loads with `overrides` (`load`: `Ok` when the program loads at those sizes); when that
/// fails under `shrink`, tries each of [`fallbacks`] with `set` over it, in order, and keeps
/// the first that loads. Returns the result (on failure, the first attempt's error) and
/// the overrides it was loaded with.
pub fn load_with_fallbacks<T, E>(
    source: &str,
    overrides: &[ConstantOverride],
    set: &[ConstantOverride],
    shrink: bool,
    mut load: impl FnMut(&[ConstantOverride]) -> Result<T, E>,
) -> (Result<T, E>, Vec<ConstantOverride>) {
    let first = load(overrides);
    if first.is_ok() || !shrink {
        return (first, overrides.to_vec());
    }
    for mut wider in fallbacks(source) {
        for o in set {
            wider.retain(|a| a.name != o.name);
            wider.push(o.clone());
        }
        if wider == overrides {
            continue;
        }
        if let Ok(loaded) = load(&wider) {
            return (Ok(loaded), wider);
        }
    }
    (first, overrides.to_vec())
}

/// The overrides a command applies: `--shrink`'s size caps for `source` (a Python
/// program) when `shrink`, then each of `set`, which replaces a cap of the same name.
pub fn merged_overrides(
    source: &str,
    set: &[ConstantOverride],
    shrink: bool,
) -> Vec<ConstantOverride> {
    let mut all = if shrink {
        shrink_overrides(source)
    } else {
        vec![]
    };
    for o in set {
        all.retain(|a| a.name != o.name);
        all.push(o.clone());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_capped_by_name_and_structure_is_kept() {
        let src = "batch_size = 128\nin_channels = 3\nout_channels = 128\nheight = width = 2048\n\
                   kernel_size = 5\ndim = 1\nD, H, W = 24, 32, 32\nnum_groups = 8\n";
        let o: Vec<(String, String)> = shrink_overrides(src)
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect();
        let expect: Vec<(String, String)> = [
            ("batch_size", "2"),
            ("out_channels", "32"),
            ("D", "12"),
            ("H", "12"),
            ("W", "12"),
            ("height", "12"),
            ("width", "12"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(o, expect);
        let products = shrink_overrides("M = 16384 * 2\nK = 32 * 2\nN = 2 ** 5\n");
        assert_eq!(products.len(), 2);
        assert_eq!(
            (products[0].name.as_str(), products[0].value.as_str()),
            ("M", "48")
        );
        let grouped = shrink_overrides("out_features = 4096\nnum_groups = 64\n");
        assert_eq!(grouped[0].value, "256");
        let lists =
            shrink_overrides("layer_sizes = [400, 8]\nhidden_layer_sizes = [1024] * 16  # deep\n");
        let lists: Vec<(&str, &str)> = lists
            .iter()
            .map(|o| (o.name.as_str(), o.value.as_str()))
            .collect();
        assert_eq!(
            lists,
            vec![
                ("layer_sizes", "[32, 8]"),
                ("hidden_layer_sizes", "[32] * 16")
            ]
        );
        assert!(shrink_overrides("block_widths = [8, 16]\nsizes = foo()\n").is_empty());
    }

    #[test]
    fn coupled_shrinking_keeps_equal_sizes_equal() {
        // a (32768, 32768) product broadcast against a row of 32768 targets
        let src = "batch_size = 32768\ninput_shape = (32768,)\ndim = 1\n";
        let plain: Vec<(String, String)> = shrink_overrides(src)
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect();
        assert_eq!(plain, vec![("batch_size".to_string(), "2".to_string())]);
        let coupled: Vec<(String, String)> = coupled_overrides(src, SPATIAL_CAP)
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect();
        assert_eq!(
            coupled,
            vec![
                ("batch_size".to_string(), "2".to_string()),
                ("input_shape".to_string(), "(2,)".to_string())
            ]
        );
        // lists, plain integers, values left alone, and a value two constants shrank
        // differently (ambiguous: kept)
        let src = "in_channels = 64\nheight = 64\nshape = [64, 3, 64]\nextra = 64\n\
                   widths = (100, 7)\nbatch_size = 100\nsize = 100\n";
        let coupled: Vec<(String, String)> = coupled_overrides(src, SPATIAL_CAP)
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect();
        assert!(
            coupled.iter().all(|(n, _)| n != "shape" && n != "extra"),
            "{coupled:?}"
        );
        assert!(
            coupled.contains(&("widths".to_string(), "(2, 7)".to_string())),
            "{coupled:?}"
        );
        assert!(
            coupled.contains(&("size".to_string(), "2".to_string())),
            "{coupled:?}"
        );
    }

    #[test]
    fn shrunk_channels_keep_their_small_power_of_two_factors_and_groups() {
        let one = |src: &str| shrink_overrides(src)[0].value.clone();
        // a model's own `assert out_channels % 4 == 0` still holds
        assert_eq!(one("out_channels = 36\n"), "32");
        assert_eq!(one("out_channels = 100\n"), "32");
        assert_eq!(one("out_channels = 96\ngroups = 3\n"), "48");
        assert_eq!(one("out_channels = 1024\ngroups = 8\n"), "32");
        assert_eq!(one("out_channels = 40\ngroups = 3\n"), "24");
        // never grown (16 groups of at least 4 channels need 64)
        assert!(shrink_overrides("out_channels = 40\ngroups = 16\n").is_empty());
    }
}
