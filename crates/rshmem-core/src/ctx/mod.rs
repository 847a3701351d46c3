//! Communication contexts (`shmem_ctx_*`): independent streams of RMA and AMO operations,
//! each with its own ordering and completion state.
//!
//! A context owns its transport state ([`CtxState`]): on the node, what the copy engine
//! still owes it (every small operation completes at once) and the engine lane it is bound
//! to; through UCX, its own worker. `fence` and `quiet` on one context never wait for
//! another's transfers. Contexts made from a
//! team take PE numbers in that team. Each context is a 128-byte-aligned object of its own,
//! so threads on their own private contexts share no cache line; objects are pooled, so
//! creating and destroying contexts costs no memory growth.

pub mod request;
mod state;
mod worker;

pub(crate) use state::Contexts;

use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::Completion;
use crate::error::{At, Error, Result};
use crate::profile::CtxCounters;
use crate::runtime::members::Members;
use crate::runtime::{rt, Runtime};
use crate::transport::CtxState;

/// `SHMEM_CTX_SERIALIZED`: the context is used by one thread at a time.
pub const SERIALIZED: i64 = 1 << 0;
/// `SHMEM_CTX_PRIVATE`: the context is used only by the thread that created it.
pub const PRIVATE: i64 = 1 << 1;
/// `SHMEM_CTX_NOSTORE`: `quiet` and `fence` need not complete or order stores.
pub const NOSTORE: i64 = 1 << 2;
const ALL_OPTIONS: i64 = SERIALIZED | PRIVATE | NOSTORE;

/// Live contexts per PE at most (a guard against leaks, reported as a creation error).
pub const MAX_LIVE: usize = 1 << 20;

/// The team a context was made from, as the context layer sees it. The team layer
/// implements it, so contexts never name teams (a layer above them).
pub(crate) trait CtxTeam: std::fmt::Debug + Send + Sync {
    /// The team's live shareable contexts, kept by this layer (created, destroyed).
    fn shareable(&self) -> &Mutex<Vec<usize>>;
    /// The team itself, for `shmem_ctx_get_team`.
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;
}

/// A context's team: its members, which number the context's PEs, and the team.
pub(crate) type TeamOf = (Members, Arc<dyn CtxTeam>);

/// A communication context.
#[derive(Debug)]
#[repr(align(128))]
pub struct Ctx {
    options: i64,
    /// The team PE numbers refer to (`None`: the world, numbered as is).
    team: Option<TeamOf>,
    /// Set while the context is alive (so stale handles can be told apart).
    live: AtomicBool,
    state: CtxState,
    /// Its `shmemx_pcntr_*` counters (the default context keeps them per thread).
    pub(crate) prof: CtxCounters,
}

/// `SHMEM_CTX_DEFAULT`.
static DEFAULT: Ctx = Ctx {
    options: 0,
    team: None,
    live: AtomicBool::new(true),
    state: CtxState::new(),
    prof: CtxCounters::new(),
};

/// Recycled context objects, and how many are alive. Boxed: a live context's address is
/// its handle and must not move.
#[allow(clippy::vec_box)]
static POOL: Mutex<(Vec<Box<Ctx>>, usize)> = Mutex::new((Vec::new(), 0));

impl Ctx {
    /// The default context (`SHMEM_CTX_DEFAULT`).
    #[inline(always)]
    pub fn default_ctx() -> &'static Ctx {
        &DEFAULT
    }

    /// Whether this is the default context.
    pub fn is_default(&self) -> bool {
        std::ptr::eq(self, &DEFAULT)
    }

    /// The options it was created with.
    pub fn options(&self) -> i64 {
        self.options
    }

    /// Whether it was created `SHMEM_CTX_PRIVATE`.
    pub fn is_private(&self) -> bool {
        self.options & PRIVATE != 0
    }

    /// The team it was created from (`None`: the world).
    pub(crate) fn team(&self) -> Option<&Arc<dyn CtxTeam>> {
        self.team.as_ref().map(|t| &t.1)
    }

    /// Number of PEs addressable through it.
    pub fn n_pes(&self, rt: &Runtime) -> usize {
        self.team.as_ref().map_or(rt.npes, |t| t.0.size())
    }

    /// Checks a PE number of this context's team and returns its world number.
    #[inline(always)]
    pub(crate) fn pe(&self, rt: &Runtime, routine: &'static str, pe: i64) -> Result<usize> {
        match &self.team {
            None => rt.pe(routine, pe),
            Some((members, _)) => {
                let n = members.size();
                if pe >= 0 && (pe as u64) < n as u64 {
                    Ok(members.pe(pe as usize))
                } else {
                    Err(Error::PeOutOfRange {
                        routine,
                        arg: "pe",
                        pe,
                        npes: n,
                    })
                }
            }
        }
    }

    /// Whether it is alive: not destroyed (handles of destroyed contexts stay readable,
    /// as context objects are pooled and never freed while the runtime lives).
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    /// Whether transfers issued on it are still in flight (copy engine or UCX).
    pub fn pending(&self) -> bool {
        self.state.comp.pending()
    }

    /// The completion state and lane its non-blocking transfers are counted in.
    #[inline(always)]
    pub(crate) fn completion(&self) -> (&Completion, usize) {
        (&self.state.comp, self.state.lane)
    }

    /// Its transport state.
    #[inline(always)]
    pub(crate) fn state(&self) -> &CtxState {
        &self.state
    }

    /// `shmem_ctx_quiet`: completes every operation issued on this context.
    #[inline]
    pub(crate) fn quiet(&self, rt: &Runtime) -> Result<()> {
        rt.fabric.quiet(&self.state).at("shmem_ctx_quiet")?;
        crate::profile::quieted(Some(self));
        Ok(())
    }

    /// `shmem_ctx_fence`: orders this context's puts and AMOs to each PE.
    #[inline]
    pub(crate) fn fence(&self, rt: &Runtime) {
        rt.fabric.fence(&self.state)
    }
}

/// A context handle as the faces hold it.
pub type CtxHandle = NonNull<Ctx>;

thread_local! {
    /// This thread's own context for the runtime's traffic, if it has one
    /// ([`set_runtime_ctx`]).
    static RUNTIME_CTX: Cell<Option<NonNull<Ctx>>> = const { Cell::new(None) };
}

/// Threads that have a context of their own for the runtime's traffic. While none has,
/// [`runtime_ctx`] skips the thread-local: in the C and Fortran libraries each read of it
/// is a call into the dynamic loader (`__tls_get_addr`), on every lock and collective.
/// A thread sees its own [`set_runtime_ctx`]; any other thread finds no context in its
/// thread-local whatever count it reads.
static OWN_CTX_THREADS: AtomicUsize = AtomicUsize::new(0);

/// The context the runtime's own traffic travels on (collectives, locks, counts): the
/// thread's own where it has one (the non-blocking collectives' worker, so that it never
/// shares the default context with the program's threads), else the default context.
#[inline]
pub(crate) fn runtime_ctx() -> &'static CtxState {
    match own_runtime_ctx() {
        None => Ctx::default_ctx().state(),
        // SAFETY: `set_runtime_ctx`'s contract: the context lives until it is reset, and
        // only this thread sees it here.
        Some(c) => unsafe { &*c.as_ptr() }.state(),
    }
}

/// This thread's own context for the runtime's traffic, if it has one.
#[inline(always)]
fn own_runtime_ctx() -> Option<NonNull<Ctx>> {
    if OWN_CTX_THREADS.load(Ordering::Relaxed) == 0 {
        None
    } else {
        own_runtime_ctx_tls()
    }
}

/// Out of line: inlined, the compiler computes the thread-local's address (the loader
/// call) ahead of the count's test.
#[inline(never)]
fn own_runtime_ctx_tls() -> Option<NonNull<Ctx>> {
    RUNTIME_CTX.with(Cell::get)
}

/// Whether this thread has a context of its own for the runtime's traffic.
pub(crate) fn has_own_runtime_ctx() -> bool {
    own_runtime_ctx().is_some()
}

/// Gives this thread `ctx` for the runtime's traffic ([`runtime_ctx`]), or with `None`
/// takes it back.
///
/// # Safety
/// `ctx` lives, and is used by this thread only, until this thread calls this again.
pub(crate) unsafe fn set_runtime_ctx(ctx: Option<NonNull<Ctx>>) {
    let had = RUNTIME_CTX.with(|c| c.replace(ctx)).is_some();
    match (had, ctx.is_some()) {
        (false, true) => OWN_CTX_THREADS.fetch_add(1, Ordering::Relaxed),
        (true, false) => OWN_CTX_THREADS.fetch_sub(1, Ordering::Relaxed),
        _ => 0,
    };
}

/// A new context numbered by `team` (`None`: the world).
pub(crate) fn create_in(
    routine: &'static str,
    options: i64,
    team: Option<TeamOf>,
) -> Result<CtxHandle> {
    let rt = rt(routine)?;
    if options & !ALL_OPTIONS != 0 {
        return Err(Error::InvalidArgument {
            routine,
            arg: "options",
            reason: "unknown option bits (valid: SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE)",
        });
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if pool.1 >= MAX_LIVE {
        return Err(Error::InvalidArgument {
            routine,
            arg: "options",
            reason: "too many live contexts (1,048,576); destroy some first",
        });
    }
    let mut ctx = pool.0.pop().unwrap_or_else(|| {
        Box::new(Ctx {
            options: 0,
            team: None,
            live: AtomicBool::new(false),
            state: CtxState::new(),
            prof: CtxCounters::new(),
        })
    });
    pool.1 += 1;
    drop(pool);
    ctx.options = options;
    let listed = team
        .as_ref()
        .filter(|_| options & PRIVATE == 0)
        .map(|t| t.1.clone());
    ctx.team = team;
    ctx.state.lane = rt.fabric.engine.pick_lane();
    ctx.state.comp.reset();
    ctx.prof.reset();
    *ctx.live.get_mut() = true;
    let handle = NonNull::from(Box::leak(ctx));
    if let Some(t) = listed {
        let mut l = t.shareable().lock().unwrap_or_else(|e| e.into_inner());
        l.push(handle.as_ptr() as usize);
    }
    Ok(handle)
}

/// `shmem_ctx_create`: a new context on the world team.
pub fn create(options: i64) -> Result<CtxHandle> {
    create_in("shmem_ctx_create", options, None)
}

/// `shmem_ctx_destroy`: completes the context's operations (an implicit quiet) and
/// recycles it.
///
/// # Safety
/// `ctx` came from [`create`] or `team::create_ctx`, is not the default context, has not
/// been destroyed, and no other thread uses it.
pub unsafe fn destroy(ctx: CtxHandle) -> Result<()> {
    let rt = rt("shmem_ctx_destroy")?;
    // SAFETY: the caller's contract: a live context from `create`.
    let c = unsafe { ctx.as_ref() };
    if c.is_default() {
        return Err(Error::InvalidArgument {
            routine: "shmem_ctx_destroy",
            arg: "ctx",
            reason: "the default context cannot be destroyed",
        });
    }
    if let Some((_, t)) = &c.team {
        if c.options & PRIVATE == 0 {
            let mut l = t.shareable().lock().unwrap_or_else(|e| e.into_inner());
            l.retain(|&p| p != ctx.as_ptr() as usize);
        }
    }
    // SAFETY: the same contract.
    unsafe { release(rt, ctx) };
    Ok(())
}

/// Quiets and recycles a context.
///
/// # Safety
/// As [`destroy`], and it is unlinked from its team.
unsafe fn release(rt: &Runtime, ctx: CtxHandle) {
    // SAFETY: `ctx` came from `Box::leak` in `create_in` and is released once.
    let mut b = unsafe { Box::from_raw(ctx.as_ptr()) };
    // A failing quiet (a dead peer) ends the job elsewhere; the object is recycled anyway.
    let _ = b.quiet(rt);
    rt.fabric.release_ctx(&b.state);
    b.team = None;
    *b.live.get_mut() = false;
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    pool.1 -= 1;
    pool.0.push(b);
}

/// Destroys the shareable contexts made from `team` (on `shmem_team_destroy`).
pub(crate) fn destroy_shareable(rt: &Runtime, team: &dyn CtxTeam) {
    let list = std::mem::take(&mut *team.shareable().lock().unwrap_or_else(|e| e.into_inner()));
    for p in list {
        // SAFETY: the list holds live shareable contexts of this team (listed by
        // `create_in`, unlisted by `destroy`), each once; destroying the team ends them
        // (spec).
        unsafe { release(rt, NonNull::new_unchecked(p as *mut Ctx)) };
    }
}

/// Contexts alive on this PE (for leak tests).
pub fn live_count() -> usize {
    POOL.lock().unwrap_or_else(|e| e.into_inner()).1
}
