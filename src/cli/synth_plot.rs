//! PNG charts for `drtc synth-report`: bar charts and a heatmap drawn into an RGB buffer,
//! labelled with a built-in 3x5 pixel font (no system fonts), encoded with the `png` crate.

use std::path::Path;

/// Rows of each glyph, 3 bits per row (bit 2 = left column).
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_lowercase() {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        'a' => [2, 5, 7, 5, 5],
        'b' => [6, 5, 6, 5, 6],
        'c' => [3, 4, 4, 4, 3],
        'd' => [6, 5, 5, 5, 6],
        'e' => [7, 4, 6, 4, 7],
        'f' => [7, 4, 6, 4, 4],
        'g' => [3, 4, 5, 5, 3],
        'h' => [5, 5, 7, 5, 5],
        'i' => [7, 2, 2, 2, 7],
        'j' => [1, 1, 1, 5, 2],
        'k' => [5, 5, 6, 5, 5],
        'l' => [4, 4, 4, 4, 7],
        'm' => [5, 7, 7, 5, 5],
        'n' => [6, 5, 5, 5, 5],
        'o' => [2, 5, 5, 5, 2],
        'p' => [6, 5, 6, 4, 4],
        'q' => [2, 5, 5, 6, 3],
        'r' => [6, 5, 6, 5, 5],
        's' => [3, 4, 2, 1, 6],
        't' => [7, 2, 2, 2, 2],
        'u' => [5, 5, 5, 5, 7],
        'v' => [5, 5, 5, 5, 2],
        'w' => [5, 5, 7, 7, 5],
        'x' => [5, 5, 2, 5, 5],
        'y' => [5, 5, 2, 2, 2],
        'z' => [7, 1, 2, 4, 7],
        '_' => [0, 0, 0, 0, 7],
        '.' => [0, 0, 0, 0, 2],
        ',' => [0, 0, 0, 2, 4],
        '-' => [0, 0, 7, 0, 0],
        ':' => [0, 2, 0, 2, 0],
        '%' => [5, 1, 2, 4, 5],
        '/' => [1, 1, 2, 4, 4],
        '^' => [2, 5, 0, 0, 0],
        '(' => [2, 4, 4, 4, 2],
        ')' => [2, 1, 1, 1, 2],
        '=' => [0, 7, 0, 7, 0],
        '>' => [4, 2, 1, 2, 4],
        '<' => [1, 2, 4, 2, 1],
        _ => [0; 5],
    }
}

const SCALE: usize = 2;
/// Horizontal advance of one character, in pixels.
const ADVANCE: usize = 4 * SCALE;

/// An RGB canvas.
pub struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    pub fn new(w: usize, h: usize) -> Canvas {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    fn set(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.w && y < self.h {
            let i = (y * self.w + x) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..(y + h).min(self.h) {
            for xx in x..(x + w).min(self.w) {
                self.set(xx, yy, c);
            }
        }
    }

    /// Text from (x, y), left to right, or bottom to top when `vertical`.
    pub fn text(&mut self, x: usize, y: usize, s: &str, vertical: bool) {
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits & (4 >> col) == 0 {
                        continue;
                    }
                    for dy in 0..SCALE {
                        for dx in 0..SCALE {
                            let (gx, gy) = (col * SCALE + dx, row * SCALE + dy);
                            if vertical {
                                // rotate 90 degrees counter-clockwise, reading upwards
                                let px = x + gy;
                                let py = y.wrapping_sub(i * ADVANCE + gx);
                                self.set(px, py, [0, 0, 0]);
                            } else {
                                self.set(x + i * ADVANCE + gx, y + gy, [0, 0, 0]);
                            }
                        }
                    }
                }
            }
        }
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::File::create(path)?;
        let mut enc =
            png::Encoder::new(std::io::BufWriter::new(file), self.w as u32, self.h as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(std::io::Error::other)?;
        wr.write_image_data(&self.px)
            .map_err(std::io::Error::other)?;
        Ok(())
    }
}

/// A vertical bar chart with a label under each bar.
pub fn bar_chart(
    path: &Path,
    title: &str,
    labels: &[String],
    values: &[f64],
) -> std::io::Result<()> {
    let n = labels.len().max(1);
    let bar = if n > 40 { 12 } else { 24 };
    let label_len = labels.iter().map(|l| l.len()).max().unwrap_or(1);
    let (left, top, plot_h) = (70, 40, 300);
    let bottom = label_len * ADVANCE + 20;
    let w = (left + n * bar + 30).max(title.len() * ADVANCE + left);
    let h = top + plot_h + bottom;
    let mut c = Canvas::new(w, h);
    c.text(left, 10, title, false);
    let max = values.iter().copied().fold(0.0f64, f64::max).max(1e-12);
    c.rect(left - 2, top, 2, plot_h, [0, 0, 0]);
    c.rect(left - 2, top + plot_h, n * bar + 4, 2, [0, 0, 0]);
    c.text(4, top, &fmt_num(max), false);
    c.text(4, top + plot_h - 10, "0", false);
    for (i, (l, &v)) in labels.iter().zip(values).enumerate() {
        let bh = ((v / max) * plot_h as f64).round() as usize;
        let x = left + i * bar + 2;
        c.rect(x, top + plot_h - bh, bar - 4, bh, [70, 110, 200]);
        c.text(
            x + (bar - 4) / 2 - SCALE * 2,
            top + plot_h + 8 + l.len() * ADVANCE,
            l,
            true,
        );
    }
    c.save(path)
}

/// A heatmap of `counts[row][col]` with row and column labels.
pub fn heatmap(
    path: &Path,
    title: &str,
    labels: &[String],
    counts: &[Vec<usize>],
) -> std::io::Result<()> {
    let n = labels.len().max(1);
    let cell = 12;
    let label_len = labels.iter().map(|l| l.len()).max().unwrap_or(1) * ADVANCE + 10;
    let (left, top) = (label_len, 30 + label_len);
    let w = (left + n * cell + 20).max(title.len() * ADVANCE + 20);
    let h = top + n * cell + 20;
    let mut c = Canvas::new(w, h);
    c.text(10, 10, title, false);
    let max = counts.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
    for (i, l) in labels.iter().enumerate() {
        c.text(4, top + i * cell + 1, l, false);
        c.text(left + i * cell + 1, top - 6, l, true);
    }
    for (i, row) in counts.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let color = if v == 0 {
                [235, 90, 80]
            } else {
                let t = (v as f64 / max).sqrt();
                let g = (230.0 - 180.0 * t) as u8;
                [g, g, 255]
            };
            c.rect(left + j * cell, top + i * cell, cell - 1, cell - 1, color);
        }
    }
    c.save(path)
}

fn fmt_num(v: f64) -> String {
    if v >= 1e6 {
        format!("{v:.2e}")
    } else if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}
