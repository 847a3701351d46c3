//! Communication contexts: [`Ctx`], its modes ([`Shared`], [`Serialized`], [`Private`])
//! and their creation from the guard or a team.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use rshmem_core::team::Team as CoreTeam;
use rshmem_core::ThreadLevel;

use crate::error::{Error, Result};
use crate::raw::{self, RawCtx};
use crate::shmem::{ok, on_init_thread, Shmem};
use crate::team::TeamRef;
use rshmem_core::profile::Pcntr;

/// The routine name of an operation: the plain C name on the default context, the
/// `_ctx_` one on a created context (`routine!(state, "put")` is `shmem_put` or
/// `shmem_ctx_put`; `routine!(x state, "put_nbe")` the `shmemx_` names).
macro_rules! routine {
    ($st:expr, $name:literal) => {
        $st.routine(concat!("shmem_", $name), concat!("shmem_ctx_", $name))
    };
    (x $st:expr, $name:literal) => {
        $st.routine(concat!("shmemx_", $name), concat!("shmemx_ctx_", $name))
    };
}
pub(crate) use routine;

mod sealed {
    /// What a mode decides, hidden from the public trait.
    #[allow(unreachable_pub)]
    pub trait Mode: 'static {
        /// The runtime's option bits.
        const OPTIONS: i64;
        /// Usable by several threads at once (needs `ThreadLevel::Multiple`).
        const SHARED: bool;
        /// Confined to the creating thread.
        const PRIVATE: bool;
        /// Name in `Debug` output.
        const NAME: &'static str;
        /// A type with the auto traits a context of this mode has.
        type Marker;
    }
}

/// How a context may be used by threads, decided in its type: [`Shared`], [`Serialized`]
/// or [`Private`]. Sealed.
pub trait CtxMode: sealed::Mode {}

/// Context mode: any thread, any time (no option bits). [`Ctx<Shared>`](Ctx) is `Send` and
/// `Sync`; creating one needs [`ThreadLevel::Multiple`]. The default context has this mode.
#[derive(Debug)]
pub enum Shared {}

/// Context mode `SHMEM_CTX_SERIALIZED`: one thread at a time. [`Ctx<Serialized>`](Ctx) is
/// `Send` but not `Sync`: move it between threads, or put it in a `Mutex` to share it.
#[derive(Debug)]
pub enum Serialized {}

/// Context mode `SHMEM_CTX_PRIVATE`: only the thread that created it, which also destroys
/// it. [`Ctx<Private>`](Ctx) is neither `Send` nor `Sync`.
#[derive(Debug)]
pub enum Private {}

impl sealed::Mode for Shared {
    const OPTIONS: i64 = 0;
    const SHARED: bool = true;
    const PRIVATE: bool = false;
    const NAME: &'static str = "Shared";
    type Marker = ();
}
impl sealed::Mode for Serialized {
    const OPTIONS: i64 = rshmem_core::ctx::SERIALIZED;
    const SHARED: bool = false;
    const PRIVATE: bool = false;
    const NAME: &'static str = "Serialized";
    type Marker = std::cell::Cell<()>;
}
impl sealed::Mode for Private {
    const OPTIONS: i64 = rshmem_core::ctx::PRIVATE;
    const SHARED: bool = false;
    const PRIVATE: bool = true;
    const NAME: &'static str = "Private";
    type Marker = *const ();
}
impl CtxMode for Shared {}
impl CtxMode for Serialized {}
impl CtxMode for Private {}

const OTHER_THREAD: &str = "a call from a thread other than the one that initialized OpenSHMEM";

/// What every operation of a context needs: the runtime's context, the size of the team
/// its PE numbers index, and whether calls are confined to the initializing thread.
#[derive(Debug)]
pub(crate) struct CtxState {
    raw: RawCtx,
    me: usize,
    npes: usize,
    /// `Some(provided level)` when the thread level (Single, Funneled) confines calls to
    /// the initializing thread and the context could have left it.
    bound: Option<ThreadLevel>,
}

impl CtxState {
    /// The runtime's context.
    #[inline(always)]
    pub(crate) fn raw(&self) -> &RawCtx {
        &self.raw
    }

    /// `default_name` on the default context, `ctx_name` on others.
    #[inline(always)]
    pub(crate) fn routine(
        &self,
        default_name: &'static str,
        ctx_name: &'static str,
    ) -> &'static str {
        if self.raw.get().is_default() {
            default_name
        } else {
            ctx_name
        }
    }

    /// Checks the calling thread against the thread level, and `pe` against the team.
    #[inline]
    pub(crate) fn check(&self, routine: &'static str, pe: usize) -> Result<()> {
        if let Some(provided) = self.bound {
            if !on_init_thread() {
                return Err(Error::ThreadLevel {
                    routine,
                    what: OTHER_THREAD,
                    required: ThreadLevel::Serialized,
                    provided,
                });
            }
        }
        if pe < self.npes {
            Ok(())
        } else {
            Err(Error::PeOutOfRange {
                routine,
                pe,
                npes: self.npes,
            })
        }
    }
}

/// A communication context (`shmem_ctx_t`): an independent stream of RMA, atomic and
/// signal operations, with its own ordering ([`fence`](Self::fence)) and completion
/// ([`quiet`](Self::quiet)). A quiet on one context does not wait for another's
/// operations, so threads (or phases of a program) on their own contexts complete their
/// own work only.
///
/// * Made by [`Shmem::create_ctx`] (on the world team) or [`TeamRef::create_ctx`] (PE
///   numbers are then ranks in that team, checked against its size). Creation is local
///   (not collective) and may fail; failure is an error, never an abort.
/// * The mode `M` says which threads may use it: [`Private`] (the creating thread only:
///   `!Send + !Sync`), [`Serialized`] (one thread at a time: `Send + !Sync`) or
///   [`Shared`] (any thread: `Send + Sync`; needs [`ThreadLevel::Multiple`]).
/// * `nostore` (`SHMEM_CTX_NOSTORE`) lets `quiet` and `fence` skip completing and
///   ordering stores; on this implementation it changes nothing.
/// * It borrows the guard (or the team it was made from), so it cannot outlive
///   finalization, and its team cannot be destroyed while it lives.
/// * Dropping it destroys it (`shmem_ctx_destroy`), which completes its operations first
///   (an implicit [`quiet`](Self::quiet)).
///
/// The guard's own operations ([`Shmem::put`] and friends) use the *default context*,
/// [`Shmem::default_ctx`], a `Ctx<Shared>` that is never destroyed.
///
/// ```
/// use rshmem::{Private, Shmem};
/// let shmem = Shmem::init()?;
/// let (me, n) = (shmem.my_pe(), shmem.n_pes());
/// let inbox = shmem.alloc(1, 0usize)?;
/// let ctx = shmem.create_ctx::<Private>(false)?;
/// ctx.put(&inbox, 0, &[me], (me + 1) % n)?;
/// ctx.quiet(); // this context's puts are complete
/// drop(ctx);
/// shmem.barrier_all();
/// assert_eq!(inbox.load(0), (me + n - 1) % n);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Threads each with a private context, under [`ThreadLevel::Multiple`]:
///
/// ```
/// use rshmem::{Private, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let (me, n) = (shmem.my_pe(), shmem.n_pes());
/// let mut slots = shmem.alloc(4 * n, 0u64)?;
/// let remote = &slots.share(); // shareable between threads
/// std::thread::scope(|s| {
///     for t in 0..4 {
///         let shmem = &shmem;
///         s.spawn(move || {
///             let ctx = shmem.create_ctx::<Private>(false).unwrap();
///             ctx.p(remote, 4 * me + t, t as u64 + 1, (me + 1) % n).unwrap();
///         }); // `ctx` dropped: destroyed, so its put is complete
///     }
/// });
/// shmem.barrier_all();
/// let left = (me + n - 1) % n;
/// assert_eq!(slots.to_vec()[4 * left..4 * left + 4], [1, 2, 3, 4]);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// A private context cannot leave its thread:
///
/// ```compile_fail,E0277
/// use rshmem::{Private, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let ctx = shmem.create_ctx::<Private>(false)?;
/// std::thread::scope(|s| {
///     s.spawn(move || ctx.quiet()); // error: `*const ()` cannot be sent between threads
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// A serialized context moves between threads, but is not shared by them:
///
/// ```
/// use rshmem::{Serialized, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let ctx = shmem.create_ctx::<Serialized>(false)?;
/// std::thread::scope(|s| {
///     s.spawn(move || ctx.quiet()); // moved: fine
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// ```compile_fail,E0277
/// use rshmem::{Serialized, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let ctx = shmem.create_ctx::<Serialized>(false)?;
/// let ctx = &ctx;
/// std::thread::scope(|s| {
///     s.spawn(move || ctx.quiet()); // error: `Cell<()>` cannot be shared between threads
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// A shared one is shared, and needs [`ThreadLevel::Multiple`]:
///
/// ```
/// use rshmem::{Error, Shared, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let ctx = shmem.create_ctx::<Shared>(false)?;
/// let ctx = &ctx;
/// std::thread::scope(|s| {
///     s.spawn(move || ctx.quiet());
///     s.spawn(move || ctx.fence());
/// });
/// # drop(ctx);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// ```
/// use rshmem::{Error, Shared, Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Serialized)?;
/// let e = shmem.create_ctx::<Shared>(false).unwrap_err();
/// assert!(matches!(e, Error::ThreadLevel { required: ThreadLevel::Multiple, .. }));
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// A context cannot outlive the team it was made from:
///
/// ```compile_fail,E0505
/// use rshmem::{Private, Shmem, TeamConfig};
/// let shmem = Shmem::init()?;
/// let team = shmem.world().split_strided(0, 1, 1, &TeamConfig::default())?.unwrap();
/// let ctx = team.create_ctx::<Private>(false)?;
/// drop(team); // error: cannot move out of `team` because it is borrowed
/// ctx.quiet();
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct Ctx<'t, M: CtxMode> {
    pub(crate) state: CtxState,
    _life: PhantomData<&'t Shmem>,
    _mode: PhantomData<<M as sealed::Mode>::Marker>,
}

impl<M: CtxMode> fmt::Debug for Ctx<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("mode", &M::NAME)
            .field("default", &self.is_default())
            .field("my_pe", &self.state.me)
            .field("n_pes", &self.state.npes)
            .finish()
    }
}

impl Ctx<'_, Shared> {
    /// The default context, as the guard holds it.
    pub(crate) fn default_for(me: usize, npes: usize, level: ThreadLevel) -> Self {
        Ctx::from_state(CtxState {
            raw: RawCtx::default_ctx(),
            me,
            npes,
            bound: (level <= ThreadLevel::Funneled).then_some(level),
        })
    }
}

impl<'t, M: CtxMode> Ctx<'t, M> {
    /// Sandia OpenSHMEM's performance counters of this context (`shmemx_pcntr_get_all`):
    /// writes and reads issued and completed while counting was on
    /// ([`Shmem::pcontrol`](crate::Shmem::pcontrol) or `SHMEM_PROFILE`).
    pub fn pcntr(&self) -> Pcntr {
        rshmem_core::profile::pcntr(self.state.raw().get())
    }

    fn from_state(state: CtxState) -> Self {
        Ctx {
            state,
            _life: PhantomData,
            _mode: PhantomData,
        }
    }

    /// Creates a context on `team` (`None`: the world) of `npes` PEs, where this PE is
    /// `me`.
    fn create(
        shmem: &'t Shmem,
        routine: &'static str,
        team: Option<&Arc<CoreTeam>>,
        (me, npes): (usize, usize),
        nostore: bool,
    ) -> Result<Self> {
        let provided = shmem.query_thread();
        let confined = provided <= ThreadLevel::Funneled;
        if confined && !on_init_thread() {
            return Err(Error::ThreadLevel {
                routine,
                what: OTHER_THREAD,
                required: ThreadLevel::Serialized,
                provided,
            });
        }
        if M::SHARED && provided < ThreadLevel::Multiple {
            return Err(Error::ThreadLevel {
                routine,
                what: "a Shared context (used by several threads at once)",
                required: ThreadLevel::Multiple,
                provided,
            });
        }
        let nostore = if nostore {
            rshmem_core::ctx::NOSTORE
        } else {
            0
        };
        let raw = RawCtx::create(team, M::OPTIONS | nostore)?;
        Ok(Ctx::from_state(CtxState {
            raw,
            me,
            npes,
            // A private context never leaves the (checked) creating thread.
            bound: (confined && !M::PRIVATE).then_some(provided),
        }))
    }

    /// This PE's number in the context's team (its world number for the default context
    /// and contexts made by [`Shmem::create_ctx`]).
    pub fn my_pe(&self) -> usize {
        self.state.me
    }

    /// The number of PEs of the context's team: PE arguments are `0..n_pes()`.
    pub fn n_pes(&self) -> usize {
        self.state.npes
    }

    /// Whether this is the default context ([`Shmem::default_ctx`]).
    pub fn is_default(&self) -> bool {
        self.state.raw.get().is_default()
    }

    /// Whether the context was created with `nostore` (`SHMEM_CTX_NOSTORE`).
    pub fn is_nostore(&self) -> bool {
        self.state.raw.get().options() & rshmem_core::ctx::NOSTORE != 0
    }

    /// Whether non-blocking transfers issued on this context are still in flight (a
    /// [`quiet`](Self::quiet) would wait for them). Explicit non-blocking operations
    /// ([`nbe_scope`](Self::nbe_scope)) belong to their requests, not to the context.
    pub fn pending(&self) -> bool {
        self.state.raw.get().pending()
    }

    /// `shmem_ctx_fence`: this context's puts, atomics and signals to each PE issued
    /// before it are delivered before those issued after it.
    pub fn fence(&self) {
        ok(raw::fence(&self.state.raw));
    }

    /// `shmem_ctx_quiet`: every put, atomic, signal and non-blocking operation issued on
    /// this context before it is complete and visible. Other contexts' operations, and
    /// explicit non-blocking operations (completed by their requests), are not waited for.
    pub fn quiet(&self) {
        ok(raw::quiet(&self.state.raw));
    }
}

/// Contexts on the world team, and the default context.
impl Shmem {
    /// `SHMEM_CTX_DEFAULT`: the context the guard's own operations use ([`Shmem::put`] is
    /// `shmem.default_ctx().put`). Never destroyed; [`Shared`], so threads use it at
    /// once under [`ThreadLevel::Multiple`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let ctx = shmem.default_ctx();
    /// assert!(ctx.is_default());
    /// assert_eq!(ctx.n_pes(), shmem.n_pes());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn default_ctx(&self) -> &Ctx<'_, Shared> {
        &self.default
    }

    /// `shmem_ctx_create`: a new context on the world team, of mode `M` ([`Shared`],
    /// [`Serialized`] or [`Private`]); `nostore` sets `SHMEM_CTX_NOSTORE`. Not collective.
    ///
    /// # Errors
    /// [`Error::ThreadLevel`] for a [`Shared`] context below [`ThreadLevel::Multiple`], or
    /// when called from a thread other than the initializing one under
    /// [`ThreadLevel::Single`] or [`ThreadLevel::Funneled`]; [`Error::Core`] when the
    /// runtime cannot make one (too many live contexts).
    ///
    /// ```
    /// use rshmem::{Serialized, Shmem};
    /// let shmem = Shmem::init()?;
    /// let ctx = shmem.create_ctx::<Serialized>(true)?;
    /// assert!(ctx.is_nostore() && !ctx.is_default());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn create_ctx<M: CtxMode>(&self, nostore: bool) -> Result<Ctx<'_, M>> {
        Ctx::create(
            self,
            "shmem_ctx_create",
            None,
            (self.my_pe(), self.n_pes()),
            nostore,
        )
    }
}

impl TeamRef<'_> {
    /// `shmem_team_create_ctx`: a new context whose PE numbers are ranks in this team
    /// (`0..n_pes()`), of mode `M`. It borrows the team, which cannot be destroyed while
    /// the context lives. Not collective.
    ///
    /// # Errors
    /// As [`Shmem::create_ctx`].
    ///
    /// ```
    /// use rshmem::{Private, Shmem, TeamConfig};
    /// let shmem = Shmem::init()?;
    /// let world = shmem.world();
    /// let n = world.n_pes();
    /// // The world, reversed: team rank r is world PE n - 1 - r.
    /// let rev = world.split_strided(n - 1, -1, n, &TeamConfig::default())?.unwrap();
    /// let ctx = rev.create_ctx::<Private>(false)?;
    /// assert_eq!(ctx.my_pe(), n - 1 - shmem.my_pe());
    /// let v = shmem.alloc(1, shmem.my_pe())?;
    /// assert_eq!(ctx.g(&v, 0, 0)?, n - 1); // team rank 0 is world PE n - 1
    /// assert!(ctx.g(&v, 0, n).is_err()); // ranks stop at n - 1
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn create_ctx<M: CtxMode>(&self, nostore: bool) -> Result<Ctx<'_, M>> {
        self.ctx_source().create_ctx(nostore)
    }

    /// A handle that creates contexts on this team from any thread. A `TeamRef` is not
    /// `Sync` (no two threads may run collectives on one team at once), but creating
    /// contexts is not collective: threads that each want a private context on a team
    /// share this instead. It borrows the team like the contexts it makes.
    ///
    /// ```
    /// use rshmem::{Private, Shmem, TeamConfig, ThreadLevel};
    /// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
    /// let n = shmem.n_pes();
    /// let rev = shmem.world().split_strided(n - 1, -1, n, &TeamConfig::default())?.unwrap();
    /// let source = rev.ctx_source();
    /// let mut v = shmem.alloc(1, shmem.my_pe())?;
    /// let remote = &v.share(); // the Sync face of a SymVec
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| {
    ///             let ctx = source.create_ctx::<Private>(false).unwrap();
    ///             assert_eq!(ctx.g(remote, 0, 0).unwrap(), n - 1); // team rank 0 = world PE n - 1
    ///         });
    ///     }
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn ctx_source(&self) -> TeamCtxSource<'_> {
        TeamCtxSource {
            team: Arc::clone(&self.team),
            shmem: self.shmem(),
            me: self.my_pe(),
            npes: self.n_pes(),
        }
    }
}

/// Creates contexts on one team from any thread ([`TeamRef::ctx_source`]).
#[derive(Debug, Clone)]
pub struct TeamCtxSource<'t> {
    team: Arc<CoreTeam>,
    shmem: &'t Shmem,
    me: usize,
    npes: usize,
}

impl<'t> TeamCtxSource<'t> {
    /// `shmem_team_create_ctx`: as [`TeamRef::create_ctx`].
    ///
    /// # Errors
    /// As [`Shmem::create_ctx`].
    pub fn create_ctx<M: CtxMode>(&self, nostore: bool) -> Result<Ctx<'t, M>> {
        Ctx::create(
            self.shmem,
            "shmem_team_create_ctx",
            Some(&self.team),
            (self.me, self.npes),
            nostore,
        )
    }
}
