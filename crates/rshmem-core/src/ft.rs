//! Failed PEs (issue 13 §3): which peers died, seen by the survivors.
//!
//! A PE is *failed* when its process is gone (`kill(pid, 0)` says `ESRCH`) while its
//! state word still says `Running`: killed by a signal, or exited without
//! `shmem_finalize` (a PE that exits normally finalizes first, at exit if need be). Its
//! segment stays mapped by the survivors (the mappings keep the memory alive), so its
//! state word is still readable and final. Probing happens only where a wait is already
//! overdue (`Waiter::overdue`) or where a program asks (`failed_pes`, `pe_failed`,
//! `team::survivors`): no hot path pays anything. A dead process stays a zombie until
//! its launcher reaps it, which `oshrun` does as soon as it learns of the exit (SIGCHLD).
//! Only PEs on shared memory are probed by pid (known from init); a PE reached through
//! UCX counts as failed once its connection failed without its having been seen to
//! finalize. Fault-tolerant mode refuses UCX routes at init.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use crate::error::{Departure, Result};
use crate::runtime::{rt, Runtime};

/// This PE's view of the other PEs' failures.
#[derive(Debug)]
pub(crate) struct Liveness {
    /// Process id of each PE on shared memory (this one included); 0 = not probed.
    pids: Box<[u32]>,
    /// PEs seen failed (never cleared: a dead PE stays dead).
    failed: Box<[AtomicBool]>,
    /// Failures this PE acknowledged (`failed_pes`): user waits no longer fail over them.
    acked: Box<[AtomicBool]>,
    /// Per PE: 0, or how a synchronization or status query saw it depart
    /// ([`Runtime::note_departed`]); for good.
    departed: Box<[AtomicU8]>,
    /// How many entries of `departed` are set: 0 lets every statement skip looking.
    departed_count: AtomicUsize,
}

impl Liveness {
    pub(crate) fn new(pids: Vec<u32>) -> Liveness {
        let n = pids.len();
        Liveness {
            pids: pids.into_boxed_slice(),
            failed: (0..n).map(|_| AtomicBool::new(false)).collect(),
            acked: (0..n).map(|_| AtomicBool::new(false)).collect(),
            departed: (0..n).map(|_| AtomicU8::new(0)).collect(),
            departed_count: AtomicUsize::new(0),
        }
    }
}

/// Whether process `pid` is gone (reaped). A zombie still counts as present.
fn process_gone(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
}

impl Runtime {
    /// Whether `pe` has failed: known already, or its process is gone although it never
    /// entered `shmem_finalize` (probed now: a syscall and a read of its state word).
    #[cold]
    pub(crate) fn probe_failed(&self, pe: usize) -> bool {
        let l = &self.live;
        if l.failed[pe].load(Ordering::Relaxed) {
            return true;
        }
        let pid = l.pids[pe];
        if pe == self.me {
            return false;
        }
        if pid == 0 {
            // Through UCX: gone without being known to have finalized (the state read
            // notes a vanished peer; a peer's give-up record may know better).
            if self.is_finalizing(pe) || !self.fabric.has_left(pe) || self.recorded_finalized(pe) {
                return false;
            }
            l.failed[pe].store(true, Ordering::Relaxed);
            return true;
        }
        if !process_gone(pid) {
            return false;
        }
        // Gone: its state word is final. A PE that finalized and left is not failed.
        if self.is_finalizing(pe) {
            return false;
        }
        l.failed[pe].store(true, Ordering::Relaxed);
        true
    }

    /// The first of `peers` (world numbers) that has failed.
    #[cold]
    pub(crate) fn failed_among(&self, mut peers: impl Iterator<Item = usize>) -> Option<usize> {
        peers.find(|&pe| pe != self.me && self.probe_failed(pe))
    }

    /// The first failed PE this PE has not acknowledged (`failed_pes`), for user waits:
    /// the writer a wait expects may be any PE, so an unacknowledged failure ends it.
    #[cold]
    pub(crate) fn unacked_failure(&self) -> Option<usize> {
        (0..self.npes)
            .find(|&pe| self.probe_failed(pe) && !self.live.acked[pe].load(Ordering::Relaxed))
    }

    /// Every failed PE, in order, each acknowledged (user waits stop failing over it).
    pub fn failed_pes(&self) -> Vec<usize> {
        let v: Vec<usize> = (0..self.npes).filter(|&pe| self.probe_failed(pe)).collect();
        for &pe in &v {
            self.live.acked[pe].store(true, Ordering::Relaxed);
        }
        v
    }
}

/// The mark of a departure in [`Liveness::departed`] (0: none recorded).
fn mark_of(how: Departure) -> u8 {
    match how {
        Departure::Finalized => 1,
        Departure::Failed => 2,
    }
}

impl Runtime {
    /// How `pe` has departed, probed now: finalized (its state word, readable after its
    /// process is gone) before failed (a system call). Not for hot paths.
    #[cold]
    pub(crate) fn probe_departure(&self, pe: usize) -> Option<Departure> {
        if self.is_finalizing(pe) {
            Some(Departure::Finalized)
        } else if self.probe_failed(pe) {
            Some(Departure::Failed)
        } else {
            None
        }
    }

    /// Records that `pe` departed (the first record counts). Only the synchronizations
    /// that go on without departed PEs read the records; the core's own waits probe.
    pub(crate) fn note_departed(&self, pe: usize, how: Departure) {
        let l = &self.live;
        if l.departed[pe]
            .compare_exchange(0, mark_of(how), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            l.departed_count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The departure recorded for `pe`, if any (one load).
    #[inline]
    pub(crate) fn recorded_departure(&self, pe: usize) -> Option<Departure> {
        match self.live.departed[pe].load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Departure::Finalized),
            _ => Some(Departure::Failed),
        }
    }

    /// Whether any departure is recorded (one load: the common answer is no).
    #[inline]
    pub(crate) fn any_departed(&self) -> bool {
        self.live.departed_count.load(Ordering::Relaxed) != 0
    }
}

/// How `pe` (world number) has departed, probed now and recorded for the synchronizations
/// that go on without it: finalized (normal termination) before failed. `None` for a
/// running PE, this PE and out-of-range PEs. Reads the peer's state word and may make a
/// system call: not for hot paths.
pub fn departure(routine: &'static str, pe: usize) -> Result<Option<Departure>> {
    let rt = rt(routine)?;
    if pe >= rt.npes || pe == rt.me {
        return Ok(None);
    }
    let how = rt.probe_departure(pe);
    if let Some(how) = how {
        rt.note_departed(pe, how);
    }
    Ok(how)
}

/// Records that `pe` (world number) departed as `how`, found by a caller's own probe (the
/// first record counts). Out-of-range PEs are ignored.
pub fn note_departed(routine: &'static str, pe: usize, how: Departure) -> Result<()> {
    let rt = rt(routine)?;
    if pe < rt.npes {
        rt.note_departed(pe, how);
    }
    Ok(())
}

/// `shmemx_failed_pes`: the PEs that have failed (died without `shmem_finalize`), in
/// order. Acknowledges them: a user wait (`shmem_wait_until`...) fails over a failure
/// only until it is acknowledged. Collectives keep failing over failed members: build a
/// team of the survivors ([`crate::team::survivors`]).
pub fn failed_pes() -> Result<Vec<usize>> {
    Ok(rt("shmemx_failed_pes")?.failed_pes())
}

/// `shmemx_pe_failed`: whether `pe` (world number) has failed. Out-of-range PEs have not.
pub fn pe_failed(pe: usize) -> Result<bool> {
    let rt = rt("shmemx_pe_failed")?;
    Ok(pe < rt.npes && rt.probe_failed(pe))
}

/// Whether `pe` (world number) has entered `shmem_finalize` (normal termination; it stays
/// finalized after its process is gone). Out-of-range PEs have not. Reads the peer's state
/// word: not for hot paths.
pub fn pe_finalized(pe: usize) -> Result<bool> {
    let rt = rt("shmemx_pe_finalized")?;
    Ok(pe < rt.npes && rt.is_finalizing(pe))
}
