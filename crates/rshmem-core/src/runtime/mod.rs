//! The runtime state of one PE: configuration, bootstrap, the mapped segments of every
//! PE on the host, routes, the heap allocator. Created by `init`, torn down by
//! `finalize`, reached through one global pointer.

pub(crate) mod heap;
pub(crate) mod lock_mode;
pub mod memory;
pub mod setup;
pub(crate) mod sys;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rshmem_boot::Bootstrap;
use rshmem_util::config::show_size;
use rshmem_util::wait;
use rshmem_util::{CachePadded, Config};

use crate::algo::Algorithms;
use crate::ctx::Ctx;
use crate::engine::Engine;
use crate::error::{Error, InitError, Result};
use crate::heap::Heap;
use crate::request::Pool;
use crate::team::{Members, SlotMap, Team, TeamConfig};
use crate::transport::ofi::Ofi;
use crate::transport::shm::{SegMap, Shm};
use crate::transport::ucx::{self, Ucx};
use crate::transport::{Fabric, Network, Route, Seg, SymAddr};
use crate::word::{AmoOp, Word};
use rshmem_util::config::{NetworkChoice, TransportMode};

/// Each PE's host as a number, from the PEs' host names, or from `virtual_hosts`
/// contiguous blocks of PEs when it is non-zero.
fn host_numbers(hosts: &[String], virtual_hosts: usize) -> Vec<usize> {
    let n = hosts.len();
    if virtual_hosts > 0 {
        let k = virtual_hosts.min(n);
        return (0..n).map(|p| p * k / n).collect();
    }
    let mut names: Vec<&str> = Vec::new();
    hosts
        .iter()
        .map(|h| match names.iter().position(|x| x == h) {
            Some(i) => i,
            None => {
                names.push(h);
                names.len() - 1
            }
        })
        .collect()
}

/// The HOST team of `me` and the LEADERS team (first PE of each host).
fn host_teams(host_of: &[usize], me: usize) -> (Members, Members) {
    let n = host_of.len();
    let mine: Vec<usize> = (0..n).filter(|&p| host_of[p] == host_of[me]).collect();
    let leaders: Vec<usize> = (0..n)
        .filter(|&p| p == 0 || !host_of[..p].contains(&host_of[p]))
        .collect();
    (Members::List(mine.into()), Members::List(leaders.into()))
}

/// Library name reported by `shmem_info_get_name`.
pub const VENDOR_STRING: &str = "rshmem";
/// OpenSHMEM specification version implemented.
pub const SPEC_VERSION: (i32, i32) = (1, 5);

/// Runtime words at the start of every PE's segment that other PEs reach through
/// transports. Each word another PE writes sits on its own cache line.
#[repr(C)]
pub(crate) struct Internal {
    /// [`PeState`] of this PE, read by peers whose waits on it have gone on too long.
    pub(crate) state: CachePadded<AtomicU64>,
    /// Non-zero once this PE found a peer that finalized while it waited for it, and is
    /// about to end the job: peers in finalize's barrier stop waiting for it.
    pub(crate) failing: CachePadded<AtomicU64>,
    /// Non-zero once a collective wait of this PE failed over a member that finalized or
    /// died, naming it (`team::peers`, `blamed_by`): this PE will not do its part of that
    /// collective, so the members waiting for it fail too, naming the same PE.
    pub(crate) gave_up: CachePadded<AtomicU64>,
    /// Non-zero while this PE is in a user wait (`shmem_wait_until`...) that is overdue:
    /// a count raised at each of its overdue checks, after this PE's own transfers
    /// completed. Peers tell from it that nobody is left to write what they wait for.
    pub(crate) waiting: CachePadded<AtomicU64>,
    /// This PE's profiling summary, published at finalize for PE 0 to gather.
    pub(crate) profile: [u64; crate::profile::WORDS],
}

/// What a PE's `Internal::state` word says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum PeState {
    /// Between init and finalize (the word starts at zero).
    Running = 0,
    /// Entered `shmem_finalize`: it takes part in no collective any more, and writes
    /// nothing to its peers (its transfers completed before it set this state).
    Finalizing = 1,
    /// Never stored: a PE reached through UCX whose process is gone, having left the job
    /// after finalize (`Runtime::state_of`). Its memory can no longer be read.
    Left = 2,
}

/// Where the runtime's symmetric words live in a segment: the [`Internal`] header, then
/// one barrier flag per (team slot, round), then one availability bitmap per team slot
/// (scratch of the slot agreement), then per slot the collective scratch line, the message
/// channels' counters, the `SHMEM_DEBUG` check line and the channels' buffers, then the
/// active sets' pair scratch, then per slot the low-latency buffers, then the user heap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    sync_off: usize,
    bits_off: usize,
    bits_stride: usize,
    coll_off: usize,
    msg_off: usize,
    ack_off: usize,
    check_off: usize,
    /// One line per slot: the generation word of `shmemx_team_survivors` (`team::survivors`).
    ft_off: usize,
    /// One line per slot: this PE's collective call on the team (`coll::check::Call`).
    call_off: usize,
    buf_off: usize,
    /// Pair-counted scratch of active sets (`team::group`): a line of counters per peer,
    /// the published words, then two receive buffers per peer.
    pair_off: usize,
    set_off: usize,
    pair_buf_off: usize,
    /// Low-latency buffers of every slot (`coll::ll`).
    ll_off: usize,
    /// Bytes before the user heap.
    pub(crate) size: usize,
}

impl Layout {
    /// Dissemination rounds per team (enough for 2^32 PEs).
    pub(crate) const ROUNDS: usize = 32;
    /// Flags are spread one per cache line.
    const LINE: usize = 64;

    pub(crate) fn new(max_teams: usize, npes: usize) -> Layout {
        let sync_off = std::mem::size_of::<Internal>().next_multiple_of(4096);
        let bits_off = sync_off + max_teams * Self::ROUNDS * Self::LINE;
        let bits_stride = (max_teams.div_ceil(64) * 8).next_multiple_of(Self::LINE);
        let coll_off = bits_off + max_teams * bits_stride;
        let msg_off = coll_off + max_teams * Self::LINE;
        let ack_off = msg_off + max_teams * Self::CHANNELS * Self::LINE;
        let check_off = ack_off + max_teams * Self::CHANNELS * Self::LINE;
        let ft_off = check_off + max_teams * Self::LINE;
        let call_off = ft_off + max_teams * Self::LINE;
        let buf_off = (call_off + max_teams * Self::LINE).next_multiple_of(4096);
        let pair_off = buf_off + max_teams * Self::CHANNELS * 2 * Self::MSG_BYTES;
        let set_off = pair_off + npes * Self::PAIR_LINES * Self::LINE;
        let pair_buf_off = (set_off + 2 * Self::LINE).next_multiple_of(4096);
        let ll_off = (pair_buf_off + npes * 2 * Self::MSG_BYTES).next_multiple_of(4096);
        let size =
            (ll_off + max_teams * Self::LL_BUFS * Self::LL_BYTES).next_multiple_of(SLOT_ALIGN);
        Layout {
            sync_off,
            bits_off,
            bits_stride,
            coll_off,
            msg_off,
            ack_off,
            check_off,
            ft_off,
            call_off,
            buf_off,
            pair_off,
            set_off,
            pair_buf_off,
            ll_off,
            size,
        }
    }

    /// Counter lines per peer in the pair-counted scratch.
    const PAIR_LINES: usize = 3;

    /// Signals from `sender` to this PE in active-set collectives (raised by the sender).
    #[inline]
    pub(crate) fn pair_sig(&self, sender: usize) -> SymAddr {
        self.pair_line(sender, 0)
    }

    /// Messages from `sender` on its channel to this PE (raised by the sender).
    #[inline]
    pub(crate) fn pair_msg(&self, sender: usize) -> SymAddr {
        self.pair_line(sender, 1)
    }

    /// Messages of this PE consumed by `receiver` (raised by the receiver).
    #[inline]
    pub(crate) fn pair_ack(&self, receiver: usize) -> SymAddr {
        self.pair_line(receiver, 2)
    }

    #[inline]
    fn pair_line(&self, pe: usize, line: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.pair_off + (pe * Self::PAIR_LINES + line) * Self::LINE,
        }
    }

    /// Receive buffer `parity` of the channel from `sender` (pair-counted scratch).
    #[inline]
    pub(crate) fn pair_buf(&self, sender: usize, parity: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.pair_buf_off + (sender * 2 + parity) * Self::MSG_BYTES,
        }
    }

    /// Word `w` (< 8) this PE publishes during an active-set collective; `check` selects
    /// the `SHMEM_DEBUG` line.
    #[inline]
    pub(crate) fn set_word(&self, check: bool, w: usize) -> SymAddr {
        debug_assert!(w < Self::LINE / 8);
        SymAddr {
            seg: Seg::Heap,
            off: self.set_off + check as usize * Self::LINE + w * 8,
        }
    }

    /// Message channels per team (`coll::msg`).
    pub(crate) const CHANNELS: usize = 32;
    /// Bytes of each of a channel's two receive buffers.
    pub(crate) const MSG_BYTES: usize = 16 << 10;

    /// Arrival counter of channel `ch` of team `slot` (raised by the sender).
    #[inline]
    pub(crate) fn msg_flag(&self, slot: usize, ch: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.msg_off + (slot * Self::CHANNELS + ch) * Self::LINE,
        }
    }

    /// Consumption counter of channel `ch` of team `slot` (raised by the receiver, on
    /// the sender).
    #[inline]
    pub(crate) fn ack_flag(&self, slot: usize, ch: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.ack_off + (slot * Self::CHANNELS + ch) * Self::LINE,
        }
    }

    /// Receive buffer `parity` (0 or 1) of channel `ch` of team `slot`.
    #[inline]
    pub(crate) fn msg_buf(&self, slot: usize, ch: usize, parity: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.buf_off + ((slot * Self::CHANNELS + ch) * 2 + parity) * Self::MSG_BYTES,
        }
    }

    /// Low-latency buffers per team slot (`coll::ll`).
    pub(crate) const LL_BUFS: usize = crate::coll::ll::BUFS;
    /// Bytes of each low-latency buffer.
    pub(crate) const LL_BYTES: usize = 1024;

    /// Low-latency buffer `i` of team `slot`.
    #[inline(always)]
    pub(crate) fn ll_buf(&self, slot: usize, i: usize) -> SymAddr {
        debug_assert!(i < Self::LL_BUFS);
        SymAddr {
            seg: Seg::Heap,
            off: self.ll_off + (slot * Self::LL_BUFS + i) * Self::LL_BYTES,
        }
    }

    /// Barrier flag of `round` for team `slot`.
    #[inline]
    pub(crate) fn sync_flag(&self, slot: usize, round: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.sync_off + (slot * Self::ROUNDS + round) * Self::LINE,
        }
    }

    /// Word `w` (< 8) of the collective scratch of team `slot` (one cache line).
    #[inline]
    pub(crate) fn coll_word(&self, slot: usize, w: usize) -> SymAddr {
        debug_assert!(w < Self::LINE / 8);
        SymAddr {
            seg: Seg::Heap,
            off: self.coll_off + slot * Self::LINE + w * 8,
        }
    }

    /// Word `w` (< 8) of the `SHMEM_DEBUG` collective check of team `slot` (one line).
    #[inline]
    pub(crate) fn check_word(&self, slot: usize, w: usize) -> SymAddr {
        debug_assert!(w < Self::LINE / 8);
        SymAddr {
            seg: Seg::Heap,
            off: self.check_off + slot * Self::LINE + w * 8,
        }
    }

    /// Word `w` (< 8) of the line where this PE tells the members of team `slot` which
    /// collective call it is in (`coll::check`): word 0 its sequence and kind, the others
    /// its routine's name, published only once a wait is overdue.
    #[inline(always)]
    pub(crate) fn call_word(&self, slot: usize, w: usize) -> SymAddr {
        debug_assert!(w < Self::LINE / 8);
        SymAddr {
            seg: Seg::Heap,
            off: self.call_off + slot * Self::LINE + w * 8,
        }
    }

    /// The survivors-team generation word of team `slot` (`team::survivors`): only its
    /// owner writes it, peers read it.
    #[inline]
    pub(crate) fn ft_word(&self, slot: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.ft_off + slot * Self::LINE,
        }
    }

    /// Word `w` of the availability bitmap scratch of team `slot`.
    #[inline]
    pub(crate) fn slot_bits(&self, slot: usize, w: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: self.bits_off + slot * self.bits_stride + w * 8,
        }
    }
}

/// The executable's globals, left unshared because other threads ran at `shmem_init`.
#[derive(Debug)]
struct GlobalsOff {
    /// Which PE had threads, and how many.
    why: String,
    /// This PE's data and bss range.
    start: usize,
    len: usize,
    /// Said once per PE.
    told: AtomicBool,
}

/// Slots, the runtime area and hence the user heap start on 64 MiB boundaries on every PE:
/// the largest alignment `shmem_align` guarantees. It costs address space only (the
/// padding is never touched, so never committed).
pub const SLOT_ALIGN: usize = 64 << 20;

/// Slots of the predefined teams.
const WORLD_SLOT: usize = 0;
const SHARED_SLOT: usize = 1;
const HOST_SLOT: usize = 2;
const LEADERS_SLOT: usize = 3;
const INNER_HOST_SLOT: usize = 4;
const INNER_LEADERS_SLOT: usize = 5;
/// Slots taken by predefined teams on every PE (the config refuses fewer team slots).
const PREDEFINED_SLOTS: usize = rshmem_util::config::TEAMS_MIN;

/// Thread support levels (`SHMEM_THREAD_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(i32)]
pub enum ThreadLevel {
    /// One thread.
    Single = 0,
    /// Only the main thread calls OpenSHMEM.
    Funneled = 1,
    /// One thread at a time.
    Serialized = 2,
    /// Any thread, any time.
    Multiple = 3,
}

/// One PE's runtime.
#[derive(Debug)]
pub struct Runtime {
    pub(crate) cfg: Config,
    pub(crate) boot: Box<dyn Bootstrap>,
    pub(crate) me: usize,
    pub(crate) npes: usize,
    pub(crate) thread_level: ThreadLevel,
    /// Local address of this PE's own slot.
    pub(crate) my_base: usize,
    /// Offset of the user heap inside a slot, and its length.
    pub(crate) heap_off: usize,
    pub(crate) heap_len: usize,
    /// Routes and transports: every byte between PEs moves through it.
    pub(crate) fabric: Fabric,
    /// This PE's shared globals `[data_start, data_start + data_len)` (length 0: none).
    pub(crate) data_start: usize,
    pub(crate) data_len: usize,
    /// Why the executable's globals are not symmetric, if other threads prevented it.
    globals_off: Option<GlobalsOff>,
    /// Keeps the peers' views of their globals mapped.
    _data_resv: Option<sys::Reservation>,
    pub(crate) heap: Mutex<Heap>,
    pub(crate) layout: Layout,
    /// The collective algorithms in force.
    pub(crate) algs: Algorithms,
    /// Team slots free on this PE.
    pub(crate) slots: Mutex<SlotMap>,
    /// `SHMEM_TEAM_WORLD`.
    pub(crate) world: Arc<Team>,
    /// `SHMEM_TEAM_SHARED`: the PEs whose memory this PE maps.
    pub(crate) shared: Arc<Team>,
    /// `SHMEMX_TEAM_HOST`: the PEs of this (possibly virtual) host.
    pub(crate) host: Arc<Team>,
    /// `SHMEMX_TEAM_LEADERS`: the first PE of each host; `None` on other PEs.
    pub(crate) leaders: Option<Arc<Team>>,
    /// The runtime's own copies of HOST and LEADERS, for WORLD's hierarchical
    /// collectives: slots of their own, so a user's collective on HOST in another thread
    /// never shares their scratch.
    pub(crate) inner_host: Arc<Team>,
    pub(crate) inner_leaders: Option<Arc<Team>>,
    /// Whether WORLD's collectives compose `inner_host` and `inner_leaders` by default
    /// (`world_is_hierarchical`).
    pub(crate) world_hier: bool,
    /// Recycled request objects.
    pub(crate) requests: Pool,
    /// This PE's counts of the active sets' pair-counted scratch (`team::group`).
    pub(crate) pairs: crate::team::group::PairCounts,
    /// Held through each active-set collective: they share the pair counters, so one
    /// PE runs them one at a time.
    pub(crate) set_turn: Mutex<()>,
    /// Runs this PE's non-blocking collectives (`coll::nonblocking`).
    pub(crate) nb: crate::coll::nonblocking::Worker,
    /// Which peers died (`ft`): their pids, and the failures seen and acknowledged.
    pub(crate) live: crate::ft::Liveness,
    /// Whether more PEs of the job run on this machine than it has cores.
    pub(crate) oversubscribed: bool,
    /// Whether the locks steal, agreed by every PE at init (`ops::lock`).
    pub(crate) lock_modes: lock_mode::LockModes,
    /// Keeps every PE's segment mapped; dropped last.
    _resv: sys::Reservation,
}

static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
/// Whether `init` makes the executable's globals symmetric (the C face asks for it).
static SYMMETRIC_DATA: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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
/// Set when the job is being torn down (`shmem_global_exit`, a fatal error): the
/// at-exit hook must not run a collective finalize then.
static TEARING_DOWN: AtomicBool = AtomicBool::new(false);

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

/// The process that initialized (the exit hook ignores forked children).
static INIT_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Registers [`at_exit`] once per process (glibc's `on_exit`, which passes the exit
/// status: a failing process must not wait in a collective finalize). Elsewhere there is
/// no hook, and a program must finalize.
fn register_at_exit() {
    INIT_PID.store(std::process::id(), Ordering::Relaxed);
    EXIT_QUIET.store(false, Ordering::Relaxed);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    static ONCE: std::sync::Once = std::sync::Once::new();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    ONCE.call_once(|| {
        unsafe extern "C" {
            // glibc: `int on_exit(void (*)(int, void *), void *)` (not in the libc crate).
            fn on_exit(
                f: extern "C" fn(libc::c_int, *mut libc::c_void),
                arg: *mut libc::c_void,
            ) -> libc::c_int;
        }
        // SAFETY: registers a handler with the C signature glibc calls it with; the
        // argument is unused.
        unsafe { on_exit(at_exit, std::ptr::null_mut()) };
    });
}

/// The exit hook: a process that exits with status 0 while the runtime is up (a
/// `start_pes` program; `shmem_init` without `shmem_finalize`; a Rust program that calls
/// `std::process::exit` with a live guard; fewer finalizes than inits) is finalized here,
/// collectively, as if `shmem_finalize` had been called last. Nothing happens for a
/// non-zero status or while the job is torn down: the other PEs may never come to the
/// finalize barrier, and the launcher ends the job anyway; a non-zero status after init
/// goes to the launcher first (`Bootstrap::exiting`), so it is the failure reported.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn at_exit(status: libc::c_int, _arg: *mut libc::c_void) {
    if TEARING_DOWN.load(Ordering::Relaxed) {
        return;
    }
    // A forked child inherits the hook and the mappings, but it is not the PE.
    if INIT_PID.load(Ordering::Relaxed) != std::process::id() {
        return;
    }
    let Some(rt) = try_runtime() else { return };
    if status != 0 {
        // The first failure must be the one reported: the launcher hears of this exit
        // before the peers it leaves stuck can blame another PE.
        rt.announce_if_gave_up(false);
        let _ = std::io::stdout().flush();
        let msg = format!(
            "rshmem: PE {}: exited with status {status} without calling shmem_finalize",
            rt.me
        );
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.boot.exiting(status, &msg)
        }));
        return;
    }
    if !EXIT_QUIET.load(Ordering::Relaxed) {
        let _ = std::io::stdout().flush();
        eprintln!(
            "rshmem: PE {}: warning: exiting without shmem_finalize; finalizing at exit (waits for every PE)",
            rt.me
        );
    }
    // A panic must not unwind into C's exit().
    let _ = std::panic::catch_unwind(|| {
        INIT_DEPTH.store(1, Ordering::Relaxed);
        finalize();
    });
}

/// The runtime, or `NotInitialized` naming `routine`.
#[inline(always)]
pub(crate) fn rt(routine: &'static str) -> Result<&'static Runtime> {
    let p = RUNTIME.load(Ordering::Acquire);
    if p.is_null() {
        return Err(Error::NotInitialized { routine });
    }
    // SAFETY: a non-null pointer was published by `init` from a leaked Box and is only
    // freed by the last `finalize`; OpenSHMEM forbids calls racing with finalize.
    Ok(unsafe { &*p })
}

/// The runtime if initialized.
///
/// Internal to the faces (this crate is `publish = false`): the reference is `'static`
/// only until the last [`finalize`], which frees the runtime; callers must not keep it
/// across a `finalize` (OpenSHMEM forbids calls racing with finalize).
pub fn try_runtime() -> Option<&'static Runtime> {
    rt("").ok()
}

/// True between `init` and the matching `finalize`.
pub fn initialized() -> bool {
    !RUNTIME.load(Ordering::Acquire).is_null()
}

fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> InitError {
    let what = what.into();
    move |err| InitError::Os { what, err }
}

/// `shmem_init_thread`: starts the runtime (collective over all PEs) and returns the thread
/// level provided. Nested calls only count (OpenSHMEM 1.6): the runtime ends with the
/// last of as many `finalize` calls, or at exit (see [`finalize`]). Starting again after
/// that works for a single PE started without a launcher and without shared globals;
/// otherwise it is refused with [`InitError::Reinit`] (the launcher has released the PE).
pub fn init(requested: ThreadLevel) -> std::result::Result<ThreadLevel, InitError> {
    let _g = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    crate::error::set_fatal_hook(fatal);
    if let Some(rt) = try_runtime() {
        INIT_DEPTH.fetch_add(1, Ordering::Relaxed);
        return Ok(rt.thread_level);
    }
    if ENDED.load(Ordering::Relaxed) {
        return Err(InitError::Reinit);
    }
    let cfg = Config::from_env()?;
    let algs = Algorithms::from_config(&cfg).map_err(InitError::Algorithm)?;
    LAUNCHED.store(rshmem_boot::launched(), Ordering::Relaxed);
    // The program's threads, counted before the bootstrap starts its own (the PMIx library's
    // progress thread, which never touches the executable's globals).
    let want_data = SYMMETRIC_DATA.load(Ordering::Relaxed) && cfg.symmetric_data;
    let threads = if want_data {
        sys::thread_count().unwrap_or(1)
    } else {
        1
    };
    let boot = rshmem_boot::from_env()?;
    let (me, npes) = (boot.rank(), boot.size());
    INIT_PE.store(me, Ordering::Relaxed);
    // One PE is one host whatever the variable says: a setting for multi-PE runs (the
    // test suite's simulated hosts) leaves single-PE programs alone.
    if npes > 1 && cfg.virtual_hosts > npes {
        return Err(InitError::Config(rshmem_util::ConfigError {
            var: "SHMEM_VIRTUAL_HOSTS".into(),
            value: cfg.virtual_hosts.to_string(),
            reason: format!("must be at most the number of PEs ({npes}): every virtual host holds at least one PE"),
        }));
    }

    // This PE's segment: runtime words, then the heap, in one sparse shared file.
    let max_teams = cfg.teams_max;
    let layout = Layout::new(max_teams, npes);
    // The table bounds the size; checked all the same, as a wrapped size maps nothing.
    let too_large = || {
        InitError::Topology(format!(
            "SHMEM_SYMMETRIC_SIZE={} plus the runtime area of {} (sized by SHMEM_TEAMS_MAX={max_teams}) overflows the address space",
            cfg.symmetric_size,
            show_size(layout.size),
        ))
    };
    let heap_len = cfg
        .symmetric_size
        .checked_next_multiple_of(4096)
        .ok_or_else(too_large)?;
    let slot_len = layout.size.checked_add(heap_len).ok_or_else(too_large)?;
    let stride = slot_len
        .checked_next_multiple_of(SLOT_ALIGN)
        .ok_or_else(too_large)?;
    let file = sys::shared_file(&format!("rshmem-{}-{me}", boot.job_id()), slot_len).map_err(
        os(format!(
            "cannot create the symmetric heap of SHMEM_SYMMETRIC_SIZE={} (plus a runtime area of {} for SHMEM_TEAMS_MAX={max_teams})",
            show_size(cfg.symmetric_size),
            show_size(layout.size),
        )),
    )?;
    let host = sys::host_key();
    {
        use std::os::fd::AsRawFd;
        boot.put(
            "seg",
            &format!("{}:{}:{slot_len}", std::process::id(), file.as_raw_fd()),
        )?;
    }
    boot.put("host", &host)?;
    lock_mode::offer(boot.as_ref(), &cfg)?;
    // The executable's globals and statics, moved onto a shared file (C programs).
    // The move below copies, then remaps: a write another thread made in between would be
    // lost without a trace. So with other threads running (a Python interpreter's, an
    // OpenMP pool started early) nothing is moved; the PEs then agree below to go without
    // symmetric globals, and a global used in RMA fails naming the routine (`threads`,
    // counted above).
    let exe_data = if want_data {
        sys::executable_data()
    } else {
        None
    };
    let data = exe_data.filter(|_| threads == 1);
    let data_file = match data {
        Some((start, len, rel)) => {
            let f = sys::share_in_place(&format!("rshmem-data-{}-{me}", boot.job_id()), start, len)
                .map_err(os("cannot share the executable's global variables (set SHMEM_SYMMETRIC_DATA=0 to go without)"))?;
            use std::os::fd::AsRawFd;
            boot.put(
                "data",
                &format!("{}:{}:{len}:{rel}", std::process::id(), f.as_raw_fd()),
            )?;
            Some(f)
        }
        None if threads > 1 => {
            boot.put("data", &format!("threads:{threads}"))?;
            None
        }
        None => {
            boot.put("data", "none")?;
            None
        }
    };
    boot.fence()?;

    let total = stride.checked_mul(npes).ok_or_else(|| {
        InitError::Topology(format!(
            "{npes} PEs x {stride} bytes (SHMEM_SYMMETRIC_SIZE plus the runtime area sized by SHMEM_TEAMS_MAX={max_teams}) overflows the address space"
        ))
    })?;
    let resv = sys::Reservation::new(total, SLOT_ALIGN).map_err(os(format!(
        "cannot reserve {} of address space for {npes} symmetric heaps of SHMEM_SYMMETRIC_SIZE={} and {npes} runtime areas of {} (sized by SHMEM_TEAMS_MAX={max_teams}; lower either variable)",
        show_size(total),
        show_size(cfg.symmetric_size),
        show_size(layout.size),
    )))?;
    // Two PEs share a host when the launcher placed them on one node (where it says) and
    // their host keys match: the key alone would take two nodes with one hostname for
    // one, and the node alone would take containers that share no /dev/shm for one.
    let nodes = boot.nodes().filter(|n| n.len() == npes);
    let keys = (0..npes)
        .map(|pe| boot.get(pe, "host"))
        .collect::<std::result::Result<Vec<_>, rshmem_boot::BootError>>()?;
    let lock_modes = lock_mode::agree(boot.as_ref(), &keys)?;
    let hosts: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(pe, key)| match nodes {
            Some(n) => format!("{}#{key}", n[pe]),
            None => key.clone(),
        })
        .collect();
    let real_host = host_numbers(&hosts, 0);
    let host_of = host_numbers(&hosts, cfg.virtual_hosts);
    let group = shm_groups(cfg.transport, &real_host, &host_of);
    let routes = choose_routes(cfg.transport, &group, me)?;
    let world_hier = world_is_hierarchical(&group, &host_of);
    if cfg.fault_tolerant && routes.iter().any(|r| *r != Route::Shm) {
        return Err(InitError::Transport(format!(
            "SHMEM_FAULT_TOLERANT=1: PE {me} reaches some PEs through the network (UCX or libfabric), where a dead PE is not detected yet; fault-tolerant mode needs every PE on one host over shared memory (unset SHMEM_FAULT_TOLERANT, or use SHMEM_TRANSPORT=shm)"
        )));
    }
    // Pids of the PEs on shared memory, probed for failures (`ft`); 0 = not probed.
    let mut pids = vec![0u32; npes];
    pids[me] = std::process::id();
    for (pe, route) in routes.iter().enumerate() {
        if pe != me && *route != Route::Shm {
            continue;
        }
        if pe == me {
            resv.map_shared(pe * stride, slot_len, &file)
                .map_err(os("cannot map the symmetric heap"))?;
        } else {
            let seg = boot.get(pe, "seg")?;
            let bad =
                || InitError::Topology(format!("PE {pe} published a malformed segment {seg:?}"));
            let mut it = seg.split(':').map(str::parse::<u64>);
            let (Some(Ok(pid)), Some(Ok(fd)), Some(Ok(len))) = (it.next(), it.next(), it.next())
            else {
                return Err(bad());
            };
            if len as usize != slot_len {
                return Err(InitError::Topology(format!(
                    "PE {pe} has a symmetric heap of {len} bytes but PE {me} has {slot_len}: every PE must see the same SHMEM_SYMMETRIC_SIZE"
                )));
            }
            let peer = sys::open_peer_file(pid as u32, fd as i32).map_err(os(format!(
                "cannot open the symmetric heap of PE {pe} (pid {pid})"
            )))?;
            pids[pe] = pid as u32;
            resv.map_shared(pe * stride, slot_len, &peer)
                .map_err(os(format!("cannot map the symmetric heap of PE {pe}")))?;
        }
    }
    // Every local peer's globals, at `data_base + pe * data_stride`.
    let mut data_map = SegMap::NONE;
    let mut data_resv = None;
    // Each local PE's published globals, read once: globals are symmetric only if every
    // local PE could move its own.
    let peer_data = if want_data {
        (0..npes)
            .filter(|&p| p == me || routes[p] == Route::Shm)
            .map(|pe| Ok((pe, boot.get(pe, "data")?)))
            .collect::<std::result::Result<Vec<_>, rshmem_boot::BootError>>()?
    } else {
        Vec::new()
    };
    let busy = peer_data
        .iter()
        .find_map(|(pe, d)| Some((pe, d.strip_prefix("threads:")?)));
    // Said when a global is used in communication (`Runtime::not_symmetric`), not here:
    // many programs start threads early (NumPy's import does) and never need globals.
    let globals_off = busy.and_then(|(pe, count)| {
        let (start, len, _) = exe_data?;
        Some(GlobalsOff {
            why: format!("PE {pe} had {count} threads running at shmem_init"),
            start,
            len,
            told: AtomicBool::new(false),
        })
    });
    let data = if busy.is_some() { None } else { data };
    if let Some((start, len, rel)) = data {
        let dstride = len.next_multiple_of(4096);
        let r = sys::Reservation::new(dstride * npes, 4096).map_err(os(
            "cannot reserve address space for the PEs' global variables",
        ))?;
        for (pe, d) in &peer_data {
            let pe = *pe;
            let parts: Vec<u64> = d.split(':').filter_map(|x| x.parse().ok()).collect();
            if d.as_str() == "none" {
                return Err(InitError::Topology(format!(
                    "PE {pe} found no global variables to share but PE {me} shares {len} bytes: every PE must run the same program with the same SHMEM_SYMMETRIC_DATA"
                )));
            }
            if parts.len() != 4 || parts[2] as usize != len || parts[3] as usize != rel {
                return Err(InitError::Topology(format!(
                    "PE {pe} runs a different executable (its global data is {d:?}; PE {me} has {len} bytes at +{rel:#x}): every PE must run the same program"
                )));
            }
            let peer = sys::open_peer_file(parts[0] as u32, parts[1] as i32)
                .map_err(os(format!("cannot open the global data of PE {pe}")))?;
            r.map_shared(pe * dstride, len, &peer)
                .map_err(os(format!("cannot map the global data of PE {pe}")))?;
        }
        data_map = SegMap {
            base: r.base(),
            stride: dstride,
            len,
        };
        data_resv = Some((r, start, len));
    }
    // Nobody may drop its file before every peer has mapped it.
    boot.barrier()?;
    drop(file);
    drop(data_file);

    // PEs that share this machine's cores, simulated hosts (network namespaces, other
    // host names) included: they compete for the cores whatever host they say they are.
    let machine_pes = keys
        .iter()
        .filter(|k| sys::machine_of(k) == sys::machine_of(&keys[me]))
        .count();
    // The job's CPUs, not this PE's: oshrun may have bound it to one core.
    let cores = wait::job_cpus();
    let oversubscribed = machine_pes > cores;
    let mut policy = if oversubscribed {
        wait::Policy::OVERSUBSCRIBED
    } else {
        wait::Policy::DEDICATED
    };
    policy.spin = cfg.wait_spin.unwrap_or(policy.spin);
    policy.yield_for = cfg.wait_yield.unwrap_or(policy.yield_for);
    wait::set_policy(policy);

    let base = resv.base();
    let world = Members::Strided {
        start: 0,
        stride: 1,
        size: npes,
    };
    let local: Vec<usize> = (0..npes)
        .filter(|&p| p == me || routes[p] == Route::Shm)
        .collect();
    let shared = if local.len() == npes {
        world.clone()
    } else {
        Members::List(local.into())
    };
    let shared_rank = shared.rank_of(me).expect("a PE maps its own memory");
    let (host_members, leader_members) = host_teams(&host_of, me);
    // The network, when a peer needs it: every PE of such a job starts it (each has a peer
    // on another host, or SHMEM_TRANSPORT=ucx|ofi), publishes, and reads back.
    let fds_before_net = routes.contains(&Route::Net).then(sys::open_fds);
    let net = if routes.contains(&Route::Net) {
        let use_ofi = choose_network(&cfg)?;
        boot.put("net", if use_ofi { "ofi" } else { "ucx" })?;
        let slot = base as usize + me * stride;
        let (dstart, dlen) = data_resv.as_ref().map_or((0, 0), |d| (d.1, d.2));
        let region = |base, start, end, on_demand| ucx::Segment {
            base,
            start,
            end,
            on_demand,
        };
        let regions = [
            region(slot, layout.size, slot_len, false),
            region(dstart, 0, dlen, false),
            region(slot, 0, layout.size, true),
        ];
        let one_host = real_host.iter().all(|&h| h == 0);
        let maps_no_peer = routes
            .iter()
            .enumerate()
            .all(|(p, r)| p == me || *r != Route::Shm);
        // Every PE, those on shared memory and this one included: atomics to all of them
        // go through the network (one atomicity domain).
        let remote = vec![true; npes];
        let net = if use_ofi {
            let mut o = Ofi::start(boot.as_ref(), &cfg.ofi_library, layout.size, regions)?;
            boot.fence()?;
            same_network(boot.as_ref(), me, "ofi")?;
            o.connect(boot.as_ref(), &remote)?;
            Network::Ofi(o)
        } else {
            let mut u = Ucx::start(
                boot.as_ref(),
                &cfg.ucx_library,
                layout.size,
                regions,
                one_host,
                maps_no_peer,
            )?;
            boot.fence()?;
            same_network(boot.as_ref(), me, "ucx")?;
            u.connect(boot.as_ref(), &remote)?;
            Network::Ucx(u)
        };
        Some(net)
    } else {
        None
    };
    let host_rank = host_members.rank_of(me).expect("a PE is on its own host");
    let leader_rank = leader_members.rank_of(me);
    let rt = Box::new(Runtime {
        me,
        npes,
        oversubscribed,
        lock_modes,
        thread_level: requested.min(ThreadLevel::Multiple),
        my_base: base as usize + me * stride,
        heap_off: layout.size,
        heap_len,
        layout,
        algs,
        slots: Mutex::new(SlotMap::new(max_teams, PREDEFINED_SLOTS)),
        world: Arc::new(Team::new(
            world,
            me,
            WORLD_SLOT,
            TeamConfig::default(),
            true,
        )),
        shared: Arc::new(Team::new(
            shared,
            shared_rank,
            SHARED_SLOT,
            TeamConfig::default(),
            true,
        )),
        inner_host: Arc::new(Team::new(
            host_members.clone(),
            host_rank,
            INNER_HOST_SLOT,
            TeamConfig::default(),
            true,
        )),
        inner_leaders: leader_rank.map(|r| {
            Arc::new(Team::new(
                leader_members.clone(),
                r,
                INNER_LEADERS_SLOT,
                TeamConfig::default(),
                true,
            ))
        }),
        world_hier,
        host: Arc::new(Team::new(
            host_members,
            host_rank,
            HOST_SLOT,
            TeamConfig::default(),
            true,
        )),
        leaders: leader_rank.map(|r| {
            Arc::new(Team::new(
                leader_members,
                r,
                LEADERS_SLOT,
                TeamConfig::default(),
                true,
            ))
        }),
        fabric: Fabric::new(
            me,
            routes.into_boxed_slice(),
            Shm::new(
                SegMap {
                    base,
                    stride,
                    len: slot_len,
                },
                data_map,
            ),
            Engine::new(
                cfg.copy_engine_lanes,
                cfg.copy_engine_threshold,
                cfg.copy_engine_piece,
            ),
            net,
        ),
        data_start: data_resv.as_ref().map_or(0, |d| d.1),
        data_len: data_resv.as_ref().map_or(0, |d| d.2),
        globals_off,
        _data_resv: data_resv.map(|d| d.0),
        heap: Mutex::new(Heap::new(heap_len)),
        requests: crate::request::new_pool(),
        pairs: crate::team::group::PairCounts::new(npes),
        set_turn: Mutex::new(()),
        nb: Default::default(),
        live: crate::ft::Liveness::new(pids),
        _resv: resv,
        cfg,
        boot,
    });
    let default = Ctx::default_ctx().state();
    if let Err(e) = rt.fabric.wire_up("shmem_init", default) {
        rt.fabric.release_ctx(default);
        return Err(InitError::Transport(e.to_string()));
    }
    if let Some(before) = fds_before_net {
        sys::close_on_exec_since(&before);
    }
    if me == 0 {
        rt.print_banner();
    }
    crate::profile::start(rt.cfg.profile);
    RUNTIME.store(Box::into_raw(rt), Ordering::Release);
    INIT_DEPTH.store(1, Ordering::Relaxed);
    register_at_exit();
    Ok(requested.min(ThreadLevel::Multiple))
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
    rt.nb.stop(rt);
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
        .flush_deferred("shmem_finalize", crate::ctx::runtime_ctx())
    {
        rt.fatal(&e);
    }
    // Every context's and request's transfers land before the peers may unmap.
    if let Err(e) = rt.fabric.drain("shmem_finalize") {
        rt.fatal(&e);
    }
    rt.quiet_at_finalize();
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
            rt.sync_in("shmem_finalize", &rt.world);
            rt.fabric.flush_at_teardown(coll);
        }
        rt.fabric.flush_at_teardown(Ctx::default_ctx().state());
        rt.fabric.release_ctx(Ctx::default_ctx().state());
    }
    let _ = rt.boot.finalize();
    crate::team::group::forget_sets();
    let p = RUNTIME.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: `p` came from `Box::into_raw` in `init`; it is unpublished now, and the
    // barrier above means no PE still reads this PE's segment.
    drop(unsafe { Box::from_raw(p) });
}

impl Runtime {
    fn print_banner(&self) {
        let mut err = std::io::stderr().lock();
        if self.cfg.version || self.cfg.info {
            let _ = writeln!(
                err,
                "{VENDOR_STRING} {} (OpenSHMEM {}.{}), {} PEs",
                env!("CARGO_PKG_VERSION"),
                SPEC_VERSION.0,
                SPEC_VERSION.1,
                self.npes
            );
        }
        if self.cfg.info {
            let mapped = self.fabric.mapped_count();
            let _ = writeln!(
                err,
                "topology: PE {} reaches {mapped} PE(s) through shared memory and {} through {}; HOST has {} PE(s); WORLD collectives {}",
                self.me,
                self.npes - mapped,
                self.fabric.network_name().unwrap_or("the network"),
                self.host.n_pes(),
                if self.world_hier {
                    "compose HOST and LEADERS"
                } else {
                    "are flat"
                }
            );
            match self.fabric.ucx_allocated_heap() {
                Some(true) => {
                    let _ = writeln!(err, "UCX: PE {} has its heap allocated by UCX (reached one-sidedly by UCX's shared-memory transports)", self.me);
                }
                Some(false) => {
                    let _ = writeln!(err, "UCX: PE {} has its heap registered with UCX", self.me);
                }
                None => {}
            }
            if let Some(d) = self.fabric.ofi_description() {
                let _ = writeln!(err, "{d}");
            }
            let _ = writeln!(err, "rshmem configuration:\n{}", self.cfg.describe());
        }
        let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
        for w in Config::unknown_vars(vars.iter().map(String::as_str)) {
            let _ = writeln!(err, "rshmem: warning: {w}");
        }
    }

    /// This PE's number.
    pub fn my_pe(&self) -> usize {
        self.me
    }

    /// Number of PEs.
    pub fn n_pes(&self) -> usize {
        self.npes
    }

    /// The frozen configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The thread level provided.
    pub fn thread_level(&self) -> ThreadLevel {
        self.thread_level
    }

    /// Local address range `[start, end)` of this PE's user heap.
    pub fn heap_range(&self) -> (usize, usize) {
        let s = self.my_base + self.heap_off;
        (s, s + self.heap_len)
    }

    /// Checks that `[addr, addr+len)` is symmetric and translates it.
    #[inline(always)]
    pub(crate) fn sym(
        &self,
        routine: &'static str,
        arg: &'static str,
        addr: usize,
        len: usize,
    ) -> Result<SymAddr> {
        let start = self.my_base + self.heap_off;
        let off = addr.wrapping_sub(start);
        if off <= self.heap_len && len <= self.heap_len - off {
            Ok(SymAddr {
                seg: Seg::Heap,
                off: self.heap_off + off,
            })
        } else {
            self.sym_data(routine, arg, addr, len)
        }
    }

    /// The second half of [`Runtime::sym`]: global and static variables (inlined: statics
    /// should cost what the heap costs).
    #[inline(always)]
    fn sym_data(
        &self,
        routine: &'static str,
        arg: &'static str,
        addr: usize,
        len: usize,
    ) -> Result<SymAddr> {
        let off = addr.wrapping_sub(self.data_start);
        if self.data_len > 0 && off <= self.data_len && len <= self.data_len - off {
            Ok(SymAddr {
                seg: Seg::Data,
                off,
            })
        } else {
            Err(self.not_symmetric(routine, arg, addr, len))
        }
    }

    #[cold]
    fn not_symmetric(
        &self,
        routine: &'static str,
        arg: &'static str,
        addr: usize,
        len: usize,
    ) -> Error {
        if let Some(g) = &self.globals_off {
            let global = addr.wrapping_sub(g.start) < g.len;
            if global && !g.told.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "rshmem: PE {}: {routine}: argument {arg} is a global or static variable, but global and static variables are not symmetric in this job: {}, and moving globals onto shared memory would have lost their writes (call shmem_init before starting threads, or use shmem_malloc)",
                    self.me, g.why
                );
            }
        }
        let (base, end) = self.heap_range();
        Error::NotSymmetric {
            routine,
            arg,
            addr,
            len,
            base,
            end,
        }
    }

    /// Checks a PE number.
    #[inline(always)]
    pub(crate) fn pe(&self, routine: &'static str, pe: i64) -> Result<usize> {
        if pe >= 0 && (pe as u64) < self.npes as u64 {
            Ok(pe as usize)
        } else {
            Err(Error::PeOutOfRange {
                routine,
                arg: "pe",
                pe,
                npes: self.npes,
            })
        }
    }

    /// Checks alignment of a word address.
    #[inline(always)]
    pub(crate) fn aligned(
        &self,
        routine: &'static str,
        arg: &'static str,
        addr: usize,
        align: usize,
    ) -> Result<()> {
        if addr.is_multiple_of(align) {
            Ok(())
        } else {
            Err(Error::Misaligned {
                routine,
                arg,
                addr,
                align,
            })
        }
    }

    /// An atomic on a runtime or user word of `pe`, on the default context.
    ///
    /// `addr` was produced by `sym` (range-checked) or is a runtime word; callers check
    /// alignment for user words.
    #[inline(always)]
    pub(crate) fn amo<W: Word>(
        &self,
        routine: &'static str,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        self.fabric
            .amo(routine, crate::ctx::runtime_ctx(), pe, addr, op)
    }

    /// An atomic whose previous value is not needed (flags, counters), on the default
    /// context.
    #[inline(always)]
    pub(crate) fn amo_post<W: Word>(
        &self,
        routine: &'static str,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<()> {
        self.fabric
            .amo_post(routine, crate::ctx::runtime_ctx(), pe, addr, op)
    }

    /// Raises by one a runtime counter on `pe` that only this PE raises, on the default
    /// context (see `Fabric::raise`).
    #[inline(always)]
    pub(crate) fn raise(&self, routine: &'static str, pe: usize, addr: SymAddr) -> Result<()> {
        self.fabric
            .raise(routine, crate::ctx::runtime_ctx(), pe, addr, 1)
    }

    /// Reads a word of this PE's own segment.
    #[inline(always)]
    pub(crate) fn load_local<W: Word>(&self, addr: SymAddr) -> W {
        self.fabric.load_local(addr)
    }

    /// Writes a runtime word of this PE's own segment that only this PE writes (peers
    /// read it): a release store, never a network atomic, as no other writer can race it.
    #[inline]
    pub(crate) fn set_own(&self, addr: SymAddr, v: u64) {
        self.fabric.store_local(addr, v)
    }

    /// Offset of a runtime word inside [`Internal`].
    pub(crate) fn internal_addr(off: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off,
        }
    }

    /// Whether more PEs of the job run on this machine than it has cores (simulated hosts
    /// on one machine count together): waits then yield at once.
    pub fn oversubscribed(&self) -> bool {
        self.oversubscribed
    }

    /// `SHMEM_TEAM_WORLD`.
    pub fn world(&self) -> &Arc<Team> {
        &self.world
    }

    /// `SHMEM_TEAM_SHARED`.
    pub fn shared(&self) -> &Arc<Team> {
        &self.shared
    }

    /// `SHMEMX_TEAM_HOST`.
    pub fn host(&self) -> &Arc<Team> {
        &self.host
    }

    /// `SHMEMX_TEAM_LEADERS` (`None` on PEs that lead no host).
    pub fn leaders(&self) -> Option<&Arc<Team>> {
        self.leaders.as_ref()
    }

    /// Completes this PE's outstanding operations on the default context.
    pub(crate) fn quiet_all(&self) {
        if let Err(e) = Ctx::default_ctx().quiet(self) {
            self.fatal(&e);
        }
    }

    /// Finalize's quiet: a peer that already left the job through UCX (its process is
    /// gone; the job's collectives reported it) fails a quiet once and is then skipped;
    /// it can receive nothing, and finalizing is what this PE has left to do.
    fn quiet_at_finalize(&self) {
        for _ in 0..=self.npes {
            match Ctx::default_ctx().quiet(self) {
                Ok(()) => return,
                Err(e) if crate::transport::peer_gone(&e) => continue,
                Err(e) => self.fatal(&e),
            }
        }
        self.quiet_all();
    }

    /// Reports a fatal error and ends the whole job with a non-zero status. The report goes
    /// with the abort: the launcher (or, under hydra, this PE) prints it once.
    #[cold]
    pub fn fatal(&self, err: &dyn std::fmt::Display) -> ! {
        self.announce_if_gave_up(true);
        TEARING_DOWN.store(true, Ordering::Relaxed);
        let _ = std::io::stdout().flush();
        self.boot
            .abort(1, &format!("rshmem: PE {}: {err}", self.me))
    }

    /// `shmem_global_exit`: ends every PE of the job with `status`.
    pub fn global_exit(&self, status: i32) -> ! {
        TEARING_DOWN.store(true, Ordering::Relaxed);
        let _ = std::io::stdout().flush();
        // No message: that is how the launcher tells global_exit from a fatal error.
        self.boot.abort(status, "")
    }
}

/// Reports `err` and ends the job (or the process, before init) with a non-zero status.
#[cold]
pub fn fatal(err: &dyn std::fmt::Display) -> ! {
    match try_runtime() {
        Some(rt) => rt.fatal(err),
        None => crate::error::print_and_exit(err),
    }
}

/// Which PEs share memory under `mode`: PEs with equal numbers map each other, from each
/// PE's real host and its (possibly virtual) host. Under `ucx` and `ofi` no two PEs do.
fn shm_groups(mode: TransportMode, real_host: &[usize], host_of: &[usize]) -> Vec<usize> {
    let n = real_host.len();
    match mode {
        TransportMode::Ucx | TransportMode::Ofi => (0..n).collect(),
        TransportMode::Mixed => {
            // A (real host, virtual host) pair per PE, numbered in order of appearance.
            let pairs: Vec<(usize, usize)> = (0..n).map(|p| (real_host[p], host_of[p])).collect();
            (0..n)
                .map(|p| pairs.iter().position(|x| *x == pairs[p]).expect("present"))
                .collect()
        }
        TransportMode::Auto | TransportMode::Shm => real_host.to_vec(),
    }
}

/// The route to every PE from the PEs' shared-memory groups. This PE is always reached
/// through its own mapping; its atomics still go through the network when the job uses
/// one (see `Fabric::amo`).
fn choose_routes(
    mode: TransportMode,
    group: &[usize],
    me: usize,
) -> std::result::Result<Vec<Route>, InitError> {
    (0..group.len())
        .map(|pe| {
            // This PE's own memory is always a copy away (the network would only add latency).
            if pe == me || group[pe] == group[me] {
                Ok(Route::Shm)
            } else if mode == TransportMode::Shm {
                Err(InitError::Topology(format!(
                    "PE {pe} runs on another host than PE {me}, and SHMEM_TRANSPORT=shm allows shared memory only (unset it to reach other hosts through the network)"
                )))
            } else {
                Ok(Route::Net)
            }
        })
        .collect()
}

/// Whether this PE reaches the network through libfabric (else UCX): `SHMEM_TRANSPORT=ofi`
/// or `ucx` decides, else `SHMEM_NETWORK`, whose `auto` takes UCX when its library loads.
fn choose_network(cfg: &Config) -> std::result::Result<bool, InitError> {
    match (cfg.transport, cfg.network) {
        (TransportMode::Ucx, NetworkChoice::Ofi) | (TransportMode::Ofi, NetworkChoice::Ucx) => {
            Err(InitError::Transport(format!(
                "SHMEM_TRANSPORT={} and SHMEM_NETWORK={} disagree (SHMEM_NETWORK applies to auto and mixed: unset one)",
                format!("{:?}", cfg.transport).to_lowercase(),
                format!("{:?}", cfg.network).to_lowercase(),
            )))
        }
        (TransportMode::Ofi, _) | (_, NetworkChoice::Ofi) => Ok(true),
        (TransportMode::Ucx, _) | (_, NetworkChoice::Ucx) => Ok(false),
        (_, NetworkChoice::Auto) => Ok(!sys::library_loads(&cfg.ucx_library)),
    }
}

/// Checks that every PE chose the network this PE did (after the store's fence): a job
/// where some hosts lack UCX must say `SHMEM_NETWORK=ofi` everywhere.
fn same_network(
    boot: &dyn rshmem_boot::Bootstrap,
    me: usize,
    mine: &str,
) -> std::result::Result<(), InitError> {
    for pe in 0..boot.size() {
        let theirs = boot.get(pe, "net")?;
        if theirs != mine {
            return Err(InitError::Transport(format!(
                "PE {me} reaches other PEs through {mine} but PE {pe} through {theirs} (SHMEM_NETWORK=auto chooses UCX where its library loads): set SHMEM_NETWORK=ucx or ofi for every PE"
            )));
        }
    }
    Ok(())
}

/// Whether WORLD's collectives should compose HOST and LEADERS: the PEs do not all share
/// memory, every host's PEs do (so the host phases are single-copy), and some host has
/// more than one PE (else the composition is the flat algorithm plus overhead). Computed
/// from job-wide facts only, so every PE decides alike.
fn world_is_hierarchical(group: &[usize], host_of: &[usize]) -> bool {
    let n = group.len();
    let spans = (1..n).any(|p| group[p] != group[0]);
    let hosts_share =
        (0..n).all(|p| (0..p).all(|q| host_of[p] != host_of[q] || group[p] == group[q]));
    let crowded = (1..n).any(|p| host_of[..p].contains(&host_of[p]));
    spans && hosts_share && crowded
}
