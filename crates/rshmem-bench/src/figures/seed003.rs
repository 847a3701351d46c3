//! Seed 003 (Coarray Fortran over OpenSHMEM): the programs of `bench/fortran` run by
//! `scripts/bench-caf.sh` on rshmem's libcaf_rshmem and on OpenCoarrays (records tagged
//! `"exp":"caf"`, the runtime in `"runtime"`): 2-D strided transfers naive against the
//! seed's whole-section algorithm, lock contention (LOCK/UNLOCK against a CAS spin lock)
//! and the seed's distributed hash table, and coarray put/get latency and bandwidth beside
//! the C library's `shmem_putmem`/`shmem_getmem` and memcpy from the same run.

use super::{by_pes, by_size, hline, Axis, Figure, Kind, Record, Records, Scale};

/// The experiment tag of the Coarray Fortran records.
const EXP: &str = "caf";

/// The runtimes, as their records name them and as the legends do.
const RUNTIMES: [(&str, &str, Kind); 2] = [
    ("rshmem", "rshmem", Kind::Rshmem),
    ("opencoarrays", "OpenCoarrays", Kind::Peer),
];

/// Elements of the strided section of `caf_rma` (256 x 64 four-byte integers).
const SECTION_BYTES: f64 = 256.0 * 64.0 * 4.0;

/// The smallest image count of the `caf_rma` records (only images 1 and 2 transfer; more
/// images only wait), 2 when there are none.
fn rma_images(r: &Records) -> u64 {
    r.of(EXP)
        .filter(|x| x.bench.starts_with("caf_") && x.pes >= 2)
        .map(|x| x.pes)
        .min()
        .unwrap_or(2)
}

/// Median time or bandwidth of one benchmark of one runtime at `images`, by size.
fn caf(r: &Records, bench: &str, metric: &str, rt: &str, images: u64) -> Vec<(f64, f64)> {
    r.medians(
        EXP,
        |x: &Record| {
            x.bench == bench && x.metric == metric && x.tag("runtime") == rt && x.pes == images
        },
        by_size,
    )
}

/// `pts` with every y multiplied by `k` (unit changes).
fn scaled(pts: Vec<(f64, f64)>, k: f64) -> Vec<(f64, f64)> {
    pts.into_iter().map(|(x, y)| (x, y * k)).collect()
}

/// y at `x` on the log-log line through the points around it (`None` outside them).
fn interpolate(pts: &[(f64, f64)], x: f64) -> Option<f64> {
    if let Some(p) = pts.iter().find(|p| p.0 == x) {
        return Some(p.1);
    }
    let i = pts.iter().position(|p| p.0 > x)?;
    let (a, b) = (pts.get(i.checked_sub(1)?)?, pts[i]);
    if a.0 <= 0.0 || a.1 <= 0.0 || b.1 <= 0.0 {
        return None;
    }
    let t = (x.ln() - a.0.ln()) / (b.0.ln() - a.0.ln());
    Some((a.1.ln() + t * (b.1.ln() - a.1.ln())).exp())
}

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    let n = rma_images(r);

    // (a) 2-D strided transfers: naive loop against the whole-section statement.
    for (op, dir, stmt) in [
        ("put", "into", "s(1:st*256:st, 1:64)[2] = l"),
        ("get", "from", "l = s(1:st*256:st, 1:64)[2]"),
    ] {
        let mut f = Figure::new(
            &format!("seed003_strided_{op}"),
            "seed003",
            &format!(
                "2-D strided {op}, 256 x 64 integers, naive against whole section, {n} images"
            ),
            Axis::new("element stride in dimension 1 (st)", Scale::Pow2),
            Axis::new("time per section (us, median)", Scale::Log),
        )
        .caption(&format!(
            "bench/fortran/caf_rma.f90 under cafrun -n {n}: image 1 moves the 2-D section of \
             256 x 64 four-byte integers (64 KiB) {dir} image 2's coarray with stride st in \
             dimension 1 (seed 003's 2-D strided test): whole section, one statement ({stmt}; \
             in rshmem the seed's 2dim_strided algorithm, strided calls along the base \
             dimension), against the naive loop of one coindexed statement per element. \
             Median over batches of the time per section{}. The reference is the contiguous \
             {op} of 64 KiB from the same run (log-interpolated between the measured sizes).",
            if op == "put" {
                " (a batch ends with sync memory)"
            } else {
                ""
            }
        ));
        f.caf = true;
        f.legend_low = true;
        for (rt, name, kind) in RUNTIMES {
            let sec = caf(r, &format!("caf_strided_{op}"), "time", rt, n);
            let naive = caf(r, &format!("caf_strided_{op}_naive"), "time", rt, n);
            f.add(&format!("{name}, whole section"), kind, sec);
            f.add(&format!("{name}, naive (element by element)"), kind, naive);
        }
        // What the same bytes cost contiguously: the floor a strided transfer approaches.
        let contiguous = caf(r, &format!("caf_{op}"), "time", "rshmem", n);
        let line = hline(&f, interpolate(&contiguous, SECTION_BYTES));
        f.add(
            &format!("rshmem contiguous {op} of the same 64 KiB"),
            Kind::Reference,
            line,
        );
        v.push(f);
    }

    // (b) Lock contention and the distributed hash table, against image count.
    let by_rt = |bench: &'static str, rt: &'static str| {
        r.medians(
            EXP,
            move |x: &Record| x.bench == bench && x.metric == "time" && x.tag("runtime") == rt,
            by_pes,
        )
    };
    let mut f = Figure::new(
        "seed003_locks",
        "seed003",
        "Lock contention: LOCK/UNLOCK (MCS) against a CAS spin lock, by images",
        Axis::new("images", Scale::Count),
        Axis::new("time per lock + unlock pair (us, median)", Scale::Log),
    )
    .caption(
        "bench/fortran/caf_sync.f90 under cafrun -n N: every image repeatedly takes the lock on \
         image 1, increments a counter there and releases it; time per pair over all images \
         together. LOCK/UNLOCK is the runtime's lock (in rshmem the seed's MCS queue lock: \
         one atomic swap to enqueue, waiting on the image's own flag); the spin lock is \
         written in Fortran (atomic_cas to take it, atomic_define to give it back), the \
         seed's reference. Beyond the machine's cores the images are oversubscribed.",
    );
    f.caf = true;
    f.legend_low = true;
    for (rt, name, kind) in RUNTIMES {
        f.add(&format!("{name} LOCK/UNLOCK"), kind, by_rt("lock_mcs", rt));
        f.add(
            &format!("{name} CAS spin lock"),
            kind,
            by_rt("lock_cas", rt),
        );
    }
    v.push(f);

    let mut f = Figure::new(
        "seed003_dht",
        "seed003",
        "Distributed hash table (seed 003): time per update, by images",
        Axis::new("images", Scale::Count),
        Axis::new("time per update (us, median)", Scale::Log),
    )
    .caption(
        "bench/fortran/caf_sync.f90 (dht) under cafrun -n N: every image inserts or counts \
         random keys in a table spread over all images (1024 buckets per image, linear \
         probing), each bucket guarded by a lock on its image (seed 003's hash table); time \
         per update over all images together. The reference is rshmem's LOCK/UNLOCK pair of \
         the lock figure at the same image count: every image on one lock, where the table \
         spreads its locks over the images.",
    );
    f.caf = true;
    for (rt, name, kind) in RUNTIMES {
        f.add(name, kind, by_rt("dht", rt));
    }
    f.add(
        "rshmem LOCK/UNLOCK pair (lock figure)",
        Kind::Reference,
        by_rt("lock_mcs", "rshmem"),
    );
    v.push(f);

    // (c) Contiguous coarray put/get, 8 B to 4 MiB.
    for (op, what, dir) in [
        ("put", "buf(1:n)[2] = loc(1:n)", "into"),
        ("get", "loc(1:n) = buf(1:n)[2]", "from"),
    ] {
        let c_bench = format!("{op}_bw");
        let c = |metric: &'static str| {
            let b = c_bench.clone();
            r.points(
                "cbench",
                move |x| x.bench == b && x.metric == metric && x.tag("impl") == "rshmem",
                by_size,
            )
        };
        let memcpy = |metric: &str| r.memcpy(metric, 8.0, f64::INFINITY);
        let mut f = Figure::new(
            &format!("seed003_{op}_latency"),
            "seed003",
            &format!("Coarray {op} latency, {n} images"),
            Axis::new("message size", Scale::Bytes),
            Axis::new("time per statement (ns, median)", Scale::Log),
        )
        .caption(&format!(
            "bench/fortran/caf_rma.f90 under cafrun -n {n}: image 1 {op}s a contiguous real(8) \
             array section {dir} image 2 ({what}); median over batches of the time per \
             statement{}. References, when the run measured them: rshmem's shmem_{op}mem \
             through the C library (bench/c/shmem_bench.c; the gap is the cost of the \
             coarray layer) and memcpy.",
            if op == "put" {
                " (a batch ends with sync memory)"
            } else {
                ""
            }
        ));
        f.caf = true;
        for (rt, name, kind) in RUNTIMES {
            let pts = scaled(caf(r, &format!("caf_{op}"), "time", rt, n), 1e3);
            f.add(name, kind, pts);
        }
        f.add(
            &format!("rshmem shmem_{op}mem (C)"),
            Kind::Reference,
            c("latency_median"),
        );
        f.add("memcpy (limit)", Kind::Reference, memcpy("latency_median"));
        v.push(f);

        let mut f = Figure::new(
            &format!("seed003_{op}_bandwidth"),
            "seed003",
            &format!("Coarray {op} bandwidth, {n} images"),
            Axis::new("message size", Scale::Bytes),
            Axis::new("bandwidth (GB/s)", Scale::Log),
        )
        .caption(&format!(
            "bench/fortran/caf_rma.f90 under cafrun -n {n}: bytes over the median time per \
             contiguous coindexed {op} ({what}). References, when the run measured them: \
             rshmem's shmem_{op}mem through the C library and memcpy."
        ));
        f.caf = true;
        f.legend_low = true;
        for (rt, name, kind) in RUNTIMES {
            // MB/s in the records; GB/s like the OSU-style figures.
            let pts = scaled(caf(r, &format!("caf_{op}"), "bandwidth", rt, n), 1e-3);
            f.add(name, kind, pts);
        }
        f.add(
            &format!("rshmem shmem_{op}mem (C)"),
            Kind::Reference,
            c("bandwidth"),
        );
        f.add("memcpy (limit)", Kind::Reference, memcpy("bandwidth"));
        v.push(f);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_on_log_log() {
        let pts = [(32768.0, 10.0), (262144.0, 80.0)];
        let y = interpolate(&pts, 65536.0).unwrap();
        assert!((y - 20.0).abs() < 1e-9, "{y}");
        assert_eq!(interpolate(&pts, 32768.0), Some(10.0));
        assert_eq!(interpolate(&pts, 8.0), None);
        assert_eq!(interpolate(&pts, 1e9), None);
    }
}
