//! The communication matrices: `comm-matrix.json` (`{"<pvar>": [[row per sending rank]]}`)
//! and one SVG heat map per matrix (`comm-matrix-<pvar>.svg`), drawn with `plotters`' SVG
//! backend: rows are sending ranks (rank 0 at the top), columns receiving ranks, the colour of
//! a cell its value on a scale shown beside the grid (zero in light grey, apart from the
//! scale), and the values written in the cells when the matrix has at most
//! [`VALUES_UP_TO`] ranks.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::reduce::{CommMatrix, Profile};

/// Largest matrix whose values are written in its cells.
pub const VALUES_UP_TO: usize = 12;

/// A JSON number: whole values as integers.
fn json_number(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else if x.is_finite() {
        serde_json::Value::from(x).to_string()
    } else {
        "null".into()
    }
}

/// `comm-matrix.json`: every matrix by its pvar's name, one row per line.
pub fn json(p: &Profile) -> String {
    let mut out = String::from("{");
    for (i, m) in p.matrices.iter().enumerate() {
        let _ = write!(
            out,
            "{}\n  {}: [",
            if i > 0 { "," } else { "" },
            serde_json::Value::from(m.name.as_str())
        );
        for (r, row) in m.rows.iter().enumerate() {
            let cells: Vec<String> = row.iter().map(|&x| json_number(x)).collect();
            let _ = write!(
                out,
                "{}\n    [{}]",
                if r > 0 { "," } else { "" },
                cells.join(", ")
            );
        }
        out.push_str("\n  ]");
    }
    out.push_str(if p.matrices.is_empty() {
        "}\n"
    } else {
        "\n}\n"
    });
    out
}

/// The file name of a matrix's heat map: `comm-matrix-<pvar>.svg`, characters other than
/// ASCII letters, digits, `.`, `-` and `_` replaced by `_`.
pub fn svg_name(m: &CommMatrix) -> String {
    let safe: String = m
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("comm-matrix-{safe}.svg")
}

/// Viridis, by a few stops, linearly between them: `t` in `0..=1`.
fn colour(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 6] = [
        (68, 1, 84),
        (65, 68, 135),
        (42, 120, 142),
        (34, 168, 132),
        (122, 209, 81),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Light grey: the colour of zero.
const ZERO: RGBColor = RGBColor(238, 238, 238);

/// Text that reads on `c`.
fn ink(c: RGBColor) -> RGBColor {
    let lum = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if lum > 140.0 { BLACK } else { WHITE }
}

/// A cell value, short.
fn short(x: f64) -> String {
    super::text::num(x)
}

/// The heat map of one matrix as an SVG document.
pub fn svg(m: &CommMatrix) -> String {
    let n = m.rows.len().max(1);
    let cell = (560 / n).clamp(4, 56) as i32;
    let grid = cell * n as i32;
    let (left, top, legend_w, bottom) = (80i32, 70i32, 140i32, 60i32);
    let width = (left + grid + legend_w) as u32;
    let height = (top + grid + bottom).max(260) as u32;
    let max = m
        .rows
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    let min_pos = m
        .rows
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let total: f64 = m.rows.iter().flatten().filter(|x| x.is_finite()).sum();
    // From the smallest positive value (dark) to the largest (bright); zero apart.
    let scale = |x: f64| {
        if max > 0.0 && x > 0.0 {
            colour(if max > min_pos {
                (x - min_pos) / (max - min_pos)
            } else {
                1.0
            })
        } else {
            ZERO
        }
    };

    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            // The SVG backend writes a font's size divided by 1.24: sizes here are as drawn.
            let font = |size: i32| ("sans-serif", size as f64 * 1.24).into_font();
            let centred = Pos::new(HPos::Center, VPos::Center);
            root.draw(&Text::new(
                m.name.clone(),
                (left, 14),
                font(17).style(FontStyle::Bold).color(&BLACK),
            ))?;
            root.draw(&Text::new(
                format!(
                    "row: sending rank, column: receiving rank; total {}",
                    short(total)
                ),
                (left, 38),
                font(13).color(&RGBColor(80, 80, 80)),
            ))?;
            // Cells.
            for (r, row) in m.rows.iter().enumerate() {
                for (c, &x) in row.iter().enumerate() {
                    let (x0, y0) = (left + c as i32 * cell, top + r as i32 * cell);
                    let fill = scale(x);
                    root.draw(&Rectangle::new(
                        [(x0, y0), (x0 + cell, y0 + cell)],
                        fill.filled(),
                    ))?;
                    if n <= VALUES_UP_TO {
                        let size = (cell / 3).clamp(9, 15);
                        root.draw(&Text::new(
                            short(x),
                            (x0 + cell / 2, y0 + cell / 2),
                            font(size).color(&ink(fill)).pos(centred),
                        ))?;
                    }
                }
            }
            // Cell borders when cells are large enough to see them.
            if cell >= 12 {
                for i in 0..=n as i32 {
                    let grey = RGBColor(255, 255, 255).stroke_width(1);
                    root.draw(&PathElement::new(
                        [(left, top + i * cell), (left + grid, top + i * cell)],
                        grey,
                    ))?;
                    root.draw(&PathElement::new(
                        [(left + i * cell, top), (left + i * cell, top + grid)],
                        grey,
                    ))?;
                }
            }
            root.draw(&Rectangle::new(
                [(left, top), (left + grid, top + grid)],
                BLACK.stroke_width(1),
            ))?;
            // Rank labels: every `step`-th rank.
            let step = n.div_ceil(16);
            let tick = font(12).color(&BLACK);
            for i in (0..n).step_by(step) {
                let mid = i as i32 * cell + cell / 2;
                root.draw(&Text::new(
                    i.to_string(),
                    (left - 6, top + mid),
                    tick.pos(Pos::new(HPos::Right, VPos::Center)),
                ))?;
                root.draw(&Text::new(
                    i.to_string(),
                    (left + mid, top + grid + 6),
                    tick.pos(Pos::new(HPos::Center, VPos::Top)),
                ))?;
            }
            let axis = font(13).color(&BLACK);
            root.draw(&Text::new(
                "receiving rank",
                (left + grid / 2, top + grid + 28),
                axis.pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
            root.draw(&Text::new(
                "sending rank",
                (22, top + grid / 2),
                axis.transform(FontTransform::Rotate270).pos(centred),
            ))?;
            // The colour scale: max at the top, the smallest positive value at the bottom,
            // zero's swatch below it.
            let (lx, bar_w) = (left + grid + 28, 18);
            let bar_h = grid.max(120) - 30;
            let steps = 64;
            for s in 0..steps {
                let y0 = top + bar_h * s / steps;
                let y1 = top + bar_h * (s + 1) / steps;
                let t = 1.0 - (s as f64 + 0.5) / steps as f64;
                root.draw(&Rectangle::new(
                    [(lx, y0), (lx + bar_w, y1)],
                    colour(t).filled(),
                ))?;
            }
            root.draw(&Rectangle::new(
                [(lx, top), (lx + bar_w, top + bar_h)],
                BLACK.stroke_width(1),
            ))?;
            let label = font(12)
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(short(max), (lx + bar_w + 6, top), label.clone()))?;
            if min_pos.is_finite() && min_pos < max {
                root.draw(&Text::new(
                    short((max + min_pos) / 2.0),
                    (lx + bar_w + 6, top + bar_h / 2),
                    label.clone(),
                ))?;
                root.draw(&Text::new(
                    short(min_pos),
                    (lx + bar_w + 6, top + bar_h),
                    label.clone(),
                ))?;
            }
            let zy = top + bar_h + 14;
            root.draw(&Rectangle::new(
                [(lx, zy), (lx + bar_w, zy + 14)],
                ZERO.filled(),
            ))?;
            root.draw(&Rectangle::new(
                [(lx, zy), (lx + bar_w, zy + 14)],
                BLACK.stroke_width(1),
            ))?;
            root.draw(&Text::new("0", (lx + bar_w + 6, zy + 7), label))?;
            root.present()?;
            Ok(())
        };
        // The SVG backend writes to a String: nothing here can fail but a bug.
        if let Err(e) = draw() {
            drop(root);
            return format!("<!-- drawing failed: {e} -->\n");
        }
    }
    out
}
