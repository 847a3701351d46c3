//! The world: the PE's life from `init` to `finalize`, above every other layer.
//!
//! `init` builds the layers bottom up in named phases (`init.rs`): connect to the launcher,
//! publish this PE's segment, find where the peers are, map those on this host, choose the
//! wait policy, start the network, then assemble the runtime and publish each layer's
//! state (the algorithms, the contexts' pools and worker, the predefined teams) before the
//! runtime itself. `finalize` takes them back in reverse. The symmetric allocation routines
//! live here too: they are collectives over WORLD on the runtime's heap.

mod exit;
mod init;
pub mod memory;
mod topology;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::algo::Algorithms;
use crate::ctx::{Contexts, Ctx};
use crate::error::At;
use crate::runtime::{try_runtime, Internal, PeState, Runtime};
use crate::team::registry::Teams;
pub use init::init;

/// Whether `init` makes the executable's globals symmetric (the C face asks for it).
static SYMMETRIC_DATA: AtomicBool = AtomicBool::new(false);

/// Asks the next `init` to make the executable's global and static variables symmetric
/// (OpenSHMEM's rule for C): it moves them onto shared memory, so it must be called while
/// the process has a single thread. `SHMEM_SYMMETRIC_DATA=0` overrides it.
pub fn enable_symmetric_data() {
    SYMMETRIC_DATA.store(true, Ordering::Relaxed);
}
/// Nesting depth of init/finalize pairs (OpenSHMEM 1.6 allows several).
static INIT_DEPTH: AtomicUsize = AtomicUsize::new(0);
static INIT_LOCK: Mutex<()> = Mutex::new(());
/// Set when a runtime that cannot be started again is torn down: one that ran under a
/// launcher (which releases the PE at finalize) or moved the executable's globals. A
/// later `init` is refused (see `init`); a single PE without globals may start again.
static ENDED: AtomicBool = AtomicBool::new(false);
/// Whether the current runtime's bootstrap is a launcher connection.
static LAUNCHED: AtomicBool = AtomicBool::new(false);
/// Set by `shmem_finalize` calls (even inner ones) and by [`finalize_at_exit_silently`]:
/// the at-exit finalize of a runtime still up then prints no warning.
static EXIT_QUIET: AtomicBool = AtomicBool::new(false);

/// This PE's number once `init` has connected to the launcher (for init errors).
static INIT_PE: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The number of this PE for a message about a failed `init`: the launcher's answer
/// if `init` got that far, else what the environment announces; `None` if unknown.
pub fn init_pe() -> Option<usize> {
    match INIT_PE.load(Ordering::Relaxed) {
        usize::MAX => rshmem_boot::rank_hint(),
        pe => Some(pe),
    }
}

/// Marks the runtime as finalized implicitly at exit (`start_pes`, whose programs never
/// call `shmem_finalize`): the at-exit finalize prints no warning.
pub fn finalize_at_exit_silently() {
    EXIT_QUIET.store(true, Ordering::Relaxed);
}

/// `shmem_finalize`: collective. The last of nested calls tears the runtime down; the
/// others are a `shmem_barrier_all` (OpenSHMEM 1.6). A program that exits (status 0)
/// with the runtime still up is finalized at exit: silently after `start_pes` or when it
/// called `shmem_finalize` at least once, else with a one-line warning.
///
/// Internal to the faces (this crate is `publish = false`): the last call unmaps the
/// symmetric memory, so no pointer into it (a live `rshmem::SymVec`, a C pointer from
/// `shmem_malloc`) may be used afterwards. The safe API upholds that by calling it only
/// when its `Shmem` guard, which every symmetric object borrows, is dropped.
pub fn finalize() {
    let _g = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(rt) = try_runtime() else { return };
    EXIT_QUIET.store(true, Ordering::Relaxed);
    if INIT_DEPTH.fetch_sub(1, Ordering::Relaxed) > 1 {
        rt.barrier_all();
        return;
    }
    if LAUNCHED.load(Ordering::Relaxed) || rt.data_len > 0 {
        ENDED.store(true, Ordering::Relaxed);
    }
    // Non-blocking collectives first: they may still move data and sync with peers.
    rt.worker().stop(rt);
    // A failure no test or wait reported (an argument error of a collective issued and
    // never waited for) must not be lost.
    if let Some(e) = crate::request::unreported_failure() {
        rt.fatal(&format_args!(
            "shmem_finalize: a non-blocking operation failed and its request was never tested or waited for: {e}"
        ));
    }
    // Acknowledgements still owed go out with the rest (`transport::deferred`).
    if let Err(e) = rt
        .fabric
        .flush_deferred(crate::ctx::runtime_ctx())
        .at("shmem_finalize")
    {
        rt.fatal(&e);
    }
    // Every context's and request's transfers land before the peers may unmap.
    if let Err(e) = rt.fabric.drain().at("shmem_finalize") {
        rt.fatal(&e);
    }
    quiet_at_finalize(rt);
    crate::profile::publish(rt);
    // Tell the peers (release: whatever this PE wrote before, e.g. its last collective's
    // flags, is visible to a peer that sees the state) that it takes part in no more
    // collectives, so a peer still waiting for it in one ends with an error; then wait
    // until every PE says the same. Finalize's barrier is made of these words alone, so
    // it never matches a collective's sync that a PE skipped.
    let state = Runtime::internal_addr(std::mem::offset_of!(Internal, state));
    rt.set_own(state, PeState::Finalizing as u64);
    let everyone = rt.finalize_barrier();
    if everyone && rt.me == 0 && rt.cfg.profile > 0 {
        crate::profile::print_gathered(rt);
    }
    if everyone && rt.fabric.has_network() {
        // Peers may still be reading this PE's state word through the network: one more
        // world sync (every PE is in finalize, so it matches no user collective), whose
        // flags are delivered before anyone tears the network down, then nobody reads
        // anybody. After a collective that failed over a finalized member (a try form
        // went on), WORLD's flags are out of step; and over libfabric (tcp;ofi_rxm) the
        // last PE of a 6-PE job was seen waiting here for the flag of a peer that had
        // passed this sync, flushed and exited (cause not pinned down): the launcher's
        // barrier instead.
        // Either way the collectives' context is flushed: its last flags are delivered
        // before a peer may close its endpoints (else the last PE to be signalled waits for
        // a flag the closing endpoint dropped).
        let coll = crate::ctx::runtime_ctx();
        rt.fabric.last_sync_next();
        if rt.fabric.network_is_ofi() || rt.any_gave_up() {
            rt.fabric.flush_at_teardown(coll);
            if let Err(e) = rt.boot.barrier() {
                rt.fatal(&format_args!("shmem_finalize: {e}"));
            }
        } else {
            rt.sync_in("shmem_finalize", rt.world());
            rt.fabric.flush_at_teardown(coll);
        }
        rt.fabric.flush_at_teardown(Ctx::default_ctx().state());
        rt.fabric.release_ctx(Ctx::default_ctx().state());
    }
    let _ = rt.boot.finalize();
    crate::team::group::forget_sets();
    // Unpublished top down, the runtime first, so no call finds a layer without the one
    // below; the barrier above means no PE still reads this PE's segment, which the
    // runtime unmaps last.
    let runtime = crate::runtime::unpublish();
    Algorithms::unpublish();
    drop(Teams::unpublish());
    drop(Contexts::unpublish());
    drop(runtime);
}

/// Finalize's quiet: a peer that already left the job through UCX (its process is
/// gone; the job's collectives reported it) fails a quiet once and is then skipped;
/// it can receive nothing, and finalizing is what this PE has left to do.
fn quiet_at_finalize(rt: &Runtime) {
    for _ in 0..=rt.npes {
        match Ctx::default_ctx().quiet(rt) {
            Ok(()) => return,
            Err(e) if crate::transport::peer_gone(&e) => continue,
            Err(e) => rt.fatal(&e),
        }
    }
    rt.quiet_all();
}
