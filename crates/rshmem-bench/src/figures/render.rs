//! Drawing: one SVG and one PNG per figure (plotters), and `index.html`.
//!
//! Log axes are drawn as linear axes over log2 (bytes) or log10 values with labels turned
//! back into the real values, so one code path serves every scale.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::{Figure, Kind, Records, Scale, SEEDS};

/// Pixels of every figure.
const W: u32 = 960;
const H: u32 = 600;

/// Fonts tried for the text of PNGs (SVGs name the family and let the viewer draw it);
/// `RSHMEM_FONT` goes first. Debian: fonts-dejavu-core.
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Registers a TrueType font as "sans-serif" once (plotters' ab_glyph text needs one).
fn font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let mut tried = Vec::new();
        let env = std::env::var("RSHMEM_FONT").ok();
        for p in env.iter().map(String::as_str).chain(FONTS.iter().copied()) {
            tried.push(p.to_string());
            if let Ok(bytes) = std::fs::read(p) {
                // Leaked once: plotters keeps fonts for the life of the process.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                    .map_err(|_| format!("{p} is not a usable TrueType font"));
            }
        }
        Err(format!(
            "no font for the figures' text; install fonts-dejavu-core or set RSHMEM_FONT (tried {})",
            tried.join(", ")
        ))
    })
    .clone()
}

/// Colours of rshmem series (blues/greens), peers (reds/oranges), references (greys).
fn colour(kind: Kind, i: usize) -> RGBColor {
    const RS: [RGBColor; 5] = [
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(23, 190, 207),
        RGBColor(148, 103, 189),
        RGBColor(0, 70, 140),
    ];
    const PEER: [RGBColor; 4] = [
        RGBColor(214, 39, 40),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
    ];
    const REF: [RGBColor; 3] = [
        RGBColor(60, 60, 60),
        RGBColor(130, 130, 130),
        RGBColor(188, 189, 34),
    ];
    match kind {
        Kind::Rshmem => RS[i % RS.len()],
        Kind::Peer => PEER[i % PEER.len()],
        Kind::Reference => REF[i % REF.len()],
    }
}

/// An axis value as drawn (log2 for bytes, log10 for log).
fn fwd(s: &Scale, v: f64) -> f64 {
    match s {
        Scale::Bytes | Scale::Pow2 => v.max(1e-300).log2(),
        Scale::Log => v.max(1e-300).log10(),
        Scale::Linear | Scale::Count | Scale::Categories(_) => v,
    }
}

/// A drawn value as a label.
fn label(s: &Scale, v: f64) -> String {
    match s {
        Scale::Bytes => {
            let b = 2f64.powf(v).round();
            if (b.log2() - v).abs() > 0.01 {
                return String::new();
            }
            crate::report::size(b as usize)
        }
        Scale::Log => number(10f64.powf(v)),
        Scale::Pow2 => {
            if (v - v.round()).abs() > 0.01 {
                return String::new();
            }
            number(2f64.powf(v.round()))
        }
        Scale::Linear => number(v),
        Scale::Count => {
            if (v - v.round()).abs() > 0.01 {
                return String::new();
            }
            format!("{}", v.round())
        }
        Scale::Categories(c) => {
            if (v - v.round()).abs() > 0.01 || v < -0.01 {
                return String::new();
            }
            c.get(v.round() as usize).cloned().unwrap_or_default()
        }
    }
}

/// Short number text: `0.25`, `12`, `3.2k`, `1.5M`.
fn number(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let mut t = if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    };
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    t + unit
}

/// Range and label count of one axis over the drawn values.
fn range(s: &Scale, vals: impl Iterator<Item = f64>) -> (f64, f64, usize) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0, 2);
    }
    match s {
        Scale::Bytes | Scale::Pow2 => {
            let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
            (lo, hi, ((hi - lo) as usize + 1).min(12))
        }
        Scale::Log => {
            let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
            // Whole decades, so the labels land on 1, 10, 100.
            (lo, hi, (hi - lo) as usize + 1)
        }
        Scale::Categories(c) => (-0.5, c.len().max(1) as f64 - 0.5, c.len().max(1) + 1),
        Scale::Count => {
            let (lo, hi) = (lo.floor(), hi.ceil());
            (lo - 0.3, hi + 0.3, ((hi - lo) as usize + 2).min(12))
        }
        Scale::Linear => {
            let lo = lo.min(0.0);
            let hi = if hi <= lo { lo + 1.0 } else { hi * 1.08 };
            (lo, hi, 8)
        }
    }
}

fn text(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// Draws `fig` on any backend.
fn draw<DB: DrawingBackend>(area: DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| format!("{}: {x:?}", fig.id);
    area.fill(&WHITE).map_err(e)?;
    let (xs, ys) = (&fig.x.scale, &fig.y.scale);
    let pts = || fig.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1, xn) = range(xs, pts().map(|p| fwd(xs, p.0)));
    let (y0, y1, yn) = range(ys, pts().map(|p| fwd(ys, p.1)));
    let mut chart = ChartBuilder::on(&area)
        .caption(&fig.title, text(20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let (xl, yl) = (|v: &f64| label(xs, *v), |v: &f64| label(ys, *v));
    chart
        .configure_mesh()
        .x_desc(fig.x.label.as_str())
        .y_desc(fig.y.label.as_str())
        .x_labels(xn)
        .y_labels(yn)
        .x_label_formatter(&xl)
        .y_label_formatter(&yl)
        .label_style(text(13))
        .x_label_style(text(if matches!(xs, Scale::Categories(_)) {
            11
        } else {
            13
        }))
        .axis_desc_style(text(15))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e)?;
    let mut count = [0usize; 3];
    for s in &fig.series {
        let k = s.kind as usize;
        let c = colour(s.kind, count[k]);
        count[k] += 1;
        let p: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (fwd(xs, x), fwd(ys, y)))
            .collect();
        let style = c.stroke_width(2);
        let anno = if matches!(xs, Scale::Categories(_)) && s.kind != Kind::Reference {
            // Categories are not a sequence: points only.
            chart
                .draw_series(p.iter().map(|&q| Circle::new(q, 5, c.filled())))
                .map_err(e)?
        } else if s.kind == Kind::Reference {
            chart
                .draw_series(DashedLineSeries::new(p.clone(), 8, 5, style))
                .map_err(e)?
        } else {
            chart
                .draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())))
                .map_err(e)?;
            chart
                .draw_series(LineSeries::new(p.clone(), style))
                .map_err(e)?
        };
        anno.label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
    }
    if fig.series.is_empty() {
        area.draw(&Text::new(
            "no records for this figure in this run",
            (W as i32 / 4, H as i32 / 2),
            text(18),
        ))
        .map_err(e)?;
    } else {
        chart
            .configure_series_labels()
            .position(if fig.legend_low {
                SeriesLabelPosition::LowerRight
            } else {
                SeriesLabelPosition::UpperLeft
            })
            .label_font(text(13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(e)?;
    }
    area.present().map_err(e)
}

/// The caption of `fig` in the page: its text, the machine, the PE counts and the peer.
fn caption(recs: &Records, fig: &Figure) -> String {
    let m = recs.machine();
    let mut s = fig.caption.clone();
    let refs: Vec<&str> = fig
        .series
        .iter()
        .filter(|s| s.kind == Kind::Reference)
        .map(|s| s.name.as_str())
        .collect();
    if !refs.is_empty() {
        let _ = write!(s, " Reference lines (dashed): {}.", refs.join("; "));
    }
    let _ = write!(s, " Machine: {}.", m.text());
    if fig.caf {
        let has_peer = fig.series.iter().any(|s| s.name.contains("OpenCoarrays"));
        let oc = m.opencoarrays.as_deref().is_some_and(|o| !o.is_empty());
        let _ = write!(s, " {}", m.caf_peer());
        if oc && !has_peer {
            s.push_str(
                " OpenCoarrays left no records for this figure (its run failed or was skipped).",
            );
        }
    }
    if fig.wants_peer {
        let has_peer = fig.series.iter().any(|s| s.name.contains("OSHMEM"));
        if has_peer || m.oshmem.is_empty() {
            let _ = write!(s, " {}", m.peer());
        } else {
            s.push_str(" OSHMEM left no records for this figure (its run failed or was skipped).");
        }
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Writes `ID.svg`, `ID.png` for every figure and `index.html` into `out`.
pub(crate) fn render_all(recs: &Records, figs: &[Figure], out: &Path) -> Result<(), String> {
    font()?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (i, fig) in figs.iter().enumerate() {
        eprint!(
            "\rrshmem-bench report: drawing {}/{} {:<40}",
            i + 1,
            figs.len(),
            fig.id
        );
        let svg: PathBuf = out.join(format!("{}.svg", fig.id));
        draw(SVGBackend::new(&svg, (W, H)).into_drawing_area(), fig)?;
        let png = out.join(format!("{}.png", fig.id));
        draw(BitMapBackend::new(&png, (W, H)).into_drawing_area(), fig)?;
    }
    eprintln!();
    let m = recs.machine();
    let mut h = String::new();
    h.push_str(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rshmem figures</title>\n",
    );
    h.push_str("<style>body{font-family:sans-serif;max-width:1000px;margin:auto}figure{margin:2em 0}img{max-width:100%;border:1px solid #ddd}figcaption{font-size:0.92em}</style>\n");
    h.push_str("</head><body>\n<h1>rshmem figures</h1>\n");
    let _ = writeln!(
        h,
        "<p>Measured on {}. {}</p>",
        esc(&m.text()),
        esc(&m.peer())
    );
    for g in SEEDS {
        let _ = writeln!(h, "<h2 id=\"{}\">{}</h2>", g.id, esc(g.title));
        let mine: Vec<&Figure> = figs.iter().filter(|f| f.group == g.id).collect();
        if g.figures.is_none() {
            let _ = writeln!(h, "<p><em>{}</em></p>", esc(g.pending));
        }
        for f in mine {
            let _ = writeln!(
                h,
                "<figure id=\"{id}\"><a href=\"{id}.svg\"><img src=\"{id}.svg\" alt=\"{t}\"></a>\n<figcaption><b>{t}.</b> {c} Series: {s}. (<a href=\"{id}.png\">PNG</a>)</figcaption></figure>",
                id = f.id,
                t = esc(&f.title),
                c = esc(&caption(recs, f)),
                s = esc(
                    &f.series
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            );
        }
    }
    h.push_str("</body></html>\n");
    std::fs::write(out.join("index.html"), h)
        .map_err(|e| format!("cannot write index.html: {e}"))?;
    std::fs::write(out.join("figures.md"), markdown(recs, figs))
        .map_err(|e| format!("cannot write figures.md: {e}"))
}

/// The same page in Markdown (docs/results.md is made of it), SVGs beside it.
fn markdown(recs: &Records, figs: &[Figure]) -> String {
    let m = recs.machine();
    let mut h = format!("Measured on {}. {}\n", m.text(), m.peer());
    for g in SEEDS {
        let _ = write!(h, "\n## {}\n\n", g.title);
        if g.figures.is_none() {
            let _ = writeln!(h, "*{}*", g.pending);
        }
        for f in figs.iter().filter(|f| f.group == g.id) {
            let _ = write!(
                h,
                "![{t}]({id}.svg)\n\n**{t}.** {c}\n\n",
                id = f.id,
                t = f.title,
                c = caption(recs, f)
            );
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(label(&Scale::Bytes, 3.0), "8 B");
        assert_eq!(label(&Scale::Bytes, 22.0), "4 MiB");
        assert_eq!(label(&Scale::Bytes, 3.5), "");
        assert_eq!(label(&Scale::Log, 2.0), "100");
        assert_eq!(label(&Scale::Log, -1.0), "0.1");
        assert_eq!(label(&Scale::Pow2, 5.0), "32");
        assert_eq!(label(&Scale::Pow2, 4.5), "");
        assert_eq!(number(1500.0), "1500");
        assert_eq!(number(25000.0), "25k");
        assert_eq!(number(2.5e6), "2.5M");
        assert_eq!(number(100.0), "100");
        assert_eq!(number(1000.0), "1000");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(range(&Scale::Log, [0.5, 2.3].into_iter()), (0.0, 3.0, 4));
    }

    /// The Coarray Fortran figures say which tool was missing, as the OSHMEM ones do.
    #[test]
    fn caf_captions_name_missing_tools() {
        let fig = |machine: &str| {
            let recs = Records::from_text(machine);
            let mut f = Figure::new(
                "seed003_x",
                "seed003",
                "x",
                super::super::Axis::new("x", Scale::Linear),
                super::super::Axis::new("y", Scale::Linear),
            );
            f.caf = true;
            f.add("rshmem", Kind::Rshmem, vec![(1.0, 1.0)]);
            caption(&recs, &f)
        };
        let m = |extra: &str| {
            format!("{{\"bench\":\"machine\",\"metric\":\"cores\",\"value\":2,\"cores\":2{extra}}}")
        };
        assert!(fig(&m("")).contains("did not include the Coarray Fortran"));
        let c = fig(&m(",\"gfortran\":\"\",\"opencoarrays\":\"\""));
        assert!(c.contains("gfortran is not installed"), "{c}");
        let c = fig(&m(",\"gfortran\":\"GNU Fortran 12\",\"opencoarrays\":\"\""));
        assert!(c.contains("GNU Fortran 12") && c.contains("OpenCoarrays is not installed"));
        let c = fig(&m(
            ",\"gfortran\":\"GNU Fortran 12\",\"opencoarrays\":\"caf 2.9\"",
        ));
        assert!(
            c.contains("OpenCoarrays: caf 2.9") && c.contains("left no records"),
            "{c}"
        );
    }
}
