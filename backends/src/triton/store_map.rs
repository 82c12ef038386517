//! Where a kernel stores an output element that is not at its own contiguous offset: in a
//! larger tensor through its strides (a concatenation's slice), or at the place a chain of
//! views puts it in the chain's contiguous result (`reshape(transpose(reshape(x)))`, a
//! channel shuffle: the producer writes the shuffled tensor, and no copy materializes the
//! chain). Offsets are Triton expressions over the domain's index variables.

/// One step of a chain of views, from its input's logical shape to its result's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewStep {
    /// A reshape (also flatten, squeeze, unsqueeze) to this shape, row-major.
    Reshape(Vec<i64>),
    /// A permutation: result dim `k` is input dim `perm[k]`.
    Permute(Vec<usize>),
}

/// How one output is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreMap {
    /// Into a larger tensor with `strides` per domain dim. The host passes a view of the
    /// larger tensor that begins `origin` elements before the slice's first element: 0, or
    /// the slice's distance from the 16-byte boundary before it along a contiguous
    /// concatenation dim (`plan/concat.rs`, `Placement::skew`), so the pointer is aligned
    /// and a template may tile its stores from the view's start.
    Strided { strides: Vec<i64>, origin: i64 },
    /// Through a chain of views from the domain's shape into the chain's result, a
    /// contiguous tensor the host passes as the output.
    Views(Vec<ViewStep>),
}

impl StoreMap {
    /// How many elements before the slice's first element the host's view begins.
    pub fn origin(&self) -> i64 {
        match self {
            StoreMap::Strided { origin, .. } => *origin,
            StoreMap::Views(_) => 0,
        }
    }

    /// The offset from the view's start of the element at `index`, where the index along
    /// the contiguous dim `along` counts from the view's start (`origin` elements before
    /// the slice's): for a template that tiles that dim from the view's start, so the
    /// index is aligned where the view is. `None` unless the map is strided with stride 1
    /// along `along`.
    pub fn view_offset(
        &self,
        domain: &[i64],
        along: usize,
        index: &dyn Fn(usize) -> String,
    ) -> Option<String> {
        match self {
            StoreMap::Strided { strides, .. } if strides.get(along) == Some(&1) => {
                let idx: Vec<String> = (0..domain.len()).map(index).collect();
                Some(linear(domain, &idx, strides))
            }
            StoreMap::Strided { .. } | StoreMap::Views(_) => None,
        }
    }

    /// The offset of the domain element whose index along dim `d` is `index(d)`.
    pub fn offset(&self, domain: &[i64], index: &dyn Fn(usize) -> String) -> String {
        match self {
            StoreMap::Strided { strides, origin } => {
                let idx: Vec<String> = (0..domain.len()).map(index).collect();
                match (linear(domain, &idx, strides), origin) {
                    (off, 0) => off,
                    (off, o) => format!("{off} + {o}"),
                }
            }
            StoreMap::Views(steps) => {
                let mut shape = domain.to_vec();
                let mut idx: Vec<String> = (0..domain.len()).map(index).collect();
                for step in steps {
                    match step {
                        ViewStep::Permute(perm) => {
                            idx = perm.iter().map(|&p| idx[p].clone()).collect();
                            shape = perm.iter().map(|&p| shape[p]).collect();
                        }
                        ViewStep::Reshape(to) => {
                            idx = reshaped(&shape, &idx, to);
                            shape = to.clone();
                        }
                    }
                }
                linear(&shape, &idx, &row_major(&shape))
            }
        }
    }
}

/// `e` as an operand: in parentheses unless it is a name or a number.
fn paren(e: &str) -> String {
    if e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        e.to_string()
    } else {
        format!("({e})")
    }
}

/// Row-major strides of `shape`.
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1].max(1);
    }
    strides
}

/// `sum idx[d] * strides[d]` over the dims of size other than 1.
fn linear(shape: &[i64], idx: &[String], strides: &[i64]) -> String {
    let terms: Vec<String> = (0..shape.len())
        .filter(|&d| shape[d] != 1)
        .map(|d| match strides[d] {
            1 => idx[d].clone(),
            s => format!("{} * {s}", paren(&idx[d])),
        })
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

/// The indices along `to` of the element at `idx` of `from` (same number of elements,
/// row-major): dims are grouped into runs whose sizes multiply to the same extent on both
/// sides, and each run's indices come from its own linear index (a split is a division
/// and a remainder, a merge a sum of products).
fn reshaped(from: &[i64], idx: &[String], to: &[i64]) -> Vec<String> {
    let mut out = vec![String::new(); to.len()];
    let (mut i, mut j) = (0usize, 0usize);
    while i < from.len() || j < to.len() {
        // one run: the shortest prefixes of both sides with equal products
        let (i0, j0) = (i, j);
        let (mut pf, mut pt) = (1i64, 1i64);
        loop {
            let closed = pf == pt && (i > i0 || i == from.len()) && (j > j0 || j == to.len());
            if closed {
                // unit dims join the run that ends here
                if i < from.len() && from[i] == 1 {
                    i += 1;
                } else if j < to.len() && to[j] == 1 {
                    j += 1;
                } else {
                    break;
                }
            } else if (pf < pt || i == i0) && i < from.len() {
                pf *= from[i];
                i += 1;
            } else if j < to.len() {
                pt *= to[j];
                j += 1;
            } else if i < from.len() {
                pf *= from[i];
                i += 1;
            } else {
                break;
            }
        }
        let lin = linear(&from[i0..i], &idx[i0..i], &row_major(&from[i0..i]));
        let strides = row_major(&to[j0..j]);
        for (k, o) in out[j0..j].iter_mut().enumerate() {
            let (size, stride) = (to[j0 + k], strides[k]);
            let l = paren(&lin);
            *o = if size == 1 {
                "0".into()
            } else if stride == 1 && k == 0 {
                lin.clone()
            } else if stride == 1 {
                format!("{l} % {size}")
            } else if k == 0 {
                format!("{l} // {stride}")
            } else {
                format!("({l} // {stride}) % {size}")
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluates an offset expression of [`StoreMap::offset`] for concrete indices (only
    /// the operators it emits: parentheses, `+`, `*`, `//`, `%` on integers).
    fn eval(expr: &str, vars: &[(String, i64)]) -> i64 {
        let mut s = expr.to_string();
        for (name, v) in vars {
            s = s.replace(name, &v.to_string());
        }
        let tokens: Vec<String> = tokenize(&s);
        let mut pos = 0;
        sum(&tokens, &mut pos)
    }

    fn tokenize(s: &str) -> Vec<String> {
        let mut out = vec![];
        let mut num = String::new();
        let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            if c.is_ascii_digit() {
                num.push(c);
            } else {
                if !num.is_empty() {
                    out.push(std::mem::take(&mut num));
                }
                if c == '/' {
                    out.push("//".into());
                    k += 1;
                } else {
                    out.push(c.to_string());
                }
            }
            k += 1;
        }
        if !num.is_empty() {
            out.push(num);
        }
        out
    }

    fn sum(t: &[String], p: &mut usize) -> i64 {
        let mut v = product(t, p);
        while *p < t.len() && t[*p] == "+" {
            *p += 1;
            v += product(t, p);
        }
        v
    }

    fn product(t: &[String], p: &mut usize) -> i64 {
        let mut v = atom(t, p);
        while *p < t.len() && ["*", "//", "%"].contains(&t[*p].as_str()) {
            let op = t[*p].clone();
            *p += 1;
            let r = atom(t, p);
            v = match op.as_str() {
                "*" => v * r,
                "//" => v.div_euclid(r),
                _ => v.rem_euclid(r),
            };
        }
        v
    }

    fn atom(t: &[String], p: &mut usize) -> i64 {
        if t[*p] == "(" {
            *p += 1;
            let v = sum(t, p);
            *p += 1; // ")"
            v
        } else {
            *p += 1;
            t[*p - 1].parse().unwrap()
        }
    }

    /// The offsets of every element of `domain` under `map`, by brute force.
    fn offsets(map: &StoreMap, domain: &[i64]) -> Vec<i64> {
        let n: i64 = domain.iter().product();
        let names: Vec<String> = (0..domain.len()).map(|d| format!("x{d}q")).collect();
        let expr = map.offset(domain, &|d| names[d].clone());
        (0..n)
            .map(|lin| {
                let mut rem = lin;
                let mut vars = vec![];
                for d in (0..domain.len()).rev() {
                    vars.push((names[d].clone(), rem % domain[d]));
                    rem /= domain[d];
                }
                eval(&expr, &vars)
            })
            .collect()
    }

    #[test]
    fn a_channel_shuffle_writes_each_channel_to_its_shuffled_place() {
        // [2, 6, 2, 2] -> [2, 3, 2, 2, 2] -> transpose(1, 2) -> [2, 6, 2, 2]
        let domain = [2, 6, 2, 2];
        let map = StoreMap::Views(vec![
            ViewStep::Reshape(vec![2, 3, 2, 2, 2]),
            ViewStep::Permute(vec![0, 2, 1, 3, 4]),
            ViewStep::Reshape(vec![2, 6, 2, 2]),
        ]);
        let got = offsets(&map, &domain);
        // element [b, c, h, w] with c = g * 2 + j lands at channel j * 3 + g
        for (lin, off) in got.iter().enumerate() {
            let lin = lin as i64;
            let (b, c, hw) = (lin / 24, (lin / 4) % 6, lin % 4);
            let (g, j) = (c / 2, c % 2);
            assert_eq!(*off, b * 24 + (j * 3 + g) * 4 + hw);
        }
    }

    #[test]
    fn a_window_partition_and_merges_are_a_bijection() {
        // Swin-like: [1, 4, 6, 2] -> [1, 2, 2, 3, 2, 2] -> permute(0, 1, 3, 2, 4, 5)
        // -> [12, 2, 2]... every element written once
        let domain = [1, 4, 6, 2];
        let map = StoreMap::Views(vec![
            ViewStep::Reshape(vec![1, 2, 2, 3, 2, 2]),
            ViewStep::Permute(vec![0, 1, 3, 2, 4, 5]),
            ViewStep::Reshape(vec![6, 4, 2]),
        ]);
        let mut got = offsets(&map, &domain);
        got.sort_unstable();
        assert_eq!(got, (0..48).collect::<Vec<i64>>());
    }

    #[test]
    fn strides_place_a_slice() {
        let map = StoreMap::Strided {
            strides: vec![70, 5, 1],
            origin: 0,
        };
        assert_eq!(offsets(&map, &[1, 2, 2]), vec![0, 1, 5, 6]);
        // a view that begins 3 elements before the slice
        let map = StoreMap::Strided {
            strides: vec![70, 5, 1],
            origin: 3,
        };
        assert_eq!(offsets(&map, &[1, 2, 2]), vec![3, 4, 8, 9]);
    }

    #[test]
    fn reshapes_with_unit_dims_keep_the_row_major_order() {
        let map = StoreMap::Views(vec![
            ViewStep::Reshape(vec![3, 1, 4, 1]),
            ViewStep::Reshape(vec![12]),
        ]);
        assert_eq!(offsets(&map, &[3, 4]), (0..12).collect::<Vec<i64>>());
    }
}
