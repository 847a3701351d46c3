//! Seed 001 (contexts and threads): message rate against threads per PE with shared,
//! serialized and private contexts beside as many single-threaded PEs (`rshmem-bench threads`), and the
//! halo, ISx all-to-all and Mandelbrot kernels (`rshmem-bench apps`); the same rates from
//! C (`bench/c/shmem_ctx.c`) on rshmem and on Open MPI's OSHMEM.

use super::{hline, Axis, Figure, Kind, Records, Scale};

fn threads(x: &super::Record) -> Option<f64> {
    x.num("threads")
}

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    for (bench, id, title) in [
        (
            "mt_put",
            "seed001_rate_put",
            "8-byte put message rate by threads per PE",
        ),
        (
            "mt_get",
            "seed001_rate_get",
            "8-byte get message rate by threads per PE",
        ),
        (
            "mt_atomic_fetch",
            "seed001_rate_fetch",
            "Atomic fetch-add message rate by threads per PE",
        ),
    ] {
        let mut f = Figure::new(
            id,
            "seed001",
            title,
            Axis::new("threads per PE (T)", Scale::Count),
            Axis::new("message rate of the job (Mmsg/s)", Scale::Linear),
        )
        .caption(
            "rshmem-bench threads --threads T under oshrun -np 2T: T threads of PE 0 to PE T \
             sharing the default context; sharing one SHMEM_CTX_SERIALIZED context, each call \
             on it made under the program's own mutex (the attribute's contract); each on a \
             SHMEM_CTX_PRIVATE context of its own; against T single-threaded PEs doing the \
             same (the seed's reference). Rust, so no OSHMEM series here: the C figures \
             below run one program on both libraries.",
        );
        for (metric, name, kind) in [
            ("rate_shared", "shared (default) context", Kind::Rshmem),
            (
                "rate_serialized",
                "one serialized context + lock",
                Kind::Rshmem,
            ),
            ("rate_private", "private contexts", Kind::Rshmem),
            (
                "rate_pes",
                "T single-threaded PEs (reference)",
                Kind::Reference,
            ),
        ] {
            let pts = r.points(
                "threads",
                |x| x.bench == bench && x.metric == metric && x.size == Some(8.0),
                threads,
            );
            f.add(name, kind, pts);
        }
        v.push(f);
    }
    v.extend(c_rates(r));

    let mut f = Figure::new(
        "seed001_apps",
        "seed001",
        "Kernels: multiple contexts over a single context, by threads",
        Axis::new("threads (1 PE)", Scale::Count),
        Axis::new("speed-up of multiple contexts over one (x)", Scale::Linear),
    )
    .caption(
        "rshmem-bench apps --threads T on 1 PE: 3-D halo exchange (largest size), ISx-style \
         all-to-all key exchange and Mandelbrot with work stealing, each run with all threads \
         on one context and with a context per thread; above 1, contexts pay. The kernels \
         are written against rshmem's Rust API: no OSHMEM series.",
    );
    let halo_size = r
        .of("apps")
        .filter(|x| x.bench == "app_halo3d")
        .filter_map(|x| x.size)
        .fold(0.0, f64::max);
    for (bench, name) in [
        ("app_halo3d", "halo 3-D"),
        ("app_isx", "ISx all-to-all"),
        ("app_mandelbrot", "Mandelbrot"),
    ] {
        let pts = r.points(
            "apps",
            |x| {
                x.bench == bench
                    && x.metric == "speedup_multi_vs_single"
                    && (bench != "app_halo3d" || x.size == Some(halo_size))
            },
            threads,
        );
        f.add(name, Kind::Rshmem, pts);
    }
    let one = hline(&f, Some(1.0));
    f.add("1 (no gain)", Kind::Reference, one);
    v.push(f);
    v
}

/// The rates of `bench/c/shmem_ctx.c`: one program, rshmem beside OSHMEM.
fn c_rates(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    for (bench, id, what) in [
        ("mt_put", "seed001_c_rate_put", "8-byte put"),
        ("mt_get", "seed001_c_rate_get", "8-byte get"),
        (
            "mt_atomic_fetch",
            "seed001_c_rate_fetch",
            "Atomic fetch-add",
        ),
    ] {
        let mut f = Figure::new(
            id,
            "seed001",
            &format!("{what} message rate by threads per PE, C on rshmem and OSHMEM"),
            Axis::new("threads per PE (T)", Scale::Count),
            Axis::new("message rate of the job (Mmsg/s)", Scale::Linear),
        )
        .caption(
            "bench/c/shmem_ctx.c --threads T under each library's oshrun -np 2T (the figure \
             above, written in C so that one program runs on both): T POSIX threads of PE 0 to \
             PE T on SHMEM_CTX_DEFAULT, on one SHMEM_CTX_SERIALIZED context under the \
             program's mutex, each on a SHMEM_CTX_PRIVATE context, against T single-threaded \
             PEs; windows of 64 then shmem_ctx_quiet; long fetch-adds. PEs that do not issue \
             wait in shmem_long_wait_until (OSHMEM's user contexts stall on a target that \
             sleeps): rshmem's wait backs off to sleeping, OSHMEM's polls and keeps a core \
             busy, which on a machine with few cores weighs on its thread series.",
        );
        f.wants_peer = true;
        for (imp, lib, kind) in [
            ("rshmem", "rshmem", Kind::Rshmem),
            ("oshmem", "OSHMEM", Kind::Peer),
        ] {
            for (metric, name) in [
                ("rate_shared", "shared context"),
                ("rate_serialized", "serialized context + lock"),
                ("rate_private", "private contexts"),
            ] {
                let pts = r.points(
                    "cctx",
                    |x| x.bench == bench && x.metric == metric && x.tag("impl") == imp,
                    threads,
                );
                f.add(&format!("{lib}: {name}"), kind, pts);
            }
        }
        for (imp, lib) in [("rshmem", "rshmem"), ("oshmem", "OSHMEM")] {
            let pts = r.points(
                "cctx",
                |x| x.bench == bench && x.metric == "rate_pes" && x.tag("impl") == imp,
                threads,
            );
            f.add(
                &format!("{lib}: T single-threaded PEs"),
                Kind::Reference,
                pts,
            );
        }
        v.push(f);
    }
    v
}
