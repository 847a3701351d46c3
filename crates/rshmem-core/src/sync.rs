//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`).

use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicU64, Ordering};

use rshmem_util::{CachePadded, Waiter};

use crate::error::Result;
use crate::runtime::{rt, Internal, Runtime};
use crate::word::AmoOp;

impl Runtime {
    /// Dissemination barrier over all PEs: in round k each PE raises the flag of
    /// PE `me + 2^k` to its epoch and waits for its own flag to reach the same epoch.
    /// Epochs only grow, so flags are never reset and back-to-back barriers need no
    /// extra synchronization.
    pub fn sync_all(&self) {
        let epoch = self.sync_epoch.fetch_add(1, Ordering::Relaxed) + 1;
        let n = self.npes;
        let mut dist = 1;
        let mut round = 0;
        while dist < n {
            let to = (self.me + dist) % n;
            let flag = Self::internal_addr(
                offset_of!(Internal, sync) + round * size_of::<CachePadded<AtomicU64>>(),
            );
            if let Err(e) = self.amo::<u64>("shmem_sync_all", to, flag, AmoOp::Set(epoch)) {
                self.fatal(&e);
            }
            let mut w = Waiter::new();
            while self.load_local::<u64>(flag) < epoch {
                w.snooze();
            }
            dist <<= 1;
            round += 1;
        }
    }
}

/// `shmem_barrier_all`: completes this PE's outstanding operations, then waits for all PEs.
pub fn barrier_all() -> Result<()> {
    rt("shmem_barrier_all")?.barrier_all();
    Ok(())
}

/// `shmem_sync_all`: waits for all PEs (does not complete outstanding operations).
pub fn sync_all() -> Result<()> {
    rt("shmem_sync_all")?.sync_all();
    Ok(())
}
