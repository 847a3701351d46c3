//! Output: a readable table (lines never starting with `{`) and JSON lines
//! (`{"bench":..,"size":..,"pes":..,"metric":..,"value":..,"unit":..}`), both on stdout.

use std::cell::RefCell;
use std::io::{BufRead, Write};

use serde_json::{json, Value};

/// What a target asks of a ratio or figure.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Goal {
    /// The value must be at least this.
    AtLeast(f64),
    /// The value must be at most this.
    AtMost(f64),
}

impl Goal {
    fn met(self, v: f64) -> bool {
        match self {
            Goal::AtLeast(t) => v >= t,
            Goal::AtMost(t) => v <= t,
        }
    }

    fn text(self) -> String {
        match self {
            Goal::AtLeast(t) => format!(">= {t}"),
            Goal::AtMost(t) => format!("<= {t}"),
        }
    }
}

/// One target's outcome.
#[derive(Debug, Clone)]
struct Outcome {
    name: String,
    how: String,
    value: f64,
    unit: String,
    goal: Goal,
}

/// Collects and prints the results of one run.
#[derive(Debug)]
pub(crate) struct Report {
    pes: usize,
    targets: RefCell<Vec<Outcome>>,
}

impl Report {
    pub(crate) fn new(pes: usize) -> Report {
        Report {
            pes,
            targets: RefCell::new(Vec::new()),
        }
    }

    /// A table line (never starts with `{`).
    pub(crate) fn line(&self, s: impl AsRef<str>) {
        let s = s.as_ref();
        let mut out = std::io::stdout().lock();
        let _ = if s.starts_with('{') {
            writeln!(out, " {s}")
        } else {
            writeln!(out, "{s}")
        };
    }

    /// A section heading.
    pub(crate) fn section(&self, title: &str) {
        self.line("");
        self.line(format!("== {title} =="));
    }

    /// One JSON record.
    pub(crate) fn json(
        &self,
        bench: &str,
        size: Option<usize>,
        metric: &str,
        value: f64,
        unit: &str,
    ) {
        self.json_with(bench, size, metric, value, unit, &[]);
    }

    /// One JSON record with extra keys after the documented ones (e.g. `"threads"`).
    pub(crate) fn json_with(
        &self,
        bench: &str,
        size: Option<usize>,
        metric: &str,
        value: f64,
        unit: &str,
        extra: &[(&str, Value)],
    ) {
        println!("{}", self.record(bench, size, metric, value, unit, extra));
    }

    /// A JSON line with the keys in the documented order, then `extra` ones.
    fn record(
        &self,
        bench: &str,
        size: Option<usize>,
        metric: &str,
        value: f64,
        unit: &str,
        extra: &[(&str, Value)],
    ) -> String {
        let mut line = format!(
            "{{\"bench\":{},\"size\":{},\"pes\":{},\"metric\":{},\"value\":{},\"unit\":{}",
            json!(bench),
            json!(size),
            self.pes,
            json!(metric),
            json!(round(value)),
            json!(unit)
        );
        for (k, v) in extra {
            line.push_str(&format!(",{}:{v}", json!(k)));
        }
        line.push('}');
        line
    }

    /// Records a target on `value` (a ratio to a limit, or an absolute figure) and emits
    /// its JSON record; the table of targets comes with [`Report::targets`].
    pub(crate) fn target(&self, name: &str, how: &str, value: f64, unit: &str, goal: Goal) {
        let extra = [
            ("target", json!(goal.text())),
            ("met", json!(goal.met(value))),
            ("how", json!(how)),
        ];
        println!("{}", self.record("target", None, name, value, unit, &extra));
        self.targets.borrow_mut().push(Outcome {
            name: name.into(),
            how: how.into(),
            value,
            unit: unit.into(),
            goal,
        });
    }

    /// Prints the table of targets recorded so far.
    pub(crate) fn targets(&self) {
        let t = self.targets.borrow();
        if t.is_empty() {
            return;
        }
        self.section(&format!("targets ({} PEs)", self.pes));
        for o in t.iter() {
            self.line(target_line(
                &o.name,
                o.value,
                &o.unit,
                &o.goal.text(),
                o.goal.met(o.value),
                &o.how,
            ));
        }
    }
}

fn target_line(name: &str, value: f64, unit: &str, goal: &str, met: bool, how: &str) -> String {
    format!(
        "{:<40} {:>9.3} {:<3} target {:<8} {:<7} {how}",
        name,
        value,
        unit,
        goal,
        if met { "MET" } else { "MISSED" }
    )
}

/// Keeps JSON short: 4 significant digits past the point for small values.
fn round(v: f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let scale = if v.abs() >= 100.0 { 10.0 } else { 10_000.0 };
    (v * scale).round() / scale
}

/// `1 B`, `4 KiB`, `1 MiB`.
pub(crate) fn size(n: usize) -> String {
    if n >= 1 << 20 && n.trailing_zeros() >= 20 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.trailing_zeros() >= 10 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// Nanoseconds with a fitting unit.
pub(crate) fn ns(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 1e3 {
        format!("{v:.1} ns")
    } else if v < 1e6 {
        format!("{:.2} us", v / 1e3)
    } else if v < 1e9 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

/// `summary`: reads the output of earlier runs on stdin and prints every target again.
pub(crate) fn summary() {
    let stdin = std::io::stdin();
    let mut rows = Vec::new();
    for line in stdin.lock().lines().map_while(Result::ok) {
        if !line.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["bench"] != "target" {
            continue;
        }
        rows.push(v);
    }
    println!();
    println!("== summary of targets ==");
    let mut met = 0;
    for v in &rows {
        let ok = v["met"].as_bool().unwrap_or(false);
        met += usize::from(ok);
        println!(
            "{}",
            target_line(
                &format!("{} @{} PEs", v["metric"].as_str().unwrap_or("?"), v["pes"]),
                v["value"].as_f64().unwrap_or(f64::NAN),
                v["unit"].as_str().unwrap_or(""),
                v["target"].as_str().unwrap_or("?"),
                ok,
                v["how"].as_str().unwrap_or(""),
            )
        );
    }
    println!("{met} of {} targets met", rows.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(size(1), "1 B");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(ns(12.34), "12.3 ns");
        assert_eq!(ns(1500.0), "1.50 us");
        assert!(Goal::AtMost(1.3).met(1.2) && !Goal::AtLeast(0.9).met(0.8));
        assert_eq!(round(0.123456), 0.1235);
        let r = Report::new(2);
        let line = r.record(
            "put",
            Some(8),
            "bandwidth",
            1.5,
            "GB/s",
            &[("met", json!(true))],
        );
        assert_eq!(
            line,
            r#"{"bench":"put","size":8,"pes":2,"metric":"bandwidth","value":1.5,"unit":"GB/s","met":true}"#
        );
        let v: Value =
            serde_json::from_str(&r.record("x", None, "m", f64::NAN, "ns", &[])).unwrap();
        assert!(v["size"].is_null() && v["value"].is_null());
    }
}
