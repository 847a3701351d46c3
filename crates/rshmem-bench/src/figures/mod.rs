//! Figures of `rshmem-bench report`: parsed JSON records in, SVG + PNG + `index.html` out.
//!
//! Rendering never measures anything: it reads [`Record`]s (the JSON lines of the
//! benchmarks, tagged by the experiment that made them, see `crate::experiments`) and
//! draws what they hold. Each seed has its own file whose `figures` function turns the
//! records into [`Figure`]s; [`SEEDS`] lists them, so a new seed is one more entry.

mod ofi;
mod osu;
mod render;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
mod seed004;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

pub(crate) use render::render_all;

/// One JSON line of a benchmark, with the keys after the documented ones kept in `extra`
/// (`impl`, `mem`, `threads`, and `exp`: the experiment that ran it).
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) bench: String,
    pub(crate) size: Option<f64>,
    pub(crate) pes: u64,
    pub(crate) metric: String,
    pub(crate) value: f64,
    pub(crate) extra: serde_json::Map<String, Value>,
}

impl Record {
    /// Parses one line; `None` for table lines and lines that are not records.
    pub(crate) fn parse(line: &str) -> Option<Record> {
        if !line.starts_with('{') {
            return None;
        }
        let Value::Object(mut m) = serde_json::from_str::<Value>(line).ok()? else {
            return None;
        };
        let bench = m.remove("bench")?.as_str()?.to_string();
        let metric = m.remove("metric")?.as_str()?.to_string();
        let value = m
            .remove("value")
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::NAN);
        let size = m.remove("size").and_then(|v| v.as_f64());
        let pes = m.remove("pes").and_then(|v| v.as_u64()).unwrap_or(0);
        m.remove("unit");
        Some(Record {
            bench,
            size,
            pes,
            metric,
            value,
            extra: m,
        })
    }

    /// An extra string key (`""` when absent).
    pub(crate) fn tag(&self, key: &str) -> &str {
        self.extra.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// An extra number key.
    pub(crate) fn num(&self, key: &str) -> Option<f64> {
        self.extra.get(key).and_then(Value::as_f64)
    }
}

/// All records of a run, with the machine it ran on.
#[derive(Debug, Default)]
pub(crate) struct Records {
    pub(crate) all: Vec<Record>,
}

impl Records {
    /// Parses JSON lines (other lines are skipped).
    pub(crate) fn from_text(text: &str) -> Records {
        Records {
            all: text.lines().filter_map(Record::parse).collect(),
        }
    }

    /// Records of experiment `exp` (any experiment when `exp` is empty).
    pub(crate) fn of<'a>(&'a self, exp: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
        self.all
            .iter()
            .filter(move |r| r.bench != "machine" && (exp.is_empty() || r.tag("exp") == exp))
    }

    /// Like [`Records::points`], but a repeated x (a run made with `--repeat`, or several
    /// runs appended) keeps the median of its values.
    pub(crate) fn medians(
        &self,
        exp: &str,
        pick: impl Fn(&Record) -> bool,
        x: impl Fn(&Record) -> Option<f64>,
    ) -> Vec<(f64, f64)> {
        let mut m: BTreeMap<u64, (f64, Vec<f64>)> = BTreeMap::new();
        for r in self.of(exp).filter(|r| pick(r)) {
            if let Some(xv) = x(r).filter(|x| x.is_finite()) {
                if r.value.is_finite() {
                    m.entry(xv.to_bits())
                        .or_insert((xv, Vec::new()))
                        .1
                        .push(r.value);
                }
            }
        }
        let mut v: Vec<(f64, f64)> = m
            .into_values()
            .map(|(x, mut ys)| {
                ys.sort_by(f64::total_cmp);
                let n = ys.len();
                let mid = if n % 2 == 1 {
                    ys[n / 2]
                } else {
                    (ys[n / 2 - 1] + ys[n / 2]) / 2.0
                };
                (x, mid)
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// `(x, value)` of the records of `exp` that `pick` accepts, x given by `x`, sorted by
    /// x; a repeated x keeps its last value; non-finite values are dropped.
    pub(crate) fn points(
        &self,
        exp: &str,
        pick: impl Fn(&Record) -> bool,
        x: impl Fn(&Record) -> Option<f64>,
    ) -> Vec<(f64, f64)> {
        let mut m = BTreeMap::new();
        for r in self.of(exp).filter(|r| pick(r)) {
            if let Some(xv) = x(r) {
                if r.value.is_finite() && xv.is_finite() {
                    m.insert(xv.to_bits(), (xv, r.value));
                }
            }
        }
        let mut v: Vec<(f64, f64)> = m.into_values().collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// The memcpy reference line (`metric` of rshmem-bench pe's memcpy records) by message
    /// size, over sizes `lo..=hi`.
    pub(crate) fn memcpy(&self, metric: &str, lo: f64, hi: f64) -> Vec<(f64, f64)> {
        self.points(
            "pe",
            |x| {
                x.bench == "memcpy"
                    && x.metric == metric
                    && x.size.is_some_and(|s| s >= lo && s <= hi)
            },
            by_size,
        )
    }

    /// One value: the record of `exp` with this bench and metric (and `pick`).
    pub(crate) fn value(
        &self,
        exp: &str,
        bench: &str,
        metric: &str,
        pick: impl Fn(&Record) -> bool,
    ) -> Option<f64> {
        self.of(exp)
            .filter(|r| r.bench == bench && r.metric == metric && pick(r))
            .map(|r| r.value)
            .filter(|v| v.is_finite())
            .last()
    }

    /// The machine the records were measured on (the `machine` record).
    pub(crate) fn machine(&self) -> Machine {
        let m = self.all.iter().find(|r| r.bench == "machine");
        let s = |k: &str| m.map(|r| r.tag(k).to_string()).unwrap_or_default();
        let o = |k: &str| {
            m.and_then(|r| r.extra.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Machine {
            cpu: s("cpu"),
            cores: m.and_then(|r| r.num("cores")).unwrap_or(0.0) as usize,
            kernel: s("kernel"),
            oshmem: s("oshmem"),
            sos: s("sos"),
            gfortran: o("gfortran"),
            opencoarrays: o("opencoarrays"),
            quick: m.is_some_and(|r| r.extra.get("quick") == Some(&Value::Bool(true))),
        }
    }
}

/// Where the records were measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct Machine {
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) kernel: String,
    /// Open MPI's version line, empty when OSHMEM was not installed (or not run).
    pub(crate) oshmem: String,
    /// Sandia OpenSHMEM's version and prefix, empty when the run had none (`--sos`).
    pub(crate) sos: String,
    /// Whether the run was `--quick`.
    pub(crate) quick: bool,
    /// gfortran's version line: `None` when the run did not try the Coarray Fortran
    /// benchmarks, empty when gfortran is not installed.
    pub(crate) gfortran: Option<String>,
    /// OpenCoarrays' version line, as `gfortran` (empty: not installed).
    pub(crate) opencoarrays: Option<String>,
}

impl Machine {
    /// One sentence for a caption.
    pub(crate) fn text(&self) -> String {
        format!(
            "{} cores, {}, Linux {}{}",
            self.cores,
            if self.cpu.is_empty() {
                "unknown CPU"
            } else {
                &self.cpu
            },
            self.kernel,
            if self.quick {
                " (quick run: few samples)"
            } else {
                ""
            }
        )
    }

    /// What the caption says about the Coarray Fortran compiler and the OpenCoarrays peer.
    pub(crate) fn caf_peer(&self) -> String {
        match (self.gfortran.as_deref(), self.opencoarrays.as_deref()) {
            (None, _) => "This run did not include the Coarray Fortran benchmarks \
                          (scripts/bench-caf.sh): no series."
                .into(),
            (Some(""), _) => "gfortran is not installed on this machine: no Coarray Fortran \
                              series (neither rshmem nor OpenCoarrays)."
                .into(),
            (Some(g), None | Some("")) => format!(
                "Compiler: {g}. OpenCoarrays is not installed on this machine (no /usr/bin/caf, \
                 cafrun): no OpenCoarrays series."
            ),
            (Some(g), Some(o)) => format!("Compiler: {g}. OpenCoarrays: {o}, over Open MPI."),
        }
    }

    /// What the caption says about the OSHMEM peer.
    pub(crate) fn peer(&self) -> String {
        if self.oshmem.is_empty() {
            "Open MPI's OSHMEM is not installed on this machine (no /usr/bin/oshcc, oshrun): no OSHMEM series."
                .into()
        } else {
            format!("OSHMEM: {}.", self.oshmem)
        }
    }
}

/// How an axis is scaled and labelled.
#[derive(Debug, Clone)]
pub(crate) enum Scale {
    /// Bytes, log 2 (labels `8 B`, `4 KiB`).
    Bytes,
    /// A plain number, linear from 0.
    Linear,
    /// A count (PEs, threads): linear over the counts present, integer labels.
    Count,
    /// A plain number, log 10.
    Log,
    /// A plain number, log 2 (labels at powers of two: strides).
    Pow2,
    /// Named categories at x = 0, 1, 2...
    Categories(Vec<String>),
}

/// One axis.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub(crate) label: String,
    pub(crate) scale: Scale,
}

impl Axis {
    pub(crate) fn new(label: &str, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            scale,
        }
    }
}

/// A series is measured (solid, with points) or a reference line (dashed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// rshmem.
    Rshmem,
    /// What rshmem is compared with: OSHMEM, or rshmem's other variant (warm colours).
    Peer,
    /// A machine limit (memcpy, raw round trip) or another reference.
    Reference,
}

/// One line of a figure.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) points: Vec<(f64, f64)>,
}

/// One figure.
#[derive(Debug, Clone)]
pub(crate) struct Figure {
    /// File stem (`seed000_team_create`).
    pub(crate) id: String,
    /// The seed (or `osu`) it belongs to.
    pub(crate) group: &'static str,
    pub(crate) title: String,
    /// What was measured and how (the renderer adds the machine and the peer).
    pub(crate) caption: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) series: Vec<Series>,
    /// Whether an OSHMEM series was expected (the caption then says when it is missing).
    pub(crate) wants_peer: bool,
    /// A Coarray Fortran figure: the caption names the compiler and says whether
    /// OpenCoarrays ran (instead of OSHMEM).
    pub(crate) caf: bool,
    /// The legend goes to the lower right (where the curves leave room).
    pub(crate) legend_low: bool,
}

impl Figure {
    pub(crate) fn new(id: &str, group: &'static str, title: &str, x: Axis, y: Axis) -> Figure {
        Figure {
            id: id.into(),
            group,
            title: title.into(),
            caption: String::new(),
            x,
            y,
            series: Vec::new(),
            wants_peer: false,
            caf: false,
            legend_low: false,
        }
    }

    /// Adds a series unless it has no point.
    pub(crate) fn add(&mut self, name: &str, kind: Kind, points: Vec<(f64, f64)>) {
        if !points.is_empty() {
            self.series.push(Series {
                name: name.into(),
                kind,
                points,
            });
        }
    }

    /// The smallest and largest x of the series so far.
    pub(crate) fn x_range(&self) -> (f64, f64) {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)))
    }

    pub(crate) fn caption(mut self, text: &str) -> Figure {
        self.caption = text.into();
        self
    }
}

/// A group of figures (one seed, or the OSU-style curves) and whether it is there yet.
#[derive(Debug)]
pub(crate) struct Group {
    pub(crate) id: &'static str,
    pub(crate) title: &'static str,
    /// Figures from records; `None` when the group has no experiment yet.
    pub(crate) figures: Option<fn(&Records) -> Vec<Figure>>,
    /// Shown instead of figures when there are none.
    pub(crate) pending: &'static str,
}

/// Every group, in page order.
pub(crate) const SEEDS: &[Group] = &[
    Group {
        id: "osu",
        title: "OSU-style point-to-point and collective curves (C programs, rshmem beside OSHMEM)",
        figures: Some(osu::figures),
        pending: "",
    },
    Group {
        id: "ofi",
        title: "rshmem over libfabric beside Sandia OpenSHMEM over the same libfabric (C programs, tcp)",
        figures: Some(ofi::figures),
        pending: "",
    },
    Group {
        id: "seed000",
        title: "Seed 000: OpenSHMEM teams",
        figures: Some(seed000::figures),
        pending: "",
    },
    Group {
        id: "seed001",
        title: "Seed 001: contexts and threads",
        figures: Some(seed001::figures),
        pending: "",
    },
    Group {
        id: "seed002",
        title: "Seed 002: explicit non-blocking operations",
        figures: Some(seed002::figures),
        pending: "",
    },
    Group {
        id: "seed003",
        title: "Seed 003: Coarray Fortran over OpenSHMEM",
        figures: Some(seed003::figures),
        pending: "",
    },
    Group {
        id: "seed004",
        title: "Seed 004: active sets and non-blocking collectives",
        figures: Some(seed004::figures),
        pending: "",
    },
];

/// Builds every figure of `recs`.
pub(crate) fn build(recs: &Records) -> Vec<Figure> {
    SEEDS
        .iter()
        .filter_map(|g| g.figures)
        .flat_map(|f| f(recs))
        .collect()
}

/// Reads a JSON-lines file and renders it into `out`; returns the figures drawn.
pub(crate) fn render_file(from: &Path, out: &Path) -> Result<Vec<Figure>, String> {
    let text = std::fs::read_to_string(from)
        .map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    let recs = Records::from_text(&text);
    let figs = build(&recs);
    render_all(&recs, &figs, out)?;
    Ok(figs)
}

/// `x` of a record: its size in bytes.
pub(crate) fn by_size(r: &Record) -> Option<f64> {
    r.size
}

/// `x` of a record: its PE count.
pub(crate) fn by_pes(r: &Record) -> Option<f64> {
    Some(r.pes as f64)
}

/// A horizontal reference line at `v` across the x values of `fig`'s series so far.
pub(crate) fn hline(fig: &Figure, v: Option<f64>) -> Vec<(f64, f64)> {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return Vec::new();
    };
    let xs = fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if lo.is_finite() {
        vec![(lo, v), (hi, v)]
    } else {
        Vec::new()
    }
}
