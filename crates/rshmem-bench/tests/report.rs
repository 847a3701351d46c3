//! `rshmem-bench report --from`: renders every figure from a recorded quick run
//! (`tests/data/report-quick.jsonl`, JSON lines of `rshmem-bench report --quick`) without
//! measuring anything (the Coarray Fortran records, `"exp":"caf"`, are a quick
//! `scripts/bench-caf.sh` run; the libfabric ones, `"exp":"ofi*"`, a quick
//! `rshmem-bench report --only ofi,ofi_coll,ofi_barrier --sos DIR` run), and checks that each SVG, PNG and `index.html` exists, is not empty
//! and names each of its series.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest the renderer may take (a debug build on a loaded machine).
const BOUND: Duration = Duration::from_secs(120);

/// Every figure of the fixture: a figure that goes missing fails here.
const FIGURES: &[&str] = &[
    "osu_put_latency",
    "osu_put_bandwidth",
    "osu_get_latency",
    "osu_get_bandwidth",
    "osu_small_ops",
    "osu_barrier",
    "osu_broadcast",
    "osu_reduce",
    "ofi_latency",
    "ofi_bandwidth",
    "ofi_small_ops",
    "ofi_barrier",
    "ofi_broadcast",
    "ofi_reduce",
    "seed000_team_create",
    "seed000_team_count",
    "seed000_flat_vs_hier",
    "seed001_rate_put",
    "seed001_rate_get",
    "seed001_rate_fetch",
    "seed001_c_rate_put",
    "seed001_c_rate_get",
    "seed001_c_rate_fetch",
    "seed001_apps",
    "seed002_nbe_rate",
    "seed002_overlap",
    "seed002_bcast",
    "seed003_strided_put",
    "seed003_strided_get",
    "seed003_locks",
    "seed003_dht",
    "seed003_put_latency",
    "seed003_put_bandwidth",
    "seed003_get_latency",
    "seed003_get_bandwidth",
    "seed004_aset_create",
    "seed004_overlap",
];

/// Figures whose fixture records include Open MPI's OSHMEM.
const WITH_OSHMEM: &[&str] = &[
    "osu_put_latency",
    "osu_put_bandwidth",
    "osu_get_latency",
    "osu_get_bandwidth",
    "osu_small_ops",
    "osu_barrier",
    "osu_broadcast",
    "osu_reduce",
    "seed002_nbe_rate",
    "seed001_c_rate_put",
    "seed001_c_rate_get",
    "seed001_c_rate_fetch",
];

/// Series each figure must draw from the fixture (beyond the counts checked for all).
const SERIES: &[(&str, &str)] = &[
    ("seed000_team_create", "create: dup WORLD"),
    ("seed000_team_count", "dup WORLD, 2 PEs"),
    ("seed000_team_count", "dup WORLD, 3 PEs"),
    ("seed000_team_count", "dup WORLD, 4 PEs"),
    ("seed000_team_count", "halve, 4 PEs"),
    ("seed001_rate_put", "one serialized context + lock"),
    ("seed001_rate_get", "one serialized context + lock"),
    ("seed001_rate_fetch", "one serialized context + lock"),
    ("seed001_c_rate_put", "rshmem: serialized context + lock"),
    ("seed001_c_rate_put", "OSHMEM: serialized context + lock"),
    ("seed001_c_rate_get", "OSHMEM: private contexts"),
    ("seed001_c_rate_fetch", "OSHMEM: T single-threaded PEs"),
    ("seed002_nbe_rate", "rshmem (C): put_nbi + quiet"),
    ("seed002_nbe_rate", "OSHMEM (C): put_nbi + quiet"),
];

/// Whether a figure's fixture records include Sandia OpenSHMEM (rshmem's peer over
/// libfabric): the `ofi_` ones.
fn with_sos(id: &str) -> bool {
    id.starts_with("ofi_")
}

/// Figures whose fixture records (a quick `scripts/bench-caf.sh` run) include OpenCoarrays.
const WITH_OPENCOARRAYS: &[&str] = &[
    "seed003_strided_put",
    "seed003_strided_get",
    "seed003_locks",
    "seed003_dht",
    "seed003_put_latency",
    "seed003_put_bandwidth",
    "seed003_get_latency",
    "seed003_get_bandwidth",
];

#[test]
fn quick_report_renders_every_figure_from_the_fixture() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/report-quick.jsonl");
    let out = std::env::temp_dir().join(format!("rshmem-report-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rshmem-bench"))
        .arg("report")
        .arg("--from")
        .arg(&fixture)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rshmem-bench report");
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if t.elapsed() > BOUND {
            let _ = child.kill();
            panic!("rshmem-bench report --from took over {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "report failed: {status}\n{err}");

    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(
        html.contains("Fixture CPU"),
        "the caption names the machine"
    );
    assert!(html.contains("Seed 003"), "seed 003 keeps its place");
    assert!(
        !html.contains("Not drawn yet"),
        "every group is drawn (none pending)"
    );
    for id in FIGURES {
        for ext in ["svg", "png"] {
            let p = out.join(format!("{id}.{ext}"));
            let len = std::fs::metadata(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .len();
            assert!(len > 1000, "{} is nearly empty ({len} bytes)", p.display());
        }
        let png = std::fs::read(out.join(format!("{id}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{id}.png is a PNG");
        // The page's entry: "<figure id=ID>... Series: a; b; c. (<a ..>PNG</a>)".
        let start = html
            .find(&format!("<figure id=\"{id}\">"))
            .unwrap_or_else(|| panic!("index.html has no figure {id}"));
        let entry = &html[start..];
        let entry = &entry[..entry.find("</figure>").unwrap()];
        let series = entry
            .split("Series: ")
            .nth(1)
            .and_then(|s| s.split(". (<a").next())
            .unwrap_or_else(|| panic!("{id}: no series listed"));
        let names: Vec<&str> = series.split("; ").filter(|s| !s.is_empty()).collect();
        assert!(names.len() >= 2, "{id}: only {names:?}");
        let svg = std::fs::read_to_string(out.join(format!("{id}.svg"))).unwrap();
        for n in &names {
            assert!(svg.contains(n), "{id}.svg does not name series {n:?}");
        }
        if WITH_OPENCOARRAYS.contains(id) {
            assert!(
                names.iter().any(|n| n.contains("OpenCoarrays")),
                "{id}: no OpenCoarrays series in {names:?}"
            );
            assert!(
                entry.contains("OpenCoarrays: ") && entry.contains("Compiler: "),
                "{id}: the caption names neither the compiler nor OpenCoarrays"
            );
        }
        for (_, want) in SERIES.iter().filter(|(f, _)| f == id) {
            assert!(
                names.contains(want),
                "{id}: no series {want:?} in {names:?}"
            );
        }
        if with_sos(id) {
            assert!(
                names.iter().any(|n| n.contains("SOS"))
                    && names.iter().any(|n| n.contains("rshmem")),
                "{id}: not both rshmem and SOS in {names:?}"
            );
            assert!(
                entry.contains("SOS: Sandia OpenSHMEM"),
                "{id}: the caption does not name SOS"
            );
        }
        // A figure without OSHMEM says why (the Coarray Fortran ones have OpenCoarrays, the
        // libfabric ones SOS).
        if !id.starts_with("seed003")
            && !with_sos(id)
            && !names.iter().any(|n| n.contains("OSHMEM"))
        {
            assert!(
                entry.contains("no OSHMEM series"),
                "{id}: no OSHMEM series, and the caption does not say so"
            );
        }
        if WITH_OSHMEM.contains(id) {
            assert!(
                names.iter().any(|n| n.contains("OSHMEM")),
                "{id}: no OSHMEM series in {names:?}"
            );
        }
        assert!(
            entry.contains("Machine: "),
            "{id}: the caption names no machine"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
