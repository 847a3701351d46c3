//! The fabric: the one place where data moves between PEs, and where it is ordered.
//!
//! Operations are addressed by (PE, [`SymAddr`]): a segment and an offset inside it, never a
//! raw virtual address, because each process maps the segments at its own addresses. At
//! init every PE gets a [`Route`]: shared memory ([`shm`]) for PEs whose segments this
//! process maps, the network for the others (or for all, with `SHMEM_TRANSPORT=ucx|ofi`).
//! The network is one of two, chosen per job: UCX ([`ucx`]) or libfabric ([`ofi`]).
//! [`Fabric`] owns the routes, the shared-memory transport, the copy engine that carries
//! large node-local non-blocking transfers, and the network; the routine families
//! (`ops`), contexts and collectives move and order data through it alone and never
//! match on a route. Dispatch is a `match` on the route (and, off the host, one on the
//! network), so the node-local hot path has no dynamic call, no lock and no allocation.
//!
//! A context owns its transport state ([`CtxState`]): what the copy engine owes it, and
//! its own UCX worker or libfabric endpoint, so threads on private contexts never contend
//! and `quiet` on one context completes that context's operations only.

pub(crate) mod deferred;
pub(crate) mod engine;
pub(crate) mod ofi;
pub(crate) mod shm;
pub(crate) mod ucx;

use std::sync::atomic::{fence, Ordering};

use deferred::Deferred;
use engine::{Completion, Engine};
use shm::Shm;

use crate::error::Result;
use crate::word::{AmoOp, Word};

/// Which symmetric segment of a PE an address lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Seg {
    /// The symmetric heap (runtime area followed by the user heap).
    Heap = 0,
    /// The executable's global and static variables (`.data`, `.bss`), when shared.
    Data = 1,
}

/// A location in a PE's symmetric memory, valid on every PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymAddr {
    /// The segment.
    pub seg: Seg,
    /// Byte offset inside the segment.
    pub off: usize,
}

impl SymAddr {
    /// Bit of [`SymAddr::to_word`] that says [`Seg::Data`].
    const DATA_BIT: u64 = 1 << 63;

    /// The location as one word, for a peer to read from symmetric scratch.
    pub(crate) fn to_word(self) -> u64 {
        let seg = match self.seg {
            Seg::Heap => 0,
            Seg::Data => Self::DATA_BIT,
        };
        seg | self.off as u64
    }

    /// The location [`SymAddr::to_word`] made `w` from.
    pub(crate) fn from_word(w: u64) -> SymAddr {
        SymAddr {
            seg: if w & Self::DATA_BIT == 0 {
                Seg::Heap
            } else {
                Seg::Data
            },
            off: (w & !Self::DATA_BIT) as usize,
        }
    }
}

/// How the runtime reaches one PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Shared memory on this host: its segments are mapped here.
    Shm,
    /// The network (UCX or libfabric): another host, or any PE under
    /// `SHMEM_TRANSPORT=ucx|ofi`.
    Net,
}

/// Bytes of a chunk collectives push in one message unless the network knows better
/// ([`Fabric::push_chunk`]). Over libfabric's tcp, 64 KiB chunks made a 1 MiB broadcast at
/// 2 PEs 148-165 -> 189-211 us.
pub(crate) const PUSH_CHUNK: usize = 256 << 10;

/// The network a job reaches other hosts through.
#[derive(Debug)]
// One per process, made at init: the variants' sizes do not matter, and boxing one would
// put an indirection on every network operation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Network {
    /// UCX (`libucp.so.0`).
    Ucx(ucx::Ucx),
    /// libfabric (`libfabric.so.1`).
    Ofi(ofi::Ofi),
}

impl Network {
    /// Drives the network's outstanding work once; whether anything happened.
    #[inline]
    fn progress(&self) -> bool {
        match self {
            Network::Ucx(u) => u.progress(),
            Network::Ofi(o) => o.progress(true),
        }
    }
}

/// The transport state a context owns.
#[derive(Debug)]
pub struct CtxState {
    /// What the copy engine (and UCX callbacks) still owe the context.
    pub(crate) comp: Completion,
    /// The engine lane the context's large node-local transfers go to.
    pub(crate) lane: usize,
    /// The context's UCX worker, made on its first operation through UCX.
    pub(crate) ucx: ucx::CtxSlot,
    /// The context's libfabric endpoint, made on its first operation through libfabric.
    pub(crate) ofi: ofi::CtxSlot,
}

impl CtxState {
    /// Nothing issued, lane 0, no worker yet.
    pub(crate) const fn new() -> CtxState {
        CtxState {
            comp: Completion::new(),
            lane: 0,
            ucx: ucx::CtxSlot::new(),
            ofi: ofi::CtxSlot::new(),
        }
    }
}

/// The aligned 4- or 8-byte word holding a value, for networks that run an atomic they
/// lack as a compare-and-swap loop on it (atomic with respect to every other atomic, as all
/// of a job's go through its network).
pub(crate) struct CswapWord {
    /// Where the word is.
    pub(crate) word: SymAddr,
    /// Its size (4 or 8).
    pub(crate) size: usize,
    shift: u32,
    mask: u64,
}

impl CswapWord {
    /// The word holding a `W` at `addr`.
    pub(crate) fn holding<W: Word>(addr: SymAddr) -> CswapWord {
        let size = W::SIZE.max(4);
        let shift = 8 * (addr.off % size) as u32;
        let mask = if W::SIZE >= 8 {
            u64::MAX
        } else {
            ((1u64 << (8 * W::SIZE)) - 1) << shift
        };
        CswapWord {
            word: SymAddr {
                seg: addr.seg,
                off: addr.off - addr.off % size,
            },
            size,
            shift,
            mask,
        }
    }

    /// Applies `op` to the value, starting from the word's value `old`; `cswap(old, new)`
    /// returns what the word held. Returns the value's previous value.
    pub(crate) fn apply<W: Word>(
        &self,
        op: AmoOp<W>,
        mut old: u64,
        mut cswap: impl FnMut(u64, u64) -> Result<u64>,
    ) -> Result<W> {
        loop {
            let mut v = W::from_bits64((old & self.mask) >> self.shift);
            // SAFETY: `v` is a live local of type `W`: the operation runs on it in place.
            let prev = unsafe { W::rmw(&mut v, op) };
            let new = (old & !self.mask) | ((v.to_bits64() << self.shift) & self.mask);
            let seen = cswap(old, new)?;
            if seen == old {
                return Ok(prev);
            }
            old = seen;
        }
    }
}

/// Whether `e`, from an operation through the network, says that the peer's process is
/// gone.
pub(crate) fn peer_gone(e: &crate::error::Error) -> bool {
    ucx::peer_gone(e) || ofi::peer_gone(e)
}

/// Direction of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    Put,
    Get,
}

impl Dir {
    /// (destination, source) of a transfer between `remote` and `local`.
    #[inline(always)]
    pub(crate) fn sides(self, remote: *mut u8, local: *mut u8) -> (*mut u8, *const u8) {
        match self {
            Dir::Put => (remote, local),
            Dir::Get => (local, remote),
        }
    }
}

/// Until when a push ([`Fabric::put_raise`]) may read its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceHeld {
    /// Until the call returns.
    UntilReturn,
    /// Until [`Fabric::settle_pushes`]: pushes in a row overlap (libfabric sends one while
    /// the next is issued), and their sources stay untouched until the settle.
    UntilSettled,
}

/// One contiguous transfer as it goes from a routine down to the route that carries it:
/// the context, and what moves where. (The routine is not carried: the caller names it in
/// any error, with [`At::at`](crate::error::At::at).)
#[derive(Clone, Copy)]
pub(crate) struct Xfer<'c> {
    pub(crate) ctx: &'c CtxState,
    pub(crate) dir: Dir,
    pub(crate) pe: usize,
    /// The peer's side, range-checked for `len` bytes.
    pub(crate) remote: SymAddr,
    /// This PE's side: readable (put) or writable (get) for `len` bytes.
    pub(crate) local: *mut u8,
    pub(crate) len: usize,
}

/// The routes to every PE and the transports behind them.
#[derive(Debug)]
pub(crate) struct Fabric {
    me: usize,
    routes: Box<[Route]>,
    shm: Shm,
    pub(crate) engine: Engine,
    net: Option<Network>,
    /// Every AMO goes through the network, node-local ones included: a word updated with
    /// CPU atomics by node-local PEs and through a network adapter by remote ones is not
    /// atomic across the two, so a job whose network's atomics are not CPU atomics keeps
    /// one atomicity domain (docs/decisions/0013-one-atomicity-domain.md). Where they are
    /// (UCX without an RDMA adapter), node-local AMOs are CPU atomics.
    amo_net: bool,
    /// Raises that go out at this PE's next wait ([`Fabric::raise_later`]).
    deferred: Deferred,
}

/// Dispatches a network operation: `$body` with `$n` bound to the transport.
macro_rules! on_net {
    ($net:expr, $n:ident => $body:expr) => {
        match $net {
            Network::Ucx($n) => $body,
            Network::Ofi($n) => $body,
        }
    };
}

impl Fabric {
    /// How many PEs (this one included) this PE reaches through shared memory.
    pub(crate) fn mapped_count(&self) -> usize {
        self.routes.iter().filter(|r| **r == Route::Shm).count()
    }

    pub(crate) fn new(
        me: usize,
        routes: Box<[Route]>,
        shm: Shm,
        engine: Engine,
        net: Option<Network>,
    ) -> Fabric {
        let amo_net = match &net {
            None => false,
            Some(Network::Ucx(u)) => !u.cpu_atomics(),
            // libfabric's providers apply atomics their own way (in an adapter, or in
            // software under their own locks), not known to be atomic with the CPU's.
            Some(Network::Ofi(_)) => true,
        };
        debug_assert_eq!(net.is_some(), routes.contains(&Route::Net));
        Fabric {
            me,
            routes,
            shm,
            engine,
            net,
            amo_net,
            deferred: Deferred::new(),
        }
    }

    /// Whether this process maps `pe`'s segments (load/store access).
    #[inline(always)]
    pub(crate) fn maps(&self, pe: usize) -> bool {
        self.routes[pe] == Route::Shm
    }

    /// Whether some PE is reached through the network (UCX or libfabric).
    #[inline(always)]
    pub(crate) fn has_network(&self) -> bool {
        self.net.is_some()
    }

    /// Whether the network is libfabric's (finalize then ends with the launcher's barrier:
    /// see `world::finalize`).
    pub(crate) fn network_is_ofi(&self) -> bool {
        matches!(self.net, Some(Network::Ofi(_)))
    }

    /// [`Fabric::has_network`] under its former name, which team/ still uses.
    #[inline(always)]
    pub(crate) fn has_ucx(&self) -> bool {
        self.has_network()
    }

    /// Whether this PE's atomics go through the network even to PEs it maps (see
    /// `amo_net`; for `SHMEM_INFO`).
    pub(crate) fn atomics_through_network(&self) -> bool {
        self.amo_net
    }

    fn ucx_net(&self) -> Option<&ucx::Ucx> {
        match &self.net {
            Some(Network::Ucx(u)) => Some(u),
            _ => None,
        }
    }

    /// With UCX: whether UCX allocated this PE's heap segment (one-sided on its
    /// shared-memory transports) rather than registered it.
    pub(crate) fn ucx_allocated_heap(&self) -> Option<bool> {
        self.ucx_net().map(|u| u.allocated_heap())
    }

    /// The network's name, if the job uses one (`SHMEM_INFO`).
    pub(crate) fn network_name(&self) -> Option<&'static str> {
        self.net.as_ref().map(|n| match n {
            Network::Ucx(_) => "UCX",
            Network::Ofi(_) => "libfabric",
        })
    }

    /// With libfabric: the provider, fabric and domain chosen (`SHMEM_INFO`).
    pub(crate) fn ofi_description(&self) -> Option<String> {
        match &self.net {
            Some(Network::Ofi(o)) => Some(o.describe()),
            _ => None,
        }
    }

    /// Whether `pe`, reached through the network, is known to have left the job after
    /// finalize.
    #[cold]
    pub(crate) fn has_left(&self, pe: usize) -> bool {
        self.net
            .as_ref()
            .is_some_and(|net| on_net!(net, n => n.has_left(pe)))
    }

    /// Records that `pe` is known to have entered `shmem_finalize` (through the network, a
    /// peer that vanished is taken as finalized only then: `Runtime::state_of`).
    #[cold]
    pub(crate) fn note_finalized(&self, pe: usize) {
        if let Some(net) = &self.net {
            on_net!(net, n => n.mark_finalized(pe));
        }
    }

    /// Whether `pe`, reached through the network, is known to have entered
    /// `shmem_finalize`.
    pub(crate) fn known_finalized(&self, pe: usize) -> bool {
        self.net
            .as_ref()
            .is_some_and(|net| on_net!(net, n => n.known_finalized(pe)))
    }

    /// When `e`, from an operation on `pe`, says that `pe`'s process is gone (network),
    /// records that it left and returns true. (Whether it finalized first is another
    /// matter: see [`Fabric::known_finalized`].)
    #[cold]
    pub(crate) fn note_left(&self, pe: usize, e: &crate::error::Error) -> bool {
        match &self.net {
            Some(net) if peer_gone(e) => {
                on_net!(net, n => n.mark_left(pe));
                true
            }
            _ => false,
        }
    }

    /// Bytes of the chunks a collective pushes to a network peer in one message each (a
    /// large broadcast, a ring reduction: a receiver copies one while the next travels).
    /// The same on every PE, since receivers count chunks: UCX's is agreed at init
    /// ([`ucx::Ucx::push_chunk`]), libfabric's is [`PUSH_CHUNK`].
    pub(crate) fn push_chunk(&self) -> usize {
        match &self.net {
            Some(Network::Ucx(u)) => u.push_chunk(),
            _ => PUSH_CHUNK,
        }
    }

    /// Whether every PE is reached through a network library that maps its memory (UCX's
    /// shared memory on one host), the same answer on every PE: teams then lie as
    /// [`Span::Mapped`](crate::team::Span::Mapped).
    pub(crate) fn network_maps_every_pe(&self) -> bool {
        matches!(&self.net, Some(Network::Ucx(u)) if u.maps_every_pe())
    }

    /// Whether [`Fabric::put_raise`] to a network peer carries its data in the message that
    /// raises the count (UCX's active messages, up to a MiB; see `transport::ucx`), so that
    /// a pushed ring moves bulk data faster than one-sided transfers do over TCP.
    pub(crate) fn pushes_data_in_messages(&self) -> bool {
        matches!(self.net, Some(Network::Ucx(_)))
    }

    #[inline(always)]
    fn net(&self) -> &Network {
        self.net
            .as_ref()
            .expect("a network route implies a network")
    }

    /// Address of `addr` in this PE's own mapping.
    #[inline(always)]
    pub(crate) fn local(&self, addr: SymAddr) -> *mut u8 {
        self.shm.addr(self.me, addr)
    }

    /// Reads a word of this PE's own segment (acquire).
    #[inline(always)]
    pub(crate) fn load_local<W: Word>(&self, addr: SymAddr) -> W {
        // SAFETY: our own slot is always mapped; `addr` is a checked or runtime offset,
        // aligned for `W` by its producer.
        unsafe { W::load(self.local(addr).cast::<W>()) }
    }

    /// Reads `out.len()` runtime words at `addr` on `pe` in one transfer (words their
    /// owner does not change meanwhile).
    ///
    /// `addr` is a runtime area offset with room for `out.len()` words.
    pub(crate) fn get_words(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        out: &mut [u64],
    ) -> Result<()> {
        // SAFETY: `out` is writable for its length; the runtime area holds the words.
        unsafe {
            self.xfer(Xfer {
                ctx,
                dir: Dir::Get,
                pe,
                remote: addr,
                local: out.as_mut_ptr().cast(),
                len: std::mem::size_of_val(out),
            })
        }
    }

    /// Stores a word of this PE's own segment (release).
    #[inline(always)]
    pub(crate) fn store_local(&self, addr: SymAddr, v: u64) {
        // SAFETY: our own slot is always mapped; runtime words are aligned.
        unsafe { u64::rmw(self.local(addr).cast::<u64>(), AmoOp::Set(v)) };
    }

    /// Reads (acquire) a runtime word of `pe` that only its owner stores (never a network
    /// atomic), if this process maps `pe`: a load, which works after `pe`'s process is
    /// gone (the mapping keeps its memory), unlike an atomic through UCX.
    pub(crate) fn load_mapped(&self, pe: usize, addr: SymAddr) -> Option<u64> {
        // SAFETY: `pe` is mapped (checked); runtime words are aligned.
        self.ptr(pe, addr)
            .map(|p| unsafe { u64::load(p.cast::<u64>()) })
    }

    /// Reads (acquire) a runtime word of `pe`, which this process does not map and which
    /// may have exited (liveness checks): an error with the peer-gone status
    /// ([`Fabric::note_left`]) rather than a hang once it has.
    #[cold]
    pub(crate) fn probe_word(&self, ctx: &CtxState, pe: usize, addr: SymAddr) -> Result<u64> {
        match &self.net {
            // libfabric may neither complete nor fail a read of an exited process.
            Some(Network::Ofi(o)) if self.routes[pe] == Route::Net => o.probe_word(pe, addr),
            // UCX fails it (peer error handling).
            _ => self.amo(ctx, pe, addr, AmoOp::Fetch),
        }
    }

    /// A load/store pointer to `addr` on `pe`, if this process maps it.
    #[inline]
    pub(crate) fn ptr(&self, pe: usize, addr: SymAddr) -> Option<*mut u8> {
        self.maps(pe).then(|| self.shm.addr(pe, addr))
    }

    /// Moves `len` bytes between local `local` and `remote` on `pe`; returns when `local`
    /// may be reused (put) or holds the data (get).
    ///
    /// # Safety
    /// `local` is readable (put) or writable (get) for `len` bytes; `remote` was
    /// range-checked for `len` bytes.
    #[inline(always)]
    pub(crate) unsafe fn xfer(&self, x: Xfer) -> Result<()> {
        // SAFETY: forwarded contract.
        if unsafe { self.copy_mapped(x.dir, x.pe, x.remote, x.local, x.len) } {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        on_net!(self.net(), n => unsafe { n.xfer(x) })
    }

    /// [`Fabric::xfer`]'s load/store part: moves the bytes and returns true when `pe` is
    /// mapped, returns false when the network must carry them. A hot caller tries it
    /// before it builds its [`Xfer`]: the backends take that struct by pointer, so it is
    /// written to the stack where it is built, and built before the route is known it
    /// costs every load/store transfer those stores (measured: 2-4 ns on an 8-byte put).
    ///
    /// # Safety
    /// As [`Fabric::xfer`].
    #[inline(always)]
    pub(crate) unsafe fn copy_mapped(
        &self,
        dir: Dir,
        pe: usize,
        remote: SymAddr,
        local: *mut u8,
        len: usize,
    ) -> bool {
        if self.routes[pe] != Route::Shm {
            return false;
        }
        let (dst, src) = dir.sides(self.shm.addr(pe, remote), local);
        // SAFETY: the caller's contract; `copy` (memmove) keeps a transfer with oneself
        // between overlapping buffers well defined.
        unsafe { shm::copy(src, dst, len) };
        true
    }

    /// A non-blocking transfer, complete at the context's quiet or when the completion
    /// that `counter` yields (called only when needed) is complete. `signal`, if any, is
    /// applied on `pe` after the data is delivered.
    ///
    /// # Safety
    /// `local` is valid for `len` bytes and untouched by the caller until the completion
    /// is complete; the completion outlives the transfer; `signal` is a checked, aligned
    /// word.
    #[inline(always)]
    pub(crate) unsafe fn xfer_nbi<'c>(
        &self,
        x: Xfer,
        counter: impl FnOnce() -> (&'c Completion, usize),
        signal: Option<(SymAddr, AmoOp<u64>)>,
    ) -> Result<()> {
        if self.routes[x.pe] == Route::Net {
            // SAFETY: forwarded contract.
            return on_net!(self.net(), n => unsafe { n.xfer_nbi(x, counter, signal) });
        }
        let Some((a, op)) = signal else {
            // SAFETY: forwarded contract; the route is load/store, so this moves the data.
            unsafe { self.submit_mapped(x.dir, x.pe, x.remote, x.local, x.len, counter) };
            return Ok(());
        };
        if self.amo_net || !self.engine.takes(x.len) {
            // Copied now, then signalled: through the network when it carries the atomics
            // (after the data), else as a release atomic.
            // SAFETY: forwarded contract.
            unsafe { self.xfer(x)? };
            return self.amo_post(x.ctx, x.pe, a, op);
        }
        let (comp, lane) = counter();
        let (dst, src) = x.dir.sides(self.shm.addr(x.pe, x.remote), x.local);
        let sig = Some((self.shm.addr(x.pe, a).cast::<u64>(), op));
        // SAFETY: both ranges are valid (checked / the caller's contract) and stay
        // untouched until `comp` completes.
        unsafe { self.engine.submit(lane, comp, dst, src, x.len, sig) };
        Ok(())
    }

    /// [`Fabric::xfer_nbi`] without a signal, when `pe` is mapped: submits the copy (or
    /// makes it, when it is too small to hand over) and returns true; returns false when
    /// the network must carry it. Tried before the [`Xfer`] is built, as
    /// [`Fabric::copy_mapped`] is.
    ///
    /// # Safety
    /// As [`Fabric::xfer_nbi`].
    #[inline(always)]
    pub(crate) unsafe fn submit_mapped<'c>(
        &self,
        dir: Dir,
        pe: usize,
        remote: SymAddr,
        local: *mut u8,
        len: usize,
        counter: impl FnOnce() -> (&'c Completion, usize),
    ) -> bool {
        if self.routes[pe] != Route::Shm {
            return false;
        }
        if !self.engine.takes(len) {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_mapped(dir, pe, remote, local, len) };
        }
        let (comp, lane) = counter();
        let (dst, src) = dir.sides(self.shm.addr(pe, remote), local);
        // SAFETY: both ranges are valid (checked / the caller's contract) and stay
        // untouched until `comp` completes.
        unsafe { self.engine.submit(lane, comp, dst, src, len, None) };
        true
    }

    /// Puts `x` (a put), then applies `op` to the signal word `sig` on its PE; the signal
    /// is never visible before the data.
    ///
    /// # Safety
    /// As [`Fabric::xfer`]; `sig` is a checked, aligned word.
    #[inline]
    pub(crate) unsafe fn put_signal(&self, x: Xfer, sig: SymAddr, op: AmoOp<u64>) -> Result<()> {
        debug_assert_eq!(x.dir, Dir::Put);
        let Xfer { ctx, pe, .. } = x;
        // SAFETY: forwarded contract.
        unsafe { self.xfer(x)? };
        if self.routes[pe] == Route::Net || self.amo_net {
            // The data may still be on its way (network) or went by another domain.
            self.fence(ctx);
        }
        // On shared memory the atomic is a release: the data is visible before it.
        self.amo_post(ctx, pe, sig, op)
    }

    /// Adds `by` to a runtime counter on `pe` that this PE alone raises (a sync flag, a
    /// message channel's arrival or acknowledgement count). A word with one writer needs no
    /// common atomicity domain with other writers, so a peer this process maps gets a CPU
    /// atomic even when the job's other atomics go through the network (node-local phases of
    /// collectives then cost what they cost on one host).
    #[inline]
    pub(crate) fn raise(&self, ctx: &CtxState, pe: usize, addr: SymAddr, by: u64) -> Result<()> {
        match self.routes[pe] {
            Route::Shm => {
                let p = self.shm.addr(pe, addr).cast::<u64>();
                debug_assert!(p.is_aligned());
                // SAFETY: a runtime word of a mapped segment, aligned by the layout; the
                // atomic is a release, so what this PE stored before is visible first.
                unsafe { u64::rmw(p, AmoOp::Add(by)) };
                Ok(())
            }
            // Through UCX an active message from the service worker (complete once sent;
            // teardown flushes what a full socket left in UCX), or a posted atomic counted
            // for quiet (`transport::ucx::raise`).
            Route::Net => match self.net() {
                Network::Ucx(u) => u.raise(ctx, pe, addr, by, self.deferred.take_for(pe)),
                Network::Ofi(o) => o.raise(ctx, pe, addr, by),
            },
        }
    }

    /// [`Fabric::raise`], where a peer through the network may get it at this PE's next
    /// wait for a peer, `team_destroy` or finalize instead of now ([`deferred`]): for
    /// counts nobody needs before then, such as a channel's acknowledgements.
    #[inline]
    pub(crate) fn raise_later(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        by: u64,
    ) -> Result<()> {
        match (self.routes[pe], &self.net) {
            (Route::Net, Some(net)) => self.deferred.add(net, ctx, pe, addr, by),
            _ => self.raise(ctx, pe, addr, by),
        }
    }

    /// Sends the raises deferred by [`Fabric::raise_later`] now, on `ctx`; whether there
    /// were any.
    pub(crate) fn flush_deferred(&self, ctx: &CtxState) -> Result<bool> {
        match &self.net {
            Some(net) if self.deferred.any() => {
                self.deferred.flush(net, ctx)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Puts `x` (a put), then [`Fabric::raise`]s `sig` on its PE by one; the count is
    /// never visible before the data, nor before the data of the `seq` pushes to `sig`
    /// before it (`seq` counts them, as the owner of `sig` counts arrivals on it). `held`
    /// says until when the source may still be read.
    ///
    /// # Safety
    /// As [`Fabric::xfer`], the source readable and unchanged as long as `held` says;
    /// `sig` is a runtime word only this PE raises, by this call.
    #[inline]
    pub(crate) unsafe fn put_raise(
        &self,
        x: Xfer,
        sig: SymAddr,
        seq: u64,
        held: SourceHeld,
    ) -> Result<()> {
        debug_assert_eq!(x.dir, Dir::Put);
        match (self.routes[x.pe], &self.net) {
            (Route::Net, Some(Network::Ucx(u))) => {
                let riders = self.deferred.take_for(x.pe);
                // SAFETY: forwarded contract.
                return unsafe { u.put_raise(x, sig, riders) };
            }
            (Route::Net, Some(Network::Ofi(o))) => {
                // SAFETY: forwarded contract.
                return unsafe { o.put_raise(x, sig, seq, held) };
            }
            _ => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.xfer(x)? };
        self.raise(x.ctx, x.pe, sig, 1)
    }

    /// Waits until no push made with [`SourceHeld::UntilSettled`] reads its source any
    /// more.
    pub(crate) fn settle_pushes(&self) -> Result<()> {
        match &self.net {
            Some(Network::Ofi(o)) => o.settle_pushes(),
            _ => Ok(()),
        }
    }

    /// Applies `op` to the word at `addr` on `pe` and returns the previous value.
    ///
    /// `addr` is range-checked and aligned for `W` by the caller.
    #[inline(always)]
    pub(crate) fn amo<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        if self.amo_net || self.routes[pe] == Route::Net {
            return on_net!(self.net(), n => n.amo(ctx, pe, addr, op));
        }
        let p = self.shm.addr(pe, addr).cast::<W>();
        debug_assert!(p.is_aligned());
        // SAFETY: the caller checked range and alignment; the word lives in a shared
        // mapping that outlives the call.
        Ok(unsafe { W::rmw(p, op) })
    }

    /// An atomic whose previous value nobody needs (signals, flags, counters): through the
    /// network it is posted without a round trip, and delivered in order with later operations
    /// after a fence.
    #[inline(always)]
    pub(crate) fn amo_post<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<()> {
        // This PE's own word is read with loads too (`shmem_signal_fetch`, the program's
        // own reads): an update of it is complete on return.
        if (self.amo_net && pe != self.me) || self.routes[pe] == Route::Net {
            return on_net!(self.net(), n => n.amo_post(ctx, pe, addr, op));
        }
        self.amo(ctx, pe, addr, op).map(drop)
    }

    /// Runs `f` on `len` bytes at `addr` on `pe`: in place where mapped, else on a copy
    /// fetched into `scratch` (collectives read their peers' sources this way; the copy
    /// is 8-byte aligned).
    ///
    /// # Safety
    /// `addr` was range-checked for `len` bytes, and the bytes do not change during the
    /// call.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn view<R>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        len: usize,
        scratch: &mut Vec<u64>,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R> {
        if let Some(p) = self.ptr(pe, addr) {
            // SAFETY: mapped, range-checked and stable (the caller's contract).
            return Ok(f(unsafe { std::slice::from_raw_parts(p, len) }));
        }
        // Words, so the copy is 8-byte aligned like the elements it holds.
        if scratch.len() < len.div_ceil(8) {
            scratch.resize(len.div_ceil(8), 0);
        }
        let buf = scratch.as_mut_ptr().cast::<u8>();
        // SAFETY: `scratch` holds at least `len` writable bytes; a get fills them.
        unsafe {
            self.xfer(Xfer {
                ctx,
                dir: Dir::Get,
                pe,
                remote: addr,
                local: buf,
                len,
            })?;
            Ok(f(std::slice::from_raw_parts(buf, len)))
        }
    }

    /// Orders the context's earlier puts and AMOs to each PE before its later ones.
    /// Copies still in the engine are completed first, as later ones must not overtake
    /// them.
    #[inline]
    pub(crate) fn fence(&self, ctx: &CtxState) {
        if ctx.comp.pending() {
            self.wait_complete(&ctx.comp, ctx.lane);
        }
        if let Some(net) = &self.net {
            on_net!(net, n => n.fence(ctx));
        }
        fence(Ordering::Release);
    }

    /// Completes every operation issued on the context.
    #[inline]
    pub(crate) fn quiet(&self, ctx: &CtxState) -> Result<()> {
        if let Some(net) = &self.net {
            on_net!(net, n => n.quiet(ctx))?;
        }
        if ctx.comp.pending() {
            self.wait_complete(&ctx.comp, ctx.lane);
        }
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// Waits until `comp` is complete: running the copy engine's queued jobs of `lane`,
    /// and driving the network (UCX's completion callbacks run only in progress calls: a
    /// flush does not wait for every get's callback).
    #[cold]
    fn wait_complete(&self, comp: &Completion, lane: usize) {
        if self.net.is_none() {
            return self.engine.wait(lane, comp);
        }
        let mut w = rshmem_util::Waiter::new();
        let mut net = self.net_wait_for_own();
        while comp.pending() {
            if !self.engine.help(lane) {
                net.pause(&mut w);
            }
        }
    }

    /// Completes every transfer of every context and request of this PE: the copy
    /// engine's, and every UCX worker's or libfabric endpoint's.
    pub(crate) fn drain(&self) -> Result<()> {
        self.engine.drain();
        match &self.net {
            Some(net) => on_net!(net, n => n.flush_all()),
            None => Ok(()),
        }
    }

    /// Drives the network's outstanding work once (a test routine, which polls, calls it;
    /// a wait uses [`Fabric::net_wait`]).
    #[inline(always)]
    pub(crate) fn progress(&self) {
        if let Some(net) = &self.net {
            net.progress();
        }
    }

    /// Serves what has arrived from peers (their counts and data by message are applied
    /// when this PE reads its network queue): before a wait concludes from a peer's state
    /// that the peer skipped its part, so that a message delivered before that state
    /// changed counts.
    #[cold]
    pub(crate) fn serve_arrived(&self) {
        if let Some(net) = &self.net {
            for _ in 0..1024 {
                if !net.progress() {
                    break;
                }
            }
        }
    }

    /// The network side of one wait for what peers deliver (a flag, a count, a lock word):
    /// see [`NetWait`]. Its first pause sends the raises this PE deferred
    /// ([`Fabric::raise_later`]), on `ctx`: a PE that waits for a peer owes nothing a peer
    /// may be waiting for.
    #[inline(always)]
    pub(crate) fn net_wait<'f>(&'f self, ctx: &'f CtxState) -> NetWait<'f> {
        self.wait_with(PEERS_OWN_EVERY, Some((&self.deferred, ctx)))
    }

    /// [`Fabric::net_wait`] for a wait on this PE's own operations (a request, a
    /// non-blocking transfer), which complete on the contexts' workers: those are driven
    /// at every pause. It sends no deferred raise: what it waits for needs only the peers'
    /// progress.
    #[inline(always)]
    pub(crate) fn net_wait_for_own(&self) -> NetWait<'_> {
        self.wait_with(1, None)
    }

    #[inline(always)]
    fn wait_with<'f>(
        &'f self,
        own_every: u32,
        flush: Option<(&'f Deferred, &'f CtxState)>,
    ) -> NetWait<'f> {
        NetWait {
            net: self.net.as_ref(),
            driving: None,
            since: None,
            pauses: 0,
            own_every,
            own_owed: false,
            flush,
        }
    }

    /// Connects the context to every PE reached through UCX now (init, for the default
    /// context: wire-up needs both sides to make progress, which every PE does at init).
    /// libfabric connects on first use (its progress thread serves the peer's side).
    pub(crate) fn wire_up(&self, ctx: &CtxState) -> Result<()> {
        match self.ucx_net() {
            Some(u) => u.wire_up(ctx),
            None => Ok(()),
        }
    }

    /// Finalize's last flush: delivers what the context still holds to peers that need it,
    /// ignoring those that have already closed (they need nothing more).
    pub(crate) fn flush_at_teardown(&self, ctx: &CtxState) {
        match &self.net {
            Some(Network::Ucx(u)) => u.flush_at_teardown(ctx),
            Some(Network::Ofi(o)) => {
                let _ = o.quiet(ctx);
                // The counts raised on their own endpoint too ([`ofi::Ofi::raise`]).
                let _ = o.quiet_signals();
            }
            None => {}
        }
    }

    /// Finalize's last sync is next: its counts must be known delivered once flushed (see
    /// `Ucx::raise_by_atomics`).
    pub(crate) fn last_sync_next(&self) {
        if let Some(net) = &self.net {
            on_net!(net, n => n.raise_by_atomics());
        }
    }

    /// Returns a context's UCX worker or libfabric endpoint to the pool (the context is
    /// being destroyed or recycled; it was quieted).
    pub(crate) fn release_ctx(&self, ctx: &CtxState) {
        if let Some(net) = &self.net {
            on_net!(net, n => n.release(ctx));
        }
    }
}

/// What a thread waiting for a condition does between two checks of it: without a network,
/// back off by the waiting policy. With a network, claim the service worker (UCX) or
/// endpoint (libfabric) from the progress thread once the wait has lasted [`CLAIM_AFTER`]
/// ([`rshmem_util::handoff`]: its event fd leaves the thread's epoll set, no wake-up) and
/// drive the network (a peer's operation on this PE is served at once, and work seen keeps
/// the wait in its spin and yield phases); in the sleep phase, sleep on the service's event
/// fd, so the network wakes the wait itself rather than the progress thread or a timer.
/// The claim is handed back when the wait ends (drop): the service armed and its fd
/// returned to the thread, which wakes only if an event is pending.
///
/// Before, the thread kept the fd during short waits and woke for every arrival a waiter
/// served anyway (and competed with it for the network): over TCP that cost a 2-PE sync
/// about 8 system calls of the thread and a wake-up (strace, perf: issue 27), and a
/// libfabric fetching atomic 32 us where Sandia OpenSHMEM takes 16 (issue 30).
///
/// Peers' operations arrive on the service; the contexts' workers or endpoints only
/// complete this PE's own (and take the acknowledgements of its posted ones), so a wait for
/// peers drives them every [`PEERS_OWN_EVERY`] pauses, after the service and not in a pause
/// whose service found work: over TCP each one's progress is a system call, and driven
/// before the service they made a 2-PE barrier see its peer's message about 0.5 us later
/// (TSC stamps, issue 27).
#[derive(Debug)]
pub(crate) struct NetWait<'f> {
    net: Option<&'f Network>,
    driving: Option<Claim<'f>>,
    /// When the first pause began (read once the wait has paused a few times).
    since: Option<std::time::Instant>,
    pauses: u32,
    /// The contexts' workers are driven every this many pauses.
    own_every: u32,
    /// A pause skipped the contexts' workers (its service found work): the next drives them.
    own_owed: bool,
    /// Deferred raises to send at the first pause, and the context to send them on.
    flush: Option<(&'f Deferred, &'f CtxState)>,
}

/// A waiting thread's claim on the network's service ([`NetWait`]); held for its drop.
#[derive(Debug)]
enum Claim<'f> {
    Ucx(rshmem_ucx::Driving<'f>),
    Ofi(rshmem_ofi::Driving<'f>),
    /// The progress thread cannot hand the service over (no wait fd, or no thread).
    None,
}

/// How often a wait for peers drives the contexts' workers ([`NetWait`]): often enough that
/// an operation of this PE that UCX queued (a full socket) goes out within a few pauses.
const PEERS_OWN_EVERY: u32 = 8;

/// How long a wait lasts before it claims the service worker ([`NetWait`]). Claiming and
/// handing back cost about 3 system calls: over UCX's shared-memory transports, where a
/// 2-PE barrier takes 0.3 us and nothing wakes the progress thread, a claim in every wait
/// made it 3.3 us; over TCP a message takes about 10 us, so a wait that claims after 3 us
/// still has the worker when the message comes.
const CLAIM_AFTER: std::time::Duration = std::time::Duration::from_micros(3);

/// Pauses between two clock readings of a wait that has not claimed yet.
const CLAIM_CHECK_EVERY: u32 = 4;

impl NetWait<'_> {
    /// Hands the service worker back to the progress thread (claimed again at the next
    /// pause): before anything that may block or sleep outside the wait's pauses (an overdue
    /// wait's checks, which read peers and may sleep a grace period), since peers may need
    /// this PE's service meanwhile.
    #[cold]
    pub(crate) fn release(&mut self) {
        match self.driving.take() {
            Some(Claim::Ucx(c)) => c.hand_back(),
            Some(Claim::Ofi(c)) => c.hand_back(),
            Some(Claim::None) | None => {}
        }
    }

    /// One pause of a wait whose condition was false.
    #[inline(always)]
    pub(crate) fn pause(&mut self, w: &mut rshmem_util::Waiter) {
        let Some(net) = self.net else {
            return w.snooze();
        };
        if self.pauses == 0 {
            // The service stays the waiters' while waits keep driving it (this pause
            // does, below); a wait that never pauses drives nothing, so it does not count.
            match net {
                Network::Ucx(u) => u.touch(),
                Network::Ofi(o) => o.touch(),
            }
            if let Some((d, ctx)) = self.flush.take().filter(|(d, _)| d.any()) {
                // A raise to a peer that failed: the wait's own checks report the failure.
                let _ = d.flush(net, ctx);
            }
        }
        if self.driving.is_none() && self.pauses.is_multiple_of(CLAIM_CHECK_EVERY) {
            self.claim_if_due();
        }
        let own = self.own_owed || self.pauses.is_multiple_of(self.own_every);
        self.pauses = self.pauses.wrapping_add(1);
        match net {
            Network::Ofi(o) => {
                let mut woken = o.progress(own);
                w.snooze_with(|nap| woken = o.sleep(nap));
                if woken {
                    w.keep_hot();
                }
            }
            Network::Ucx(u) => {
                // The service first: what a wait for peers waits for comes there. When it
                // found work, such a wait checks before one more system call, and owes the
                // contexts' workers to the next pause (so a busy service never starves them).
                let served = u.serve();
                let skip = own && served && self.own_every > 1;
                self.own_owed = skip;
                if (own && !skip && u.progress_contexts()) || served {
                    w.keep_hot();
                }
                w.snooze_with(|nap| u.sleep(nap));
            }
        }
    }

    /// Claims the service once the wait has lasted [`CLAIM_AFTER`].
    #[inline(never)]
    fn claim_if_due(&mut self) {
        let now = std::time::Instant::now();
        let Some(net) = self.net else { return };
        if now.duration_since(*self.since.get_or_insert(now)) < CLAIM_AFTER {
            return;
        }
        self.driving = Some(match net {
            Network::Ucx(u) => Claim::Ucx(u.drive()),
            Network::Ofi(o) => o.drive().map_or(Claim::None, Claim::Ofi),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sym_addr_round_trips_through_a_word() {
        for a in [
            SymAddr {
                seg: Seg::Heap,
                off: 0,
            },
            SymAddr {
                seg: Seg::Data,
                off: 0x1234_5678,
            },
            SymAddr {
                seg: Seg::Heap,
                off: (1 << 62) + 8,
            },
        ] {
            assert_eq!(SymAddr::from_word(a.to_word()), a);
        }
    }
}
