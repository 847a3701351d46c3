//! The lower runtime of one PE: configuration, bootstrap, the memory layout, the mapped
//! segments of every PE on the host, routes and transports (the fabric), the heap
//! allocator. `world::init` builds it and `world::finalize` tears it down; it is reached
//! through one global pointer ([`rt`]). The teams, contexts and collectives above it keep
//! their own state (`runtime::published`).

pub(crate) mod heap;
pub(crate) mod lock_mode;
pub mod members;
pub(crate) mod published;
pub mod setup;
pub(crate) mod sys;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rshmem_boot::Bootstrap;
use rshmem_util::{CachePadded, Config};

use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::transport::{Fabric, Seg, SymAddr};
use crate::word::Word;
use published::Published;

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
    pub(crate) profile: [u64; Internal::PROFILE_WORDS],
}

impl Internal {
    /// Words of the profiling summary (`profile::WORDS`, which checks it).
    pub(crate) const PROFILE_WORDS: usize = 40;
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
/// active sets' pair scratch, then per slot the low-latency buffers and the staged
/// broadcasts' buffers, then the user heap.
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
    /// One line per slot: this PE's collective call on the team (`team::call_check::Call`).
    call_off: usize,
    buf_off: usize,
    /// Pair-counted scratch of active sets (`team::group`): a line of counters per peer,
    /// the published words, then two receive buffers per peer.
    pair_off: usize,
    set_off: usize,
    pair_buf_off: usize,
    /// Low-latency buffers of every slot (`coll::ll`).
    ll_off: usize,
    /// Staged broadcasts' buffers of every slot (`coll::staged`).
    stage_off: usize,
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
        let stage_off =
            (ll_off + max_teams * Self::LL_BUFS * Self::LL_BYTES).next_multiple_of(4096);
        let size = (stage_off + max_teams * Self::STAGE_STRIDE).next_multiple_of(SLOT_ALIGN);
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
            stage_off,
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

    /// Low-latency buffers per team slot (`coll::ll::BUFS`, which checks it).
    pub(crate) const LL_BUFS: usize = 77;
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

    /// Staging chunks per team slot (`coll::staged`), used in turn.
    pub(crate) const STAGE_CHUNKS: usize = 8;
    /// Bytes of each staging chunk.
    pub(crate) const STAGE_CHUNK: usize = 8 << 10;
    /// A slot's staging area: a page of lines (one head per chunk, then the consumed
    /// count), then the chunks.
    const STAGE_STRIDE: usize = 4096 + Self::STAGE_CHUNKS * Self::STAGE_CHUNK;

    /// Line `i` of team `slot`'s staging page: chunk `i`'s head for `i` <
    /// [`Layout::STAGE_CHUNKS`], the consumed count for `i` = `STAGE_CHUNKS`.
    #[inline(always)]
    pub(crate) fn stage_line(&self, slot: usize, i: usize) -> SymAddr {
        debug_assert!(i <= Self::STAGE_CHUNKS);
        SymAddr {
            seg: Seg::Heap,
            off: self.stage_off + slot * Self::STAGE_STRIDE + i * Self::LINE,
        }
    }

    /// Staging chunk `i` of team `slot`.
    #[inline(always)]
    pub(crate) fn stage_chunk(&self, slot: usize, i: usize) -> SymAddr {
        debug_assert!(i < Self::STAGE_CHUNKS);
        SymAddr {
            seg: Seg::Heap,
            off: self.stage_off + slot * Self::STAGE_STRIDE + 4096 + i * Self::STAGE_CHUNK,
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
    /// collective call it is in (`team::call_check`): word 0 its sequence and kind, the others
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
pub(crate) struct GlobalsOff {
    /// Which PE had threads, and how many.
    pub(crate) why: String,
    /// This PE's data and bss range.
    pub(crate) start: usize,
    pub(crate) len: usize,
    /// Said once per PE.
    pub(crate) told: AtomicBool,
}

/// Slots, the runtime area and hence the user heap start on 64 MiB boundaries on every PE:
/// the largest alignment `shmem_align` guarantees. It costs address space only (the
/// padding is never touched, so never committed).
pub const SLOT_ALIGN: usize = 64 << 20;

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
    pub(crate) globals_off: Option<GlobalsOff>,
    /// Keeps the peers' views of their globals mapped.
    pub(crate) _data_resv: Option<sys::Reservation>,
    pub(crate) heap: Mutex<Heap>,
    pub(crate) layout: Layout,
    /// Which peers died (`ft`): their pids, and the failures seen and acknowledged.
    pub(crate) live: crate::ft::Liveness,
    /// Whether more PEs of the job run on this machine than it has cores.
    pub(crate) oversubscribed: bool,
    /// Whether the locks steal, agreed by every PE at init (`ops::lock`).
    pub(crate) lock_modes: lock_mode::LockModes,
    /// Keeps every PE's segment mapped; dropped last.
    pub(crate) _resv: sys::Reservation,
}

static RUNTIME: Published<Runtime> = Published::new();
/// Set when the job is being torn down (`shmem_global_exit`, a fatal error): the
/// at-exit hook must not run a collective finalize then.
static TEARING_DOWN: AtomicBool = AtomicBool::new(false);

/// Whether the job is being torn down (see [`Runtime::fatal`]).
pub(crate) fn tearing_down() -> bool {
    TEARING_DOWN.load(Ordering::Relaxed)
}

/// The runtime, or `NotInitialized` naming `routine`.
#[inline(always)]
pub(crate) fn rt(routine: &'static str) -> Result<&'static Runtime> {
    match RUNTIME.get() {
        Some(rt) => Ok(rt),
        None => Err(Error::NotInitialized { routine }),
    }
}

/// The runtime if initialized.
///
/// Internal to the faces (this crate is `publish = false`): the reference is `'static`
/// only until the last `finalize`, which frees the runtime; callers must not keep it
/// across a `finalize` (OpenSHMEM forbids calls racing with finalize).
pub fn try_runtime() -> Option<&'static Runtime> {
    RUNTIME.get()
}

/// True between `init` and the matching `finalize`.
pub fn initialized() -> bool {
    RUNTIME.get().is_some()
}

/// Publishes the runtime, the last of the layers' states (`world::init`).
pub(crate) fn publish(rt: Box<Runtime>) {
    RUNTIME.publish(rt);
}

/// Unpublishes the runtime, the first of the layers' states (`world::finalize`); the
/// caller drops it once no PE reads this PE's segment any more.
pub(crate) fn unpublish() -> Option<Box<Runtime>> {
    RUNTIME.take()
}

impl Runtime {
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
