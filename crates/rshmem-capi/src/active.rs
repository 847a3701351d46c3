//! The deprecated active-set collectives (`shmem_barrier`, 4-argument `shmem_sync`,
//! `shmem_{broadcast,collect,fcollect,alltoall,alltoalls}{32,64}`,
//! `shmem_TYPENAME_OP_to_all`).
//!
//! An active set (`PE_start`, `2^logPE_stride`, `PE_size`) is collective over its own
//! members only, so it cannot borrow a core team (creating one is collective over the
//! parent). Instead every PE owns a small symmetric array made at `shmem_init`
//! (collectively over WORLD): one arrival counter per sender PE, plus one word publishing
//! this PE's contribution to a `collect`. The barrier is a dissemination barrier whose
//! signals are counted per (sender, receiver) pair: two PEs run the active-set
//! collectives they share in the same order (the spec's requirement), and each side
//! computes the same schedule, so the k-th signal from `s` a PE waits for is the k-th
//! one `s` sends to it, whatever other active sets either belongs to meanwhile. Data moves
//! by blocking gets from the members' source buffers between two barriers. The user's
//! pSync and pWrk are never read or written.
#![allow(unreachable_pub)]

use core::ffi::{c_int, c_long, c_void};
use std::mem::size_of;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use rshmem_core::coll::{Elem, ReduceOp};
use rshmem_core::{fatal, rma, AmoOp, Cmp, Error, Result};

/// Arrival counters (one per sender PE) then the published `collect` size.
static SCRATCH: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
/// Signals received so far from each PE (what the next wait expects, minus one).
static SEEN: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Allocates the scratch (collective over WORLD; called by every successful init).
pub(crate) fn setup(routine: &'static str) -> Result<()> {
    let n = rshmem_core::setup::n_pes()?;
    let p = rshmem_core::memory::calloc(routine, n + 1, 8)?;
    SCRATCH.store(p.cast(), Ordering::Release);
    *SEEN.lock().unwrap_or_else(|e| e.into_inner()) = vec![0; n];
    Ok(())
}

/// A validated active set as seen by one of its members.
struct Set {
    start: usize,
    stride: usize,
    size: usize,
    rank: usize,
    scratch: *mut u64,
}

impl Set {
    fn new(routine: &'static str, start: c_int, logstride: c_int, size: c_int) -> Set {
        let bad = |arg, reason| -> ! {
            fatal(&Error::InvalidArgument {
                routine,
                arg,
                reason,
            })
        };
        let npes = crate::imp::ok(rshmem_core::setup::n_pes());
        let me = crate::imp::ok(rshmem_core::setup::my_pe());
        let scratch = SCRATCH.load(Ordering::Acquire);
        if scratch.is_null() {
            fatal(&Error::NotInitialized { routine });
        }
        if !(0..31).contains(&logstride) {
            bad("logPE_stride", "must be in 0..31");
        }
        if start < 0 || size < 1 {
            bad("PE_start/PE_size", "need PE_start >= 0 and PE_size >= 1");
        }
        let (start, stride, size) = (start as usize, 1usize << logstride, size as usize);
        let last = (size - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(start));
        if last.is_none_or(|l| l >= npes) {
            bad(
                "PE_size",
                "the active set does not fit in the PEs of the job",
            );
        }
        if me < start || !(me - start).is_multiple_of(stride) || (me - start) / stride >= size {
            bad("PE_start", "the calling PE is not in the active set");
        }
        Set {
            start,
            stride,
            size,
            rank: (me - start) / stride,
            scratch,
        }
    }

    fn pe(&self, rank: usize) -> usize {
        self.start + rank * self.stride
    }

    /// Dissemination barrier over the set (no quiet).
    fn sync(&self, routine: &'static str) -> Result<()> {
        let me = self.pe(self.rank);
        let mut dist = 1;
        while dist < self.size {
            let to = self.pe((self.rank + dist) % self.size);
            let from = self.pe((self.rank + self.size - dist) % self.size);
            // SAFETY: the scratch is symmetric with a word per PE.
            unsafe {
                rshmem_core::amo::atomic(routine, self.scratch.add(me), AmoOp::Add(1), to as i64)?;
            }
            let want = {
                let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
                seen[from] += 1;
                seen[from]
            };
            // SAFETY: as above; the word is ours. A member that finalizes instead of
            // raising it ends the wait with an error naming it.
            unsafe {
                rshmem_core::p2p::wait_until_from(
                    routine,
                    self.scratch.add(from),
                    Cmp::Ge,
                    want,
                    from,
                )?;
            }
            dist <<= 1;
        }
        Ok(())
    }

    /// `nbytes` at `src` (a symmetric address) on rank `r` into local `dest`.
    unsafe fn get(
        &self,
        routine: &'static str,
        dest: *mut u8,
        src: *const u8,
        nbytes: usize,
        r: usize,
    ) -> Result<()> {
        // SAFETY: forwarded contract; the core checks `src`.
        unsafe { rma::get(routine, dest, src, nbytes, self.pe(r) as i64) }
    }
}

fn check_pe_root(routine: &'static str, root: c_int, s: &Set) -> usize {
    if root < 0 || root as usize >= s.size {
        fatal(&Error::PeOutOfRange {
            routine,
            arg: "PE_root",
            pe: root.into(),
            npes: s.size,
        });
    }
    root as usize
}

fn nbytes(routine: &'static str, n: usize, esize: usize) -> usize {
    n.checked_mul(esize).unwrap_or_else(|| {
        fatal(&Error::InvalidArgument {
            routine,
            arg: "nelems",
            reason: "nelems times the element size overflows",
        })
    })
}

/// `shmem_barrier`: quiet, then a barrier over the set.
pub(crate) fn barrier(
    routine: &'static str,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = Set::new(routine, start, logstride, size);
    crate::imp::ok(rshmem_core::order::quiet());
    crate::imp::ok(s.sync(routine));
}

/// Deprecated 4-argument `shmem_sync`.
pub(crate) fn sync(
    routine: &'static str,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = Set::new(routine, start, logstride, size);
    crate::imp::ok(s.sync(routine));
}

/// The data collectives of the set.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Data {
    /// From the set's rank `root`; the root's `dest` is not written.
    Broadcast(c_int),
    Collect,
    Fcollect,
    Alltoall,
    /// Element strides of dest and source, in elements.
    Alltoalls(isize, isize),
}

/// `shmem_{broadcast,collect,fcollect,alltoall,alltoalls}{32,64}`.
pub(crate) unsafe fn data(
    routine: &'static str,
    kind: Data,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = Set::new(routine, start, logstride, size);
    let nb = nbytes(routine, nelems, esize);
    let (d, src) = (dest.cast::<u8>(), source.cast::<u8>());
    let r = (|| -> Result<()> {
        if let Data::Alltoalls(dst, sst) = kind {
            if dst < 1 || sst < 1 {
                return Err(Error::InvalidArgument {
                    routine,
                    arg: "dst/sst",
                    reason: "strides must be at least 1",
                });
            }
        }
        if let Data::Collect = kind {
            // Publish our contribution (word n of our scratch); nobody reads it before
            // the barrier.
            let n = crate::imp::ok(rshmem_core::setup::n_pes());
            // SAFETY: the scratch has n + 1 words.
            unsafe {
                rshmem_core::amo::atomic(
                    routine,
                    s.scratch.add(n),
                    AmoOp::Set(nb as u64),
                    s.pe(s.rank) as i64,
                )?;
            }
        }
        s.sync(routine)?;
        match kind {
            Data::Broadcast(root) => {
                let root = check_pe_root(routine, root, &s);
                if s.rank != root && nb > 0 {
                    // SAFETY: `dest` holds `nb` bytes (spec); the root's source is stable.
                    unsafe { s.get(routine, d, src, nb, root)? };
                }
            }
            Data::Fcollect => {
                for r in 0..s.size {
                    // SAFETY: `dest` holds `nb * size` bytes (spec).
                    unsafe { s.get(routine, d.add(r * nb), src, nb, r)? };
                }
            }
            Data::Collect => {
                // Each PE pushes its own block (a PE contributing nothing may pass a null
                // source, so nobody may read another PE's `source` through its own).
                let n = crate::imp::ok(rshmem_core::setup::n_pes());
                let mut at = 0usize;
                for r in 0..s.rank {
                    // SAFETY: the scratch word n of every PE is symmetric.
                    at += unsafe {
                        rshmem_core::amo::atomic::<u64>(
                            routine,
                            s.scratch.add(n),
                            AmoOp::Fetch,
                            s.pe(r) as i64,
                        )?
                    } as usize;
                }
                if nb > 0 {
                    for r in 0..s.size {
                        // SAFETY: every `dest` holds the sum of all contributions (spec);
                        // ours starts at `at`; `src` holds `nb` bytes.
                        unsafe { rma::put(routine, d.add(at), src, nb, s.pe(r) as i64)? };
                    }
                    rshmem_core::order::quiet()?;
                }
            }
            Data::Alltoall => {
                for r in 0..s.size {
                    // SAFETY: both buffers hold `nb * size` bytes (spec).
                    unsafe { s.get(routine, d.add(r * nb), src.add(s.rank * nb), nb, r)? };
                }
            }
            Data::Alltoalls(dst, sst) => {
                let (dst, sst) = (dst as usize, sst as usize);
                for r in 0..s.size {
                    for k in 0..nelems {
                        // SAFETY: both buffers cover their strided extents (spec).
                        unsafe {
                            s.get(
                                routine,
                                d.add((r * nelems + k) * dst * esize),
                                src.add((s.rank * nelems + k) * sst * esize),
                                esize,
                                r,
                            )?
                        };
                    }
                }
            }
        }
        // Nobody leaves (and may rewrite its source or scratch) before all have read.
        s.sync(routine)
    })();
    crate::imp::ok(r)
}

/// `shmem_TYPENAME_OP_to_all`: `pWrk` is not used.
pub(crate) unsafe fn to_all<T: Elem>(
    routine: &'static str,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _pwrk: *mut T,
    _psync: *mut c_long,
    op: ReduceOp,
) {
    let s = Set::new(routine, start, logstride, size);
    if nreduce < 0 {
        fatal(&Error::InvalidArgument {
            routine,
            arg: "nreduce",
            reason: "is negative",
        });
    }
    let n = nreduce as usize;
    let nb = nbytes(routine, n, size_of::<T>());
    let r = (|| -> Result<()> {
        if T::fold(op, &mut [], &[]).is_err() {
            return Err(Error::InvalidArgument {
                routine,
                arg: "op",
                reason: "the operator does not apply to this type",
            });
        }
        s.sync(routine)?;
        let mut acc: Vec<T> = Vec::with_capacity(n);
        let mut part: Vec<T> = Vec::with_capacity(n);
        for r in 0..s.size {
            let buf = if r == 0 { &mut acc } else { &mut part };
            // SAFETY: `buf` has capacity for `n` elements, filled by the get (errors end
            // the job before `set_len` is reached).
            unsafe {
                s.get(routine, buf.as_mut_ptr().cast(), source.cast(), nb, r)?;
                buf.set_len(n);
            }
            if r > 0 {
                T::fold(op, &mut acc, &part).expect("operator checked above");
                part.clear();
            }
        }
        // In place: everyone must have read our source before we overwrite it.
        s.sync(routine)?;
        if n > 0 {
            // SAFETY: `dest` holds `n` elements (spec).
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest, n) };
        }
        Ok(())
    })();
    crate::imp::ok(r)
}
