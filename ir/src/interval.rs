//! Closed intervals over the extended reals, with the arithmetic the range rules need
//! (`range/rules.rs`, and each pointwise op's own rule in `op/pointwise.rs`).
//! Infinite bounds mean "unbounded": a value that may overflow.

/// `[lo, hi]`; `lo <= hi` always (NaN-free: operations that could make NaN give the
/// whole line instead).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// The whole real line (nothing is known).
    pub const ANY: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    pub fn new(lo: f64, hi: f64) -> Interval {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Interval::ANY;
        }
        Interval { lo, hi }
    }

    pub fn point(x: f64) -> Interval {
        Interval::new(x, x)
    }

    /// `[-r, r]`.
    pub fn symmetric(r: f64) -> Interval {
        Interval::new(-r.abs(), r.abs())
    }

    /// The largest magnitude.
    pub fn mag(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }

    /// The smallest magnitude (0 when the interval holds zero).
    pub fn min_mag(self) -> f64 {
        if self.contains(0.0) {
            0.0
        } else {
            self.lo.abs().min(self.hi.abs())
        }
    }

    pub fn contains(self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Both bounds are finite and within `limit` in magnitude.
    pub fn within(self, limit: f64) -> bool {
        self.mag() <= limit
    }

    pub fn hull(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }

    /// Scaled by a non-negative count (sums of `n` terms).
    pub fn scale(self, n: f64) -> Interval {
        self * Interval::point(n)
    }

    /// The image under a non-decreasing function.
    pub fn monotone(self, f: impl Fn(f64) -> f64) -> Interval {
        Interval::new(f(self.lo), f(self.hi))
    }

    /// `[|x|]`.
    pub fn abs(self) -> Interval {
        Interval::new(self.min_mag(), self.mag())
    }

    pub fn max(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }

    pub fn min(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }

    /// Clipped to `[lo, hi]` (either side optional).
    pub fn clip(self, lo: Option<f64>, hi: Option<f64>) -> Interval {
        let (mut a, mut b) = (self.lo, self.hi);
        if let Some(l) = lo {
            a = a.max(l);
            b = b.max(l);
        }
        if let Some(h) = hi {
            a = a.min(h);
            b = b.min(h);
        }
        Interval::new(a, b)
    }

    /// Intersection with `[lo, hi]`: for functions whose image is bounded whatever the input.
    pub fn meet(self, lo: f64, hi: f64) -> Interval {
        let (a, b) = (self.lo.max(lo), self.hi.min(hi));
        if a > b {
            Interval::new(lo, hi)
        } else {
            Interval::new(a, b)
        }
    }
}

impl std::ops::Add for Interval {
    type Output = Interval;
    fn add(self, o: Interval) -> Interval {
        Interval::new(self.lo + o.lo, self.hi + o.hi)
    }
}

impl std::ops::Sub for Interval {
    type Output = Interval;
    fn sub(self, o: Interval) -> Interval {
        self + -o
    }
}

/// `self * o` (`0 * inf` gives the whole line).
impl std::ops::Mul for Interval {
    type Output = Interval;
    fn mul(self, o: Interval) -> Interval {
        let c = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        if c.iter().any(|x| x.is_nan()) {
            // 0 * inf: unbounded
            return Interval::ANY;
        }
        Interval::new(
            c.iter().copied().fold(f64::INFINITY, f64::min),
            c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

/// `self / o`: the whole line when `o` holds zero.
impl std::ops::Div for Interval {
    type Output = Interval;
    fn div(self, o: Interval) -> Interval {
        if o.contains(0.0) {
            return Interval::ANY;
        }
        self * Interval::new(1.0 / o.hi, 1.0 / o.lo)
    }
}

impl std::ops::Neg for Interval {
    type Output = Interval;
    fn neg(self) -> Interval {
        Interval::new(-self.hi, -self.lo)
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:.3e}, {:.3e}]", self.lo, self.hi)
    }
}

impl Interval {
    /// Padded outwards, for a bound computed with f64 transcendental functions, so that the
    /// f32 results (and their rounding) stay inside.
    pub fn pad(self) -> Interval {
        let e = |v: f64| 1e-6 * (1.0 + v.abs());
        Interval::new(self.lo - e(self.lo), self.hi + e(self.hi))
    }

    /// The endpoints clamped to a finite range, so that functions like `x * sigmoid(x)`
    /// give a limit instead of NaN at infinity.
    fn finite_ends(self) -> (f64, f64) {
        (self.lo.max(-1e300), self.hi.min(1e300))
    }

    /// The image of a continuous function that is monotone between the listed `critical`
    /// points: the hull of its values at the endpoints and at the critical points inside,
    /// padded.
    pub fn piecewise(self, critical: &[f64], f: impl Fn(f64) -> f64) -> Interval {
        let (a, b) = self.finite_ends();
        let mut lo = f(a).min(f(b));
        let mut hi = f(a).max(f(b));
        for &c in critical {
            if a < c && c < b {
                lo = lo.min(f(c));
                hi = hi.max(f(c));
            }
        }
        Interval::new(lo, hi).pad()
    }
}
