//! Flat WORLD sum reductions by algorithm, each checked for exact sums before it is timed.

use rshmem_core::algo::DataAlg;
use rshmem_core::coll::{self as core_coll, Elem, ReduceOp};
use rshmem_core::team::Team;
use rshmem_core::{setup, sync};

use crate::report::{self, Report};
use crate::stats::{interleaved_fixed, Body, Lat};

use super::{batch, ok, sizes, Effort};

/// An element type of the algorithm comparisons.
pub(super) trait Num: Elem + From<i32> + PartialEq + std::fmt::Debug {
    /// Type name in tables and bench names.
    const NAME: &'static str;
    /// The OpenSHMEM routine it stands for (in error messages).
    const ROUTINE: &'static str;
}

impl Num for i32 {
    const NAME: &'static str = "i32";
    const ROUTINE: &'static str = "shmem_int32_sum_reduce";
}

impl Num for f64 {
    const NAME: &'static str = "f64";
    const ROUTINE: &'static str = "shmem_double_sum_reduce";
}

/// Reduction algorithms compared on flat WORLD; Shm first, the reference of the ratios.
const ALGS: [(DataAlg, &str); 4] = [
    (DataAlg::Shm, "shm"),
    (DataAlg::RecursiveDoubling, "rd"),
    (DataAlg::Ring, "ring"),
    (DataAlg::Linear, "linear"),
];

/// Sum reduction of `n` elements of `T` over `team` with `alg`, `src` into `dst`.
///
/// # Safety
/// `dst` and `src` are symmetric blocks of at least `n` elements of `T`, aligned for `T`,
/// identical or disjoint, that nothing else touches during the call; every member of
/// `team` calls this in step.
pub(super) unsafe fn sum<T: Num>(
    team: &Team,
    dst: *mut u8,
    src: *const u8,
    n: usize,
    alg: DataAlg,
) {
    // SAFETY: forwarded contract.
    ok(unsafe {
        core_coll::reduce_with::<T>(
            T::ROUTINE,
            team,
            dst.cast(),
            src.cast(),
            n,
            ReduceOp::Sum,
            alg,
        )
    });
}

/// Before any timing, stops the job unless every variant gives the exact sums: PE p
/// contributes `p + 1 + i` in element i (exact in `f64` too, so every algorithm must give
/// the same bits), checked at 1, 3, 1031 and `max` elements, and nothing is written past
/// the count. Leaves the pattern in `src`.
pub(super) fn verify<T: Num>(
    me: usize,
    npes: usize,
    src: *mut u8,
    dst: *mut u8,
    max: usize,
    variants: &[(&str, &dyn Fn(usize))],
) {
    {
        // SAFETY: `src` holds `max` elements of `T`, 4096-aligned, and no collective reads
        // it until the barrier below; the slice dies before it.
        let s = unsafe { std::slice::from_raw_parts_mut(src.cast::<T>(), max) };
        for (i, v) in s.iter_mut().enumerate() {
            *v = T::from((me + 1 + i) as i32);
        }
    }
    let want = |i: usize| T::from((npes * (npes + 1) / 2 + npes * i) as i32);
    let mut counts = vec![1, 3, 1031, max];
    counts.retain(|&c| c <= max);
    counts.dedup();
    for &count in &counts {
        for (name, f) in variants {
            // SAFETY: `dst` holds `max` elements of `T`; no collective touches it until the
            // barrier below.
            unsafe { std::ptr::write_bytes(dst.cast::<T>(), 0, max) };
            ok(sync::barrier_all());
            f(count);
            // SAFETY: the variant ended with a sync of every team whose members write our
            // `dst` (message-passing algorithms write only their own), and nothing writes
            // it until the next barrier; the slice dies before that.
            let d = unsafe { std::slice::from_raw_parts(dst.cast::<T>(), max) };
            let bad = (0..count)
                .find(|&i| d[i] != want(i))
                .map(|i| (i, want(i)))
                .or_else(|| (count < max && d[count] != T::from(0)).then(|| (count, T::from(0))));
            if let Some((i, w)) = bad {
                eprintln!(
                    "rshmem-bench coll: PE {me}: {name} sum reduction of {count} {} gives {:?} at element {i}, not {w:?}",
                    T::NAME,
                    d[i]
                );
                setup::global_exit(1);
            }
            ok(sync::barrier_all());
        }
    }
}

/// Per-iteration bodies of `fs`, each running `f(n)` `k` times.
pub(super) fn bodies_of<'a>(
    fs: &'a [&'a dyn Fn(usize)],
    n: usize,
) -> Vec<Box<dyn FnMut(u64) + 'a>> {
    fs.iter()
        .map(|&f| Box::new(move |k: u64| (0..k).for_each(|_| f(n))) as Box<dyn FnMut(u64) + 'a>)
        .collect()
}

/// Flat WORLD sum reduction of `T` by every algorithm of [`ALGS`], one element to
/// `max_size`, interleaved batch by batch; ratios to Shm and the size from which ring
/// beats recursive doubling (seed 000, Fig. 4).
#[allow(clippy::too_many_arguments)]
pub(super) fn by_algorithm<T: Num>(
    r: &Report,
    e: &Effort,
    world: &Team,
    me: usize,
    npes: usize,
    src: *mut u8,
    dst: *mut u8,
    max_size: usize,
) {
    let sz = std::mem::size_of::<T>();
    // SAFETY (every closure): `src` and `dst` are distinct symmetric blocks of at least
    // `max_size` bytes, 4096-aligned, that nothing else touches during the collectives;
    // every PE of WORLD runs the same calls in the same order.
    let run = |alg: DataAlg| {
        move |n: usize| {
            // SAFETY: see above; `n <= max_size / size_of::<T>()`.
            unsafe { sum::<T>(world, dst, src, n, alg) }
        }
    };
    let fs = ALGS.map(|(alg, _)| run(alg));
    let dyns: Vec<&dyn Fn(usize)> = fs.iter().map(|f| f as &dyn Fn(usize)).collect();
    let variants: Vec<(&str, &dyn Fn(usize))> = ALGS
        .iter()
        .zip(&dyns)
        .map(|(&(_, name), &f)| (name, f))
        .collect();
    verify::<T>(me, npes, src, dst, max_size / sz, &variants);

    let sizes = sizes(sz, max_size);
    let mut lat: Vec<Vec<Lat>> = Vec::new();
    for &n in &sizes {
        let mut boxed = bodies_of(&dyns, n / sz);
        let mut bodies: Vec<Body<'_>> = boxed.iter_mut().map(|b| &mut **b as Body<'_>).collect();
        let t = interleaved_fixed(&mut bodies, batch(n), e.warmup, e.samples);
        lat.push(t.iter().map(|x| Lat::of(x)).collect());
    }
    ok(sync::barrier_all());
    if me != 0 {
        return;
    }
    let ty = T::NAME;
    r.section(&format!(
        "sum reduction {ty} on flat WORLD by algorithm, {npes} PEs, latency median and ratio to shm \
         ({} batches per size, the four interleaved)",
        e.samples
    ));
    r.line(format!(
        "{:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>7}  {:>8}  {:>7}  {:>7}",
        "size", "shm", "rd", "ring", "linear", "rd/shm", "ring/shm", "lin/shm", "ring/rd"
    ));
    // Sizes at which ring beats recursive doubling (median).
    let ring_wins: Vec<bool> = lat.iter().map(|l| l[2].median < l[1].median).collect();
    for (i, &n) in sizes.iter().enumerate() {
        let l = &lat[i];
        r.line(format!(
            "{:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>7.2}  {:>8.2}  {:>7.2}  {:>7.2}{}",
            report::size(n),
            report::ns(l[0].median),
            report::ns(l[1].median),
            report::ns(l[2].median),
            report::ns(l[3].median),
            l[1].median / l[0].median,
            l[2].median / l[0].median,
            l[3].median / l[0].median,
            l[2].median / l[1].median,
            if ring_wins[i] { "  ring < rd" } else { "" }
        ));
        for (k, (_, name)) in ALGS.iter().enumerate() {
            let bench = format!("reduce_sum_{ty}_{name}");
            r.json(&bench, Some(n), "latency_median", l[k].median, "ns");
            r.json(&bench, Some(n), "latency_min", l[k].min, "ns");
            r.json(
                &bench,
                Some(n),
                "ratio_to_shm",
                l[k].median / l[0].median,
                "x",
            );
        }
        r.json(
            &format!("reduce_sum_{ty}_rd_vs_ring"),
            Some(n),
            "ratio_ring_to_rd",
            l[2].median / l[1].median,
            "x",
        );
    }
    // First size where ring beats RD, and the size from which it beats it at every size.
    let first = ring_wins.iter().position(|&w| w).map(|i| sizes[i]);
    let from = (0..sizes.len())
        .rev()
        .take_while(|&i| ring_wins[i])
        .last()
        .map(|i| sizes[i]);
    // Medians within a few percent are a coin toss (at 2 PEs both move n bytes per PE):
    // also the first size where ring wins by at least 5%.
    let clear = lat
        .iter()
        .position(|l| l[2].median <= 0.95 * l[1].median)
        .map(|i| sizes[i]);
    let show = |s: Option<usize>| s.map_or("never (up to the largest size)".into(), report::size);
    r.line(format!(
        "rd vs ring crossover ({ty}, {npes} PEs): ring first beats rd at {}; ring ahead at every size from {}; \
         ring first ahead by 5% at {}",
        show(first),
        show(from),
        show(clear)
    ));
    let bytes = |s: Option<usize>| s.map_or(f64::NAN, |s| s as f64);
    let bench = format!("reduce_sum_{ty}_rd_vs_ring");
    r.json(
        &bench,
        None,
        "crossover_first_ring_faster",
        bytes(first),
        "B",
    );
    r.json(&bench, None, "crossover_ring_faster_from", bytes(from), "B");
    r.json(
        &bench,
        None,
        "crossover_ring_faster_by_5pct",
        bytes(clear),
        "B",
    );
}
