//! PNG charts for `drtc synth-report --plots`, drawn with plotters' bitmap backend: axis
//! titles and ticks, a legend when there is more than one series, a colour scale beside
//! the pair map. Text is drawn with DejaVu Sans Mono, embedded (`data/fonts`), so no
//! system fonts are needed.

use super::synth_charts::{BarChart, Chart, HeatMap};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

const FONT: &str = "sans-serif";
const FONT_BYTES: &[u8] = include_bytes!("../../data/fonts/DejaVuSansMono.ttf");
const SERIES_COLORS: [RGBColor; 3] = [
    RGBColor(60, 100, 190),
    RGBColor(230, 140, 40),
    RGBColor(90, 160, 90),
];
/// Cells of pairs never synthesized.
const NEVER: RGBColor = RGBColor(235, 90, 80);

fn font_registered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // the embedded font is a valid TrueType file: registering cannot fail
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

fn io(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Draws `chart` into `path`.
pub fn render(chart: &Chart, path: &Path) -> std::io::Result<()> {
    font_registered();
    match chart {
        Chart::Bars(b) => bars(b, path),
        Chart::Heat(h) => heat(h, path),
    }
}

fn bars(b: &BarChart, path: &Path) -> std::io::Result<()> {
    let n = b.categories.len().max(1);
    let m = b.series.len().max(1);
    let slot = if m > 1 { 26 } else { 18 };
    let label_len = b.categories.iter().map(|c| c.len()).max().unwrap_or(1) as u32;
    let bottom = 30 + label_len * 8;
    let w = (140 + n as u32 * slot).max(640);
    let h = 420 + bottom;
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(io)?;
    let ymax = b
        .series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.08;
    let mut chart = ChartBuilder::on(&root)
        .caption(&b.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(bottom)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)
        .map_err(io)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_desc(b.y_title.as_str())
        .x_desc(b.x_title.as_str())
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()
        .map_err(io)?;
    let width = 0.8 / m as f64;
    for (k, s) in b.series.iter().enumerate() {
        let color = SERIES_COLORS[k % SERIES_COLORS.len()];
        chart
            .draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                let x0 = i as f64 + 0.1 + k as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width, v)], color.filled())
            }))
            .map_err(io)?
            .label(s.name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    // a tick and a label under every category, empty ones included
    let style = TextStyle::from((FONT, 12).into_font())
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, c) in b.categories.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&PathElement::new(vec![(px, py), (px, py + 4)], BLACK))
            .map_err(io)?;
        root.draw(&Text::new(c.clone(), (px, py + 8), style.clone()))
            .map_err(io)?;
    }
    if m > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FONT, 13))
            .draw()
            .map_err(io)?;
    }
    root.present().map_err(io)
}

/// White to dark blue by the square root of `t` in [0, 1].
fn shade(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0).sqrt();
    let g = (230.0 - 190.0 * t) as u8;
    RGBColor(g, g, 255 - (60.0 * t) as u8)
}

fn heat(hm: &HeatMap, path: &Path) -> std::io::Result<()> {
    let n = hm.labels.len().max(1);
    let cell = 16u32;
    let label = hm.labels.iter().map(|l| l.len()).max().unwrap_or(1) as u32 * 8 + 12;
    let side = n as u32 * cell;
    let legend_w = 320;
    let w = label + 40 + side + legend_w;
    // room for the colour scale and its swatches however few ops there are
    let h = (70 + label + side + 40).max(420);
    // labels are placed in backend pixels, so they are drawn on the whole image
    let base = BitMapBackend::new(path, (w, h)).into_drawing_area();
    base.fill(&WHITE).map_err(io)?;
    let root = base.titled(&hm.title, (FONT, 18)).map_err(io)?;
    let (map_area, legend_area) = root.split_horizontally(w - legend_w);
    let mut chart = ChartBuilder::on(&map_area)
        .margin(8)
        .x_label_area_size(label)
        .y_label_area_size(label + 24)
        .build_cartesian_2d(0f64..n as f64, 0f64..n as f64)
        .map_err(io)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc(format!("{} (column)", hm.col_title))
        .y_desc(format!("{} (row)", hm.row_title))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(io)?;
    let max = hm
        .counts
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    // row i is drawn from the top
    let y_of = |i: usize| (n - 1 - i) as f64;
    for (i, row) in hm.counts.iter().enumerate() {
        chart
            .draw_series(row.iter().enumerate().map(|(j, &v)| {
                let color = if v == 0 { NEVER } else { shade(v as f64 / max) };
                Rectangle::new(
                    [
                        (j as f64 + 0.04, y_of(i) + 0.04),
                        (j as f64 + 0.96, y_of(i) + 0.96),
                    ],
                    color.filled(),
                )
            }))
            .map_err(io)?;
        if let Some((_, marks)) = &hm.marks {
            chart
                .draw_series(
                    marks[i]
                        .iter()
                        .enumerate()
                        .filter(|(_, &m)| m)
                        .map(|(j, _)| {
                            Circle::new((j as f64 + 0.5, y_of(i) + 0.5), 3, BLACK.filled())
                        }),
                )
                .map_err(io)?;
        }
    }
    let small = TextStyle::from((FONT, 12).into_font());
    for (i, l) in hm.labels.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(0.0, y_of(i) + 0.5));
        base.draw(&Text::new(
            l.clone(),
            (px - 6, py),
            small.pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(io)?;
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        base.draw(&Text::new(
            l.clone(),
            (px, py + 6),
            small
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(io)?;
    }
    legend(&legend_area, hm, max as usize).map_err(io)
}

/// The colour scale (counts with ticks) and the swatches for "never" and the marks.
fn legend(
    area: &DrawingArea<BitMapBackend, Shift>,
    hm: &HeatMap,
    max: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let (aw, ah) = area.dim_in_pixel();
    let (top, bottom) = (60i32, (ah as i32 - 170).max(120));
    let area = area.margin(10, 10, 10, 10);
    let text = TextStyle::from((FONT, 13).into_font());
    area.draw(&Text::new("pairs per cell", (10, top - 30), text.clone()))?;
    let steps = 64;
    let bar_x = 20;
    for s in 0..steps {
        // top of the bar = max
        let t = 1.0 - s as f64 / steps as f64;
        let y0 = top + (bottom - top) * s / steps;
        let y1 = top + (bottom - top) * (s + 1) / steps;
        area.draw(&Rectangle::new(
            [(bar_x, y0), (bar_x + 24, y1)],
            shade(t).filled(),
        ))?;
    }
    area.draw(&Rectangle::new([(bar_x, top), (bar_x + 24, bottom)], BLACK))?;
    let ticks = 5usize.min(max.max(1));
    for k in 0..=ticks {
        let v = 1 + (max.saturating_sub(1)) * k / ticks.max(1);
        let t = if max > 1 {
            (v as f64 - 1.0) / (max as f64 - 1.0)
        } else {
            1.0
        };
        // the scale is by the square root, as the cells are
        let frac = t.sqrt();
        let y = bottom - ((bottom - top) as f64 * frac) as i32;
        area.draw(&PathElement::new(
            vec![(bar_x + 24, y), (bar_x + 30, y)],
            BLACK,
        ))?;
        area.draw(&Text::new(
            v.to_string(),
            (bar_x + 34, y),
            text.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    let mut y = bottom + 30;
    area.draw(&Rectangle::new(
        [(bar_x, y - 8), (bar_x + 24, y + 8)],
        NEVER.filled(),
    ))?;
    area.draw(&Text::new(
        "0: never synthesized",
        (bar_x + 34, y),
        text.pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    if let Some((name, _)) = &hm.marks {
        y += 30;
        area.draw(&Circle::new((bar_x + 12, y), 3, BLACK.filled()))?;
        let mut label = name.clone();
        let room = (aw as usize).saturating_sub(70) / 8;
        if label.len() > room && room > 3 {
            label.truncate(room - 3);
            label.push_str("...");
        }
        area.draw(&Text::new(
            label,
            (bar_x + 34, y),
            text.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

fn fmt_num(v: f64) -> String {
    if v >= 1e5 {
        format!("{v:.1e}")
    } else if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}
