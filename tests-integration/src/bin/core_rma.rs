//! Remote memory access in rshmem-core, run under `oshrun`: `core_rma <mode>` with mode
//!
//! - `contig`: put/get of 1, 2, 4, 8 and 16-byte elements, counts 0..1000, misaligned
//!   offsets on both sides, to the right neighbour (guards around every range);
//! - `pg`: single-element put/get (p/g) of every element size between every pair of PEs;
//! - `strided`: iput/iget with strides > 1 on both sides, zero and negative strides, an
//!   interleaved layout whose remote extent runs across every PE's block to the end of
//!   the array, and ranges ending exactly at (and one element past) the heap end;
//! - `blocked`: ibput/ibget (OpenSHMEM 1.6 interleaved blocks);
//! - `nbi`: put_nbi/get_nbi to and from every PE, completed by quiet;
//! - `fence`: data put, fence, flag (put or AMO); the receiver sees the data with the flag.
//!
//! Each mode prints `ok <mode> pe=<me>`; every check is an assertion.
#![allow(unsafe_code)]

use rshmem_core::Ctx;
use rshmem_core::{amo, memory, order, p2p, rma, runtime, setup, sync, AmoOp, Cmp, Error};

const SIZES: [usize; 5] = [1, 2, 4, 8, 16];
const GUARD: u8 = 0xA5;

/// Deterministic bytes: the `i`-th byte of stream `seed`.
fn pat(seed: u64, i: usize) -> u8 {
    let x = seed
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    (x ^ (x >> 29) ^ (x >> 43)) as u8
}

fn seed(pe: usize, case: u64) -> u64 {
    (pe as u64) << 32 | case
}

fn stream(seed: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| pat(seed, i)).collect()
}

#[track_caller]
fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first difference at byte {i} of {}: got {:#04x}, want {:#04x}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn malloc(len: usize) -> *mut u8 {
    memory::malloc("shmem_malloc", len).unwrap()
}

fn free(p: *mut u8) {
    memory::free("shmem_free", p).unwrap()
}

fn barrier() {
    sync::barrier_all().unwrap()
}

/// A copy of `len` bytes of this PE's own symmetric memory at `p`.
fn read_local(p: *const u8, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    // SAFETY: callers pass their own symmetric blocks of at least `len` bytes, read
    // between barriers (nobody writes them meanwhile).
    unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), len) };
    v
}

/// Overwrites this PE's own symmetric memory at `p` with `data`.
fn write_local(p: *mut u8, data: &[u8]) {
    // SAFETY: as `read_local`, for writing.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
}

fn put(dest: *mut u8, src: &[u8], pe: usize) {
    // SAFETY: `src` is a live slice of `src.len()` bytes.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_putmem",
            dest,
            src.as_ptr(),
            src.len(),
            pe as i64,
        )
        .unwrap()
    }
}

fn get(dest: &mut [u8], src: *const u8, pe: usize) {
    // SAFETY: `dest` is a live slice of `dest.len()` bytes.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_getmem",
            dest.as_mut_ptr(),
            src,
            dest.len(),
            pe as i64,
        )
        .unwrap()
    }
}

struct Pes {
    me: usize,
    n: usize,
}

impl Pes {
    fn right(&self) -> usize {
        (self.me + 1) % self.n
    }
    fn left(&self) -> usize {
        (self.me + self.n - 1) % self.n
    }
}

fn contig(p: &Pes) {
    const MAXB: usize = 16 * 1000 + 64;
    let buf = malloc(MAXB);
    let mut case = 0u64;
    for size in SIZES {
        for count in [0usize, 1, 3, 64, 1000] {
            for off in [0usize, 1, 3, 8] {
                case += 1;
                let nbytes = size * count;
                let soff = (off * 5 + 3) % 16;
                write_local(buf, &vec![GUARD; MAXB]);
                barrier();
                let src = stream(seed(p.me, case), soff + nbytes);
                put(buf.wrapping_add(off), &src[soff..], p.right());
                barrier();
                let mut want = vec![GUARD; MAXB];
                want[off..off + nbytes]
                    .copy_from_slice(&stream(seed(p.left(), case), soff + nbytes)[soff..]);
                let what = format!(
                    "put size={size} count={count} off={off} from PE {}",
                    p.left()
                );
                same(&read_local(buf, MAXB), &want, &what);

                // The right neighbour's block now holds this PE's data.
                let goff = (off * 7 + 1) % 16;
                let mut dst = vec![0x5Au8; nbytes + 32];
                get(
                    &mut dst[goff..goff + nbytes],
                    buf.wrapping_add(off),
                    p.right(),
                );
                let mut want = vec![0x5Au8; nbytes + 32];
                want[goff..goff + nbytes].copy_from_slice(&src[soff..]);
                same(
                    &dst,
                    &want,
                    &format!("get size={size} count={count} off={off}"),
                );
                barrier();
            }
        }
    }
    // Zero bytes is a no-op whatever the other arguments are.
    // SAFETY: nothing is read or written for zero bytes.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_putmem",
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            p.n as i64,
        )
        .unwrap();
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_getmem",
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            -1,
        )
        .unwrap();
        rma::ctx_put_nbi(
            Ctx::default_ctx(),
            "shmem_putmem_nbi",
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            0,
        )
        .unwrap();
        rma::ctx_get_nbi(
            Ctx::default_ctx(),
            "shmem_getmem_nbi",
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            0,
        )
        .unwrap();
    }
    barrier();
    free(buf);
}

/// Single elements (`shmem_p`/`shmem_g`) of every size, between every pair of PEs.
fn pg(p: &Pes) {
    let elem =
        |from: usize, to: usize, size: usize| stream(seed(from * 131 + to, size as u64), size);
    for size in SIZES {
        let arr = malloc(p.n * size);
        for to in 0..p.n {
            put(arr.wrapping_add(p.me * size), &elem(p.me, to, size), to);
        }
        barrier();
        let got = read_local(arr, p.n * size);
        for from in 0..p.n {
            same(
                &got[from * size..(from + 1) * size],
                &elem(from, p.me, size),
                &format!("p size={size} from PE {from}"),
            );
        }
        for pe in 0..p.n {
            for i in 0..p.n {
                let mut v = vec![0u8; size];
                get(&mut v, arr.wrapping_add(i * size), pe);
                same(
                    &v,
                    &elem(i, pe, size),
                    &format!("g size={size} element {i} of PE {pe}"),
                );
            }
        }
        barrier();
        free(arr);
    }
}

/// `dest[dbase + i*dst] = src[sbase + i*sst]` for `n` elements of `s` bytes.
#[allow(clippy::too_many_arguments)]
fn model_strided(
    dest: &mut [u8],
    dbase: usize,
    src: &[u8],
    sbase: usize,
    dst: isize,
    sst: isize,
    n: usize,
    s: usize,
) {
    for i in 0..n as isize {
        let d = (dbase as isize + i * dst) as usize * s;
        let so = (sbase as isize + i * sst) as usize * s;
        dest[d..d + s].copy_from_slice(&src[so..so + s]);
    }
}

/// First element index so that `n` elements at `stride` stay at index >= 1.
fn base(stride: isize, n: usize) -> usize {
    1 + if stride < 0 {
        (n - 1) * stride.unsigned_abs()
    } else {
        0
    }
}

#[allow(clippy::too_many_arguments)]
fn iput(
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    n: usize,
    s: usize,
    pe: i64,
) -> rshmem_core::Result<()> {
    // SAFETY: callers pass `src` inside a local buffer that holds every strided element.
    unsafe {
        rma::ctx_strided(
            Ctx::default_ctx(),
            "shmem_iput",
            true,
            rma::Blocks {
                dest,
                src,
                dst,
                sst,
                block: 1,
                count: n,
                size: s,
            },
            pe,
        )
    }
}

#[allow(clippy::too_many_arguments)]
fn iget(
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    n: usize,
    s: usize,
    pe: i64,
) -> rshmem_core::Result<()> {
    // SAFETY: callers pass `dest` inside a local buffer that holds every strided element.
    unsafe {
        rma::ctx_strided(
            Ctx::default_ctx(),
            "shmem_iget",
            false,
            rma::Blocks {
                dest,
                src,
                dst,
                sst,
                block: 1,
                count: n,
                size: s,
            },
            pe,
        )
    }
}

fn strided(p: &Pes) {
    const CAP: usize = 128;
    let cases: [(isize, isize, usize); 16] = [
        (1, 1, 7),
        (2, 1, 7),
        (1, 2, 7),
        (3, 2, 33),
        (2, 3, 33),
        (5, 1, 20),
        (1, 5, 20),
        (0, 1, 6),
        (1, 0, 6),
        (-1, 1, 9),
        (1, -1, 9),
        (-2, -3, 11),
        (-3, 2, 11),
        (4, 4, 1),
        (7, -7, 1),
        (3, 3, 0),
    ];
    let r = malloc(CAP * 16);
    let mut case = 100u64;
    for s in SIZES {
        for (dst, sst, ne) in cases {
            case += 1;
            let what = format!("size={s} dst={dst} sst={sst} nelems={ne}");
            let (db, sb) = if ne == 0 {
                (1, 1)
            } else {
                (base(dst, ne), base(sst, ne))
            };
            write_local(r, &vec![GUARD; CAP * s]);
            barrier();
            let src = stream(seed(p.me, case), CAP * s);
            iput(
                r.wrapping_add(db * s),
                src[sb * s..].as_ptr(),
                dst,
                sst,
                ne,
                s,
                p.right() as i64,
            )
            .unwrap();
            barrier();
            let model_r = |from: usize| {
                let mut m = vec![GUARD; CAP * s];
                model_strided(
                    &mut m,
                    db,
                    &stream(seed(from, case), CAP * s),
                    sb,
                    dst,
                    sst,
                    ne,
                    s,
                );
                m
            };
            same(
                &read_local(r, CAP * s),
                &model_r(p.left()),
                &format!("iput {what}"),
            );

            // iget from the right neighbour, whose block holds this PE's data.
            let mut local = vec![0x3Cu8; CAP * s];
            iget(
                local[db * s..].as_mut_ptr(),
                r.wrapping_add(sb * s),
                dst,
                sst,
                ne,
                s,
                p.right() as i64,
            )
            .unwrap();
            let mut want = vec![0x3Cu8; CAP * s];
            model_strided(&mut want, db, &model_r(p.me), sb, dst, sst, ne, s);
            same(&local, &want, &format!("iget {what}"));
            barrier();
        }
    }
    free(r);

    // Interleaved: PE me's elements go to me, me+n, me+2n, ... of every PE's array, so
    // the remote extent runs across every PE's block (the last PE's to the array end).
    const B: usize = 6;
    for s in SIZES {
        let a = malloc(p.n * B * s);
        write_local(a, &vec![GUARD; p.n * B * s]);
        barrier();
        let src = stream(seed(p.me, 777 + s as u64), 2 * B * s);
        for to in 0..p.n {
            iput(
                a.wrapping_add(p.me * s),
                src.as_ptr(),
                p.n as isize,
                2,
                B,
                s,
                to as i64,
            )
            .unwrap();
        }
        barrier();
        let got = read_local(a, p.n * B * s);
        for k in 0..p.n * B {
            let (from, j) = (k % p.n, k / p.n);
            let want = &stream(seed(from, 777 + s as u64), 2 * B * s)[2 * j * s..(2 * j + 1) * s];
            same(
                &got[k * s..(k + 1) * s],
                want,
                &format!("interleaved iput size={s} element {k}"),
            );
        }
        // Gather this PE's elements back from the right neighbour, every third slot.
        let mut local = vec![0u8; 3 * B * s];
        iget(
            local.as_mut_ptr(),
            a.wrapping_add(p.me * s),
            3,
            p.n as isize,
            B,
            s,
            p.right() as i64,
        )
        .unwrap();
        for j in 0..B {
            same(
                &local[3 * j * s..(3 * j + 1) * s],
                &src[2 * j * s..(2 * j + 1) * s],
                &format!("interleaved iget size={s} element {j}"),
            );
        }
        barrier();
        free(a);
    }

    // Extents ending exactly at the heap end are in range; one element more is not, and
    // then nothing at all is written.
    let (_, hi) = runtime::try_runtime().unwrap().heap_range();
    for s in SIZES {
        let (d, k) = (3usize, 4usize);
        let first = hi - (1 + (k - 1) * d) * s;
        let src = stream(seed(p.me, 900 + s as u64), 2 * k * s);
        iput(
            first as *mut u8,
            src.as_ptr(),
            d as isize,
            2,
            k,
            s,
            p.right() as i64,
        )
        .unwrap();
        let mut back = vec![0u8; k * s];
        iget(
            back.as_mut_ptr(),
            first as *const u8,
            1,
            d as isize,
            k,
            s,
            p.right() as i64,
        )
        .unwrap();
        for j in 0..k {
            same(
                &back[j * s..(j + 1) * s],
                &src[2 * j * s..(2 * j + 1) * s],
                "iput to the heap end",
            );
        }
        let marker = vec![0xEEu8; s];
        put((first + s) as *mut u8, &marker, p.right());
        let e = iput(
            (first + s) as *mut u8,
            src.as_ptr(),
            d as isize,
            2,
            k,
            s,
            p.right() as i64,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotSymmetric {
                    routine: "shmem_iput",
                    arg: "dest",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = iget(
            back.as_mut_ptr(),
            (first + s) as *const u8,
            1,
            d as isize,
            k,
            s,
            p.right() as i64,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotSymmetric {
                    routine: "shmem_iget",
                    arg: "source",
                    ..
                }
            ),
            "{e:?}"
        );
        let mut m = vec![0u8; s];
        get(&mut m, (first + s) as *const u8, p.right());
        same(&m, &marker, "a rejected iput writes nothing");
        // A negative stride reaching below the heap start is rejected too.
        let (lo, _) = runtime::try_runtime().unwrap().heap_range();
        let e = iput(
            (lo + s) as *mut u8,
            src.as_ptr(),
            -2,
            1,
            3,
            s,
            p.right() as i64,
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::NotSymmetric { arg: "dest", .. }),
            "{e:?}"
        );
        barrier();
    }
}

#[allow(clippy::too_many_arguments)]
fn blocked(
    is_put: bool,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    s: usize,
    pe: usize,
) {
    let routine = if is_put { "shmem_ibput" } else { "shmem_ibget" };
    // SAFETY: callers pass local buffers that hold every block.
    unsafe {
        rma::ctx_strided(
            Ctx::default_ctx(),
            routine,
            is_put,
            rma::Blocks {
                dest,
                src,
                dst,
                sst,
                block: bsize,
                count: nblocks,
                size: s,
            },
            pe as i64,
        )
        .unwrap()
    }
}

#[allow(clippy::too_many_arguments)]
fn model_blocked(
    dest: &mut [u8],
    dbase: usize,
    src: &[u8],
    sbase: usize,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    s: usize,
) {
    for b in 0..nblocks as isize {
        for j in 0..bsize as isize {
            let d = (dbase as isize + b * dst + j) as usize * s;
            let so = (sbase as isize + b * sst + j) as usize * s;
            dest[d..d + s].copy_from_slice(&src[so..so + s]);
        }
    }
}

fn blocked_mode(p: &Pes) {
    const CAP: usize = 96;
    let cases: [(isize, isize, usize, usize); 8] = [
        (4, 3, 3, 5),
        (8, 2, 2, 6),
        (2, 8, 2, 3),
        (5, 5, 5, 4),
        (3, 1, 1, 10),
        (-4, 3, 3, 4),
        (6, 6, 0, 3),
        (6, 6, 3, 0),
    ];
    let r = malloc(CAP * 16);
    let mut case = 2000u64;
    for s in SIZES {
        for (dst, sst, bs, nb) in cases {
            case += 1;
            let what = format!("size={s} dst={dst} sst={sst} bsize={bs} nblocks={nb}");
            let db = 1 + if dst < 0 {
                nb.saturating_sub(1) * dst.unsigned_abs()
            } else {
                0
            };
            let sb = 1 + if sst < 0 {
                nb.saturating_sub(1) * sst.unsigned_abs()
            } else {
                0
            };
            write_local(r, &vec![GUARD; CAP * s]);
            barrier();
            let src = stream(seed(p.me, case), CAP * s);
            blocked(
                true,
                r.wrapping_add(db * s),
                src[sb * s..].as_ptr(),
                dst,
                sst,
                bs,
                nb,
                s,
                p.right(),
            );
            barrier();
            let model_r = |from: usize| {
                let mut m = vec![GUARD; CAP * s];
                model_blocked(
                    &mut m,
                    db,
                    &stream(seed(from, case), CAP * s),
                    sb,
                    dst,
                    sst,
                    bs,
                    nb,
                    s,
                );
                m
            };
            same(
                &read_local(r, CAP * s),
                &model_r(p.left()),
                &format!("ibput {what}"),
            );
            let mut local = vec![0x3Cu8; CAP * s];
            blocked(
                false,
                local[db * s..].as_mut_ptr(),
                r.wrapping_add(sb * s),
                dst,
                sst,
                bs,
                nb,
                s,
                p.right(),
            );
            let mut want = vec![0x3Cu8; CAP * s];
            model_blocked(&mut want, db, &model_r(p.me), sb, dst, sst, bs, nb, s);
            same(&local, &want, &format!("ibget {what}"));
            barrier();
        }
    }
    free(r);
}

fn nbi(p: &Pes) {
    const CHUNKS: [usize; 9] = [1, 2, 4, 8, 16, 3, 61, 1000, 3004];
    const SL: usize = 4099;
    let slots = malloc(p.n * SL);
    for round in 0..3u64 {
        // Every PE writes its slot on every PE, in chunks, completed by one quiet.
        let srcs: Vec<Vec<u8>> = (0..p.n)
            .map(|to| stream(seed(p.me, round * 100 + to as u64), SL))
            .collect();
        for (to, src) in srcs.iter().enumerate() {
            let mut off = 0;
            for c in CHUNKS {
                // SAFETY: `src` lives until after the quiet below and is not modified.
                unsafe {
                    rma::ctx_put_nbi(
                        Ctx::default_ctx(),
                        "shmem_putmem_nbi",
                        slots.wrapping_add(p.me * SL + off),
                        src[off..].as_ptr(),
                        c,
                        to as i64,
                    )
                    .unwrap()
                };
                off += c;
            }
        }
        order::quiet().unwrap();
        barrier();
        let got = read_local(slots, p.n * SL);
        for from in 0..p.n {
            let want = stream(seed(from, round * 100 + p.me as u64), SL);
            same(
                &got[from * SL..(from + 1) * SL],
                &want,
                &format!("put_nbi round {round} from PE {from}"),
            );
        }
        // Read every PE's whole array back with get_nbi, completed by one quiet.
        let mut dsts: Vec<Vec<u8>> = vec![vec![0u8; p.n * SL]; p.n];
        for (pe, d) in dsts.iter_mut().enumerate() {
            let mut off = 0;
            while off < p.n * SL {
                let c = CHUNKS[off % CHUNKS.len()].min(p.n * SL - off);
                // SAFETY: `d` stays alive and untouched until after the quiet below.
                unsafe {
                    rma::ctx_get_nbi(
                        Ctx::default_ctx(),
                        "shmem_getmem_nbi",
                        d[off..].as_mut_ptr(),
                        slots.wrapping_add(off),
                        c,
                        pe as i64,
                    )
                    .unwrap()
                };
                off += c;
            }
        }
        order::quiet().unwrap();
        for (pe, d) in dsts.iter().enumerate() {
            for from in 0..p.n {
                let want = stream(seed(from, round * 100 + pe as u64), SL);
                same(
                    &d[from * SL..(from + 1) * SL],
                    &want,
                    &format!("get_nbi round {round} PE {pe} slot {from}"),
                );
            }
        }
        barrier();
    }
    free(slots);
}

fn fence_mode(p: &Pes) {
    const DL: usize = 32 << 10;
    const ITERS: u64 = 200;
    let data = malloc(DL);
    let flag = memory::calloc("shmem_calloc", 1, 8).unwrap() as *mut u64;
    let ack = memory::calloc("shmem_calloc", 1, 8).unwrap() as *mut u64;
    for it in 1..=ITERS {
        // The right neighbour has consumed the previous round.
        // SAFETY: `ack` is a symmetric, aligned u64.
        unsafe { p2p::wait_until("shmem_wait_until", ack, Cmp::Ge, it - 1).unwrap() };
        let src = stream(seed(p.me, it), DL);
        put(data, &src, p.right());
        order::fence().unwrap();
        if it & 1 == 0 {
            put(flag.cast(), &it.to_ne_bytes(), p.right());
        } else {
            // SAFETY: `flag` is a symmetric, aligned u64.
            unsafe {
                amo::ctx_atomic(
                    Ctx::default_ctx(),
                    "shmem_atomic_set",
                    flag,
                    AmoOp::Set(it),
                    p.right() as i64,
                )
                .unwrap()
            };
        }
        // SAFETY: as above.
        unsafe { p2p::wait_until("shmem_wait_until", flag, Cmp::Ge, it).unwrap() };
        same(
            &read_local(data, DL),
            &stream(seed(p.left(), it), DL),
            &format!("fence round {it}: data behind the flag"),
        );
        // SAFETY: as above.
        unsafe {
            amo::ctx_atomic(
                Ctx::default_ctx(),
                "shmem_atomic_set",
                ack,
                AmoOp::Set(it),
                p.left() as i64,
            )
            .unwrap()
        };
    }
    barrier();
    memory::free("shmem_free", flag.cast()).unwrap();
    memory::free("shmem_free", ack.cast()).unwrap();
    free(data);
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let p = Pes {
        me: setup::my_pe().unwrap(),
        n: setup::n_pes().unwrap(),
    };
    match mode.as_str() {
        "contig" => contig(&p),
        "pg" => pg(&p),
        "strided" => strided(&p),
        "blocked" => blocked_mode(&p),
        "nbi" => nbi(&p),
        "fence" => fence_mode(&p),
        other => panic!("usage: core_rma contig|pg|strided|blocked|nbi|fence (got {other:?})"),
    }
    println!("ok {mode} pe={}", p.me);
    rshmem_core::finalize();
}
