//! Team collectives without pSync: broadcast, collect, fcollect, alltoall(s), reductions
//! and scans over a [`Team`].
//!
//! The algorithms here are the *single-copy* family: after a team sync each PE reads its
//! peers' source buffers and writes results straight into their destinations, in place
//! where it maps them (shared memory), by get and put through UCX where it does not. A broadcast costs one copy
//! per PE; a reduction is a reduce-scatter in which each PE folds one chunk of all sources
//! (one pass over memory in all) and stores it into every destination. Each collective
//! starts with a team sync (sources ready, earlier results consumed) and ends with one
//! (results complete); nothing else is needed between consecutive collectives.

use std::cell::RefCell;

pub mod algo;
mod allreduce;
pub mod ll;
pub(crate) mod msg;
mod net;
pub mod nonblocking;
pub mod sync;
mod team_sync;
pub mod tolerant_sync;

use crate::team::call_check::{self as check, Kind, Show};
use crate::team::frame::Frame;

use crate::algo::{DataAlg, Span};
use crate::error::{Error, Result};
use crate::runtime::{rt, Runtime};
use crate::team::{Flag, Team};
use crate::transport::SymAddr;
use crate::transport::{Dir, Xfer};
use crate::word::AmoOp;

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Sum (wrapping for integers).
    Sum,
    /// Product (wrapping for integers).
    Prod,
}

impl ReduceOp {
    fn name(self) -> &'static str {
        match self {
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
        }
    }
}

/// A complex number as C lays out `float _Complex` / `double _Complex`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct Complex<F> {
    /// Real part.
    pub re: F,
    /// Imaginary part.
    pub im: F,
}

/// An element type of reductions: folds a source slice into an accumulator.
pub trait Elem: Copy + Send + Sync + 'static {
    /// The type's name in `SHMEM_DEBUG` reports (`i64`, `complex f64`...); types of the
    /// faces' own (C `long double`) share the default.
    const TYPE: &'static str = "a type of the C face";
    /// `acc[i] = acc[i] op src[i]`; `Err` names why `op` does not apply to this type.
    fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str>;
}

#[inline(always)]
fn zip<T: Copy>(acc: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
    for (a, s) in acc.iter_mut().zip(src) {
        *a = f(*a, *s);
    }
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const TYPE: &'static str = stringify!($t);
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::And => zip(acc, src, |a, b| a & b),
                    ReduceOp::Or => zip(acc, src, |a, b| a | b),
                    ReduceOp::Xor => zip(acc, src, |a, b| a ^ b),
                    ReduceOp::Min => zip(acc, src, |a, b| a.min(b)),
                    ReduceOp::Max => zip(acc, src, |a, b| a.max(b)),
                    ReduceOp::Sum => zip(acc, src, |a, b| a.wrapping_add(b)),
                    ReduceOp::Prod => zip(acc, src, |a, b| a.wrapping_mul(b)),
                }
                Ok(())
            }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const TYPE: &'static str = stringify!($t);
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::Min => zip(acc, src, |a, b| if b < a { b } else { a }),
                    ReduceOp::Max => zip(acc, src, |a, b| if b > a { b } else { a }),
                    ReduceOp::Sum => zip(acc, src, |a, b| a + b),
                    ReduceOp::Prod => zip(acc, src, |a, b| a * b),
                    _ => return Err("bitwise reductions are for integer types only"),
                }
                Ok(())
            }
        }
        impl Elem for Complex<$t> {
            const TYPE: &'static str = concat!("complex ", stringify!($t));
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::Sum => zip(acc, src, |a, b| Complex { re: a.re + b.re, im: a.im + b.im }),
                    ReduceOp::Prod => zip(acc, src, |a, b| Complex {
                        re: a.re * b.re - a.im * b.im,
                        im: a.re * b.im + a.im * b.re,
                    }),
                    _ => return Err("complex types take only sum and prod reductions"),
                }
                Ok(())
            }
        }
    )*};
}
float_elem!(f32, f64);

/// Bytes of a block of the single-copy reduction: the accumulator stays in L1/L2 while
/// every member's part of the block is folded into it.
const FOLD_BLOCK: usize = 32 << 10;

thread_local! {
    /// Reused accumulator for in-place reductions, so steady-state calls do not allocate.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Copies of peers' buffers that this process does not map (fetched through UCX).
    static VIEW: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's reusable accumulator, `len` elements long (steady-state calls
/// do not allocate).
fn with_acc<T: Elem, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    SCRATCH.with(|cell| {
        let mut buf = cell.borrow_mut();
        let words = (len * std::mem::size_of::<T>()).div_ceil(8);
        if buf.len() < words {
            buf.resize(words, 0);
        }
        // SAFETY: `buf` holds at least `len` elements' bytes, 8-byte aligned, and `T`
        // (integers, floats, complex) needs no more alignment and has no invalid bit
        // patterns.
        f(unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), len) })
    })
}

/// Folds elements `at..at + acc.len()` of every rank's buffer `s` into `acc`, in rank
/// order (every member gets the same bits); `own`, when given, stands for this PE's part.
///
/// # Safety
/// The range lies inside every rank's checked buffer and nobody writes it during the
/// call; `own` holds `acc.len()` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn fold_block<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    s: &Buf,
    at: usize,
    acc: &mut [T],
    op: ReduceOp,
    own: Option<*const T>,
) -> Result<()> {
    let (len, me) = (acc.len(), team.my_pe());
    for r in 0..team.n_pes() {
        let mut step = |part: &[T]| {
            if r == 0 {
                acc.copy_from_slice(part);
            } else {
                T::fold(op, acc, part).expect("operator checked by the caller");
            }
        };
        match own {
            // SAFETY: contract.
            Some(p) if r == me => step(unsafe { std::slice::from_raw_parts(p, len) }),
            // SAFETY: contract.
            _ => unsafe {
                let off = at * std::mem::size_of::<T>();
                rt.coll_view(routine, team, r, s, off, len, step)?
            },
        }
    }
    Ok(())
}

/// Checked view of one symmetric buffer of a collective.
struct Buf {
    addr: SymAddr,
}

impl Buf {
    /// The location `off` bytes into the buffer.
    fn at(&self, off: usize) -> SymAddr {
        SymAddr {
            seg: self.addr.seg,
            off: self.addr.off + off,
        }
    }
}

impl Runtime {
    fn coll_buf(
        &self,
        routine: &'static str,
        arg: &'static str,
        p: *const u8,
        len: usize,
    ) -> Result<Buf> {
        Ok(Buf {
            addr: self.sym(routine, arg, p as usize, len)?,
        })
    }

    /// Moves `len` bytes between local `local` and `buf + off` on team rank `r`: a load
    /// or store on the peer's mapping on the node, a get or put through UCX elsewhere.
    ///
    /// # Safety
    /// `local` is readable (put) or writable (get) for `len` bytes; the range lies inside
    /// the checked buffer.
    #[allow(clippy::too_many_arguments)]
    unsafe fn coll_xfer(
        &self,
        routine: &'static str,
        team: &Team,
        dir: Dir,
        r: usize,
        buf: &Buf,
        off: usize,
        local: *const u8,
        len: usize,
    ) -> Result<()> {
        let pe = team.members().pe(r);
        let ctx = crate::ctx::runtime_ctx();
        // SAFETY: forwarded contract.
        unsafe {
            self.fabric.xfer(Xfer {
                routine,
                ctx,
                dir,
                pe,
                remote: buf.at(off),
                local: local as *mut u8,
                len,
            })
        }
    }

    /// Runs `f` on the `len` elements at `buf + off` on team rank `r`: in place where
    /// mapped (single copy), else on a copy fetched through UCX.
    ///
    /// # Safety
    /// The range lies inside the checked buffer, which nobody writes during the call.
    #[allow(clippy::too_many_arguments)]
    unsafe fn coll_view<T: Elem, R>(
        &self,
        routine: &'static str,
        team: &Team,
        r: usize,
        buf: &Buf,
        off: usize,
        len: usize,
        f: impl FnOnce(&[T]) -> R,
    ) -> Result<R> {
        let pe = team.members().pe(r);
        let ctx = crate::ctx::runtime_ctx();
        VIEW.with(|cell| {
            let mut scratch = cell.borrow_mut();
            // SAFETY: forwarded contract.
            unsafe {
                self.fabric.view(
                    routine,
                    ctx,
                    pe,
                    buf.at(off),
                    len * std::mem::size_of::<T>(),
                    &mut scratch,
                    |bytes| {
                        // SAFETY: `bytes` is a peer's element buffer or 8-byte aligned
                        // scratch; element types need no more alignment and have no
                        // invalid bit patterns.
                        f(std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), len))
                    },
                )
            }
        })
    }
}

fn disjoint_or_same(routine: &'static str, a: usize, b: usize, len: usize) -> Result<bool> {
    if a == b {
        return Ok(false);
    }
    if a + len <= b || b + len <= a {
        return Ok(true);
    }
    Err(Error::InvalidArgument {
        routine,
        arg: "dest",
        reason: "dest and source overlap partially (they must be identical or disjoint)",
    })
}

/// `shmem_broadcastmem`: `nbytes` of `src` on team rank `root` into `dest` on every member
/// (the root included).
///
/// # Safety
/// `dest` and `src` are symmetric buffers of `nbytes` that the caller does not touch
/// during the call.
pub unsafe fn broadcast(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { broadcast_checked(routine, team, dest, src, nbytes, root, true) }
}

/// The deprecated active-set broadcast (`shmem_broadcast64` and kin): as [`broadcast`],
/// except that the root's `dest` is not written.
///
/// # Safety
/// As [`broadcast`].
pub unsafe fn broadcast_keep_root(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { broadcast_checked(routine, team, dest, src, nbytes, root, false) }
}

/// The broadcasts' entry: the frame, the algorithm.
///
/// # Safety
/// As [`broadcast`].
unsafe fn broadcast_checked(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
    root_dest: bool,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Broadcast,
        &[
            ("PE_root", root as u64, Show::Num),
            ("size in bytes", nbytes as u64, Show::Num),
        ],
        nbytes,
    )?;
    let rt = f.rt();
    let alg = rt.algs().bcast_for(nbytes, team.n_pes(), rt.span(team));
    // SAFETY: forwarded contract.
    unsafe { broadcast_impl(routine, team, dest, src, nbytes, root, alg, root_dest) }
}

/// [`broadcast`] with an explicit algorithm.
///
/// # Safety
/// As [`broadcast`].
pub unsafe fn broadcast_with(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
    alg: DataAlg,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { broadcast_impl(routine, team, dest, src, nbytes, root, alg, true) }
}

/// The broadcasts; `root_dest` says whether the root's `dest` receives the data too.
///
/// # Safety
/// As [`broadcast`].
#[allow(clippy::too_many_arguments)]
unsafe fn broadcast_impl(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
    alg: DataAlg,
    root_dest: bool,
) -> Result<()> {
    let rt = rt(routine)?;
    if root < 0 || root as usize >= team.n_pes() {
        return Err(Error::PeOutOfRange {
            routine,
            arg: "PE_root",
            pe: root,
            npes: team.n_pes(),
        });
    }
    if nbytes == 0 {
        return Ok(());
    }
    let s = rt.coll_buf(routine, "source", src, nbytes)?;
    rt.coll_buf(routine, "dest", dest, nbytes)?;
    let me_root = team.my_pe() == root as usize;
    if alg == DataAlg::Ll && team.n_pes() > 1 && ll::bcast_eligible(rt, team, nbytes) {
        // SAFETY: forwarded; both buffers were checked above.
        return unsafe {
            ll::broadcast(
                rt,
                routine,
                team,
                dest,
                src,
                nbytes,
                root as usize,
                root_dest,
            )
        };
    }
    if alg == DataAlg::Binomial && team.n_pes() > 1 && team.n_pes() <= net::TREE_MAX_PES {
        // SAFETY: forwarded; both buffers were checked above.
        return unsafe {
            net::broadcast(
                rt,
                routine,
                team,
                dest,
                &s,
                nbytes,
                root as usize,
                root_dest,
            )
        };
    }
    if alg == DataAlg::Tree {
        // SAFETY: forwarded; both buffers were checked above.
        return unsafe {
            tree_broadcast(
                rt,
                routine,
                team,
                dest,
                &s,
                nbytes,
                root as usize,
                root_dest,
            )
        };
    }
    if alg == DataAlg::Hierarchical && rt.span(team) == Span::World {
        // SAFETY: forwarded; both buffers were checked above.
        return unsafe {
            host_broadcast(
                rt,
                routine,
                team,
                dest,
                &s,
                nbytes,
                root as usize,
                root_dest,
            )
        };
    }
    rt.try_sync_in(routine, team)?;
    if alg != DataAlg::Linear {
        if root_dest || !me_root {
            // SAFETY: the root's source is not written during the collective; `dest` is
            // ours. The copy tolerates the root's in-place case.
            unsafe { rt.coll_xfer(routine, team, Dir::Get, root as usize, &s, 0, dest, nbytes)? };
        }
    } else if me_root {
        let d = rt.coll_buf(routine, "dest", dest, nbytes)?;
        for r in (0..team.n_pes()).filter(|&r| root_dest || r != root as usize) {
            // SAFETY: every member's dest is checked symmetric and written only by the
            // root during the collective.
            unsafe { rt.coll_xfer(routine, team, Dir::Put, r, &d, 0, src, nbytes)? };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// WORLD's broadcast across hosts: the root's host-mates copy from the root (shared
/// memory), one PE per other host (its leader) fetches through the network, and its
/// host-mates copy from the leader once a sync of their host says it holds the data. Each
/// host's data crosses the network once instead of once per PE.
///
/// # Safety
/// `dest` is our checked destination of `nbytes`; `src` the checked source.
#[allow(clippy::too_many_arguments)]
unsafe fn host_broadcast(
    rt: &Runtime,
    routine: &'static str,
    world: &Team,
    dest: *mut u8,
    src: &Buf,
    nbytes: usize,
    root: usize,
    root_dest: bool,
) -> Result<()> {
    let host = rt.teams().inner_host.clone();
    let d = rt.coll_buf(routine, "dest", dest, nbytes)?;
    let root_here = host.members().rank_of(root).is_some();
    let leader = rt.teams().inner_leaders.is_some();
    rt.try_sync_in(routine, world)?;
    if (root_here || leader) && (root_dest || world.my_pe() != root) {
        // SAFETY: the root's source is not written during the collective; `dest` is ours.
        unsafe { rt.coll_xfer(routine, world, Dir::Get, root, src, 0, dest, nbytes)? };
    }
    if !root_here {
        rt.try_sync_in(routine, &host)?;
        if !leader {
            // SAFETY: the leader's destination is complete (the sync above) and written
            // by nobody until the final sync.
            unsafe { rt.coll_xfer(routine, &host, Dir::Get, 0, &d, 0, dest, nbytes)? };
        }
    }
    rt.try_sync_in(routine, world)?;
    Ok(())
}

/// Pipelined k-ary tree broadcast. Counts in the team's scratch line: word 3 ("ready",
/// raised by the parent once per chunk it holds) and word 4 ("done", raised on the
/// parent by each child once per chunk it copied). Both only grow; each PE knows locally
/// how far they must have grown, so no team sync is needed around the broadcast.
///
/// # Safety
/// `dest` is our checked destination of `nbytes`; `src` the checked source.
#[allow(clippy::too_many_arguments)]
unsafe fn tree_broadcast(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: &Buf,
    nbytes: usize,
    root: usize,
    root_dest: bool,
) -> Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    const CHUNK: usize = 64 << 10;
    let k = crate::algo::TREE_RADIX;
    let n = team.n_pes();
    let me = team.my_pe();
    let v = (me + n - root) % n;
    let rank = |rel: usize| (rel + root) % n;
    let children = || (k * v + 1..(k * v + k + 1).min(n)).map(rank);
    let chunks = nbytes.div_ceil(CHUNK);
    let (ready, done) = (Flag::Word(3), Flag::Word(4));
    let announce = |c: usize| -> Result<()> {
        let _ = c;
        for ch in children() {
            rt.signal(routine, team, ready, ch, true)?;
        }
        Ok(())
    };
    if v == 0 {
        if root_dest {
            // SAFETY: our own source and destination, both `nbytes` (checked).
            unsafe { std::ptr::copy(rt.fabric.local(src.addr), dest, nbytes) };
        }
        for c in 0..chunks {
            announce(c)?;
        }
    } else {
        let parent = rank((v - 1) / k);
        // The root's children copy from its source where its dest stays untouched.
        let d = if parent == root && !root_dest {
            Buf { addr: src.addr }
        } else {
            rt.coll_buf(routine, "dest", dest, nbytes)?
        };
        let base = team.tree_ready.load(Relaxed);
        for c in 0..chunks {
            rt.await_signal(routine, team, ready, parent, base + c as u64 + 1)?;
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(nbytes));
            // SAFETY: the parent announced chunk `c` of its destination complete, and it
            // does not change it before we acknowledge; ours is `nbytes` (checked).
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    parent,
                    &d,
                    lo,
                    dest.add(lo),
                    hi - lo,
                )?
            };
            rt.signal(routine, team, done, parent, true)?;
            announce(c)?;
        }
        team.tree_ready.store(base + chunks as u64, Relaxed);
    }
    // Our destination must stay as it is until every child has copied it.
    let want = team.tree_done.load(Relaxed) + (chunks * children().len()) as u64;
    rt.await_signals(
        routine,
        team,
        done,
        children,
        want,
        chunks as u64,
        crate::team::peers::Quorum::All,
    )?;
    team.tree_done.store(want, Relaxed);
    Ok(())
}

/// `shmem_fcollectmem`: concatenates every member's `nbytes` of `src` in rank order into
/// `dest` (`nbytes * n_pes` bytes) on every member.
///
/// # Safety
/// As [`broadcast`], with `dest` of `nbytes * n_pes` bytes.
pub unsafe fn fcollect(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Fcollect,
        &[("size in bytes", nbytes as u64, Show::Num)],
        nbytes,
    )?;
    let rt = f.rt();
    let n = team.n_pes();
    if nbytes == 0 {
        return Ok(());
    }
    let s = rt.coll_buf(routine, "source", src, nbytes)?;
    let d = rt.coll_buf(routine, "dest", dest, nbytes * n)?;
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        if rt.algs().fcollect != DataAlg::Linear {
            // SAFETY: peer sources are stable during the collective; our dest holds
            // `nbytes * n` bytes.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    0,
                    dest.add(r * nbytes),
                    nbytes,
                )?
            };
        } else {
            // SAFETY: block `me` of every dest is written only by this PE.
            unsafe { rt.coll_xfer(routine, team, Dir::Put, r, &d, me * nbytes, src, nbytes)? };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_collectmem`: like [`fcollect`], but each member contributes its own `nbytes`.
/// `dest_cap` is the size of `dest` in bytes where the caller knows it (`usize::MAX`
/// otherwise); a total above it fails on every member.
///
/// # Safety
/// As [`broadcast`], with `dest` large enough for the sum of all contributions.
pub unsafe fn collect(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    dest_cap: usize,
) -> Result<()> {
    // Contributions may differ in size: only the routine is compared.
    let f = Frame::begin(routine, team, Kind::Collect, &[], nbytes)?;
    let rt = f.rt();
    let n = team.n_pes();
    // A member contributing nothing may pass any pointer (NULL from C): its source is
    // never read, and peers find each source through the location its owner publishes.
    let s = if nbytes == 0 {
        None
    } else {
        Some(rt.coll_buf(routine, "source", src, nbytes)?)
    };
    // Publish our size and source in the team's scratch line, then read everyone's.
    let size_word = rt.team_word(team, false, 0);
    let src_word = rt.team_word(team, false, 5);
    let src_loc = s.as_ref().map_or(u64::MAX, |b| b.addr.to_word());
    rt.set_own(size_word, nbytes as u64);
    rt.set_own(src_word, src_loc);
    rt.try_sync_in(routine, team)?;
    let mut off = 0usize;
    let mut sizes = Vec::with_capacity(n);
    for r in 0..n {
        let len = rt.amo::<u64>(routine, team.members().pe(r), size_word, AmoOp::Fetch)? as usize;
        sizes.push((off, len));
        off += len;
    }
    if off > dest_cap {
        // Every member computed the same total, so every member fails alike; the sync
        // keeps the size words stable until all have read them.
        rt.try_sync_in(routine, team)?;
        return Err(Error::InvalidArgument {
            routine,
            arg: "dest",
            reason: "smaller than the sum of all members' contributions",
        });
    }
    if off == 0 {
        rt.try_sync_in(routine, team)?;
        return Ok(());
    }
    let d = rt.coll_buf(routine, "dest", dest, off)?;
    let (my_at, my_len) = sizes[team.my_pe()];
    for (r, &(at, len)) in sizes.iter().enumerate() {
        match rt.algs().collect {
            DataAlg::Linear if my_len > 0 => {
                // SAFETY: our block of every dest is written only by this PE.
                unsafe { rt.coll_xfer(routine, team, Dir::Put, r, &d, my_at, src, my_len)? };
            }
            DataAlg::Linear => {}
            _ if len > 0 => {
                let pe = team.members().pe(r);
                let loc = rt.amo::<u64>(routine, pe, src_word, AmoOp::Fetch)?;
                let from = Buf {
                    addr: SymAddr::from_word(loc),
                };
                // SAFETY: rank r checked its source for `len` bytes and published it; it
                // is stable during the collective; `dest` holds the total, checked above.
                unsafe { rt.coll_xfer(routine, team, Dir::Get, r, &from, 0, dest.add(at), len)? };
            }
            _ => {}
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_alltoallmem`: block `j` of `src` on rank `i` goes to block `i` of `dest` on rank
/// `j`; blocks are `nbytes`.
///
/// # Safety
/// As [`broadcast`], with both buffers of `nbytes * n_pes` bytes.
pub unsafe fn alltoall(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Alltoall,
        &[("size in bytes", nbytes as u64, Show::Num)],
        nbytes,
    )?;
    let rt = f.rt();
    let n = team.n_pes();
    if nbytes == 0 {
        return Ok(());
    }
    let s = rt.coll_buf(routine, "source", src, nbytes * n)?;
    let d = rt.coll_buf(routine, "dest", dest, nbytes * n)?;
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        if rt.algs().alltoall != DataAlg::Linear {
            // SAFETY: peer sources are stable; our dest block `r` is inside the
            // checked range.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    me * nbytes,
                    dest.add(r * nbytes),
                    nbytes,
                )?
            };
        } else {
            // SAFETY: block `me` of rank r's dest is written only by this PE; our
            // source block `r` is inside the checked range.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Put,
                    r,
                    &d,
                    me * nbytes,
                    src.add(r * nbytes),
                    nbytes,
                )?
            };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_alltoalls`: [`alltoall`] of `nelems` elements of `size` bytes per block, with
/// element strides `dst` and `sst` (≥ 1).
///
/// # Safety
/// As [`alltoall`], with buffers covering the strided extents.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoalls(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Alltoalls,
        &[
            ("nelems", nelems as u64, Show::Num),
            ("element size", size as u64, Show::Num),
            ("dst", dst as u64, Show::Num),
            ("sst", sst as u64, Show::Num),
        ],
        nelems.wrapping_mul(size),
    )?;
    let rt = f.rt();
    if dst < 1 || sst < 1 {
        return Err(Error::InvalidArgument {
            routine,
            arg: "dst/sst",
            reason: "strides must be at least 1",
        });
    }
    let n = team.n_pes();
    if nelems == 0 || size == 0 {
        return Ok(());
    }
    let (dst, sst) = (dst as usize, sst as usize);
    let span = |stride: usize| ((n * nelems - 1) * stride + 1) * size;
    let s = rt.coll_buf(routine, "source", src, span(sst))?;
    rt.coll_buf(routine, "dest", dest, span(dst))?;
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        for k in 0..nelems {
            // SAFETY: both element addresses lie in the checked strided extents.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    (me * nelems + k) * sst * size,
                    dest.add((r * nelems + k) * dst * size),
                    size,
                )?
            };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_TYPENAME_OP_reduce`: element-wise `op` over every member's `src` into `dest` on
/// every member. `dest` and `src` are identical (in place) or disjoint.
///
/// # Safety
/// As [`broadcast`], with both buffers of `n` elements of `T`.
pub unsafe fn reduce<T: Elem>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
) -> Result<()> {
    let f = reduce_frame::<T>(routine, team, n, op)?;
    let rt = f.rt();
    let alg = rt
        .algs()
        .reduce_for(n * std::mem::size_of::<T>(), team.n_pes(), rt.span(team));
    // SAFETY: forwarded contract.
    unsafe { reduce_with(routine, team, dest, src, n, op, alg) }
}

/// The frame of a reduction: the debug check compares the count, operator and type.
fn reduce_frame<T: Elem>(
    routine: &'static str,
    team: &Team,
    n: usize,
    op: ReduceOp,
) -> Result<Frame> {
    Frame::begin(
        routine,
        team,
        Kind::Reduce,
        &[
            ("nreduce", n as u64, Show::Num),
            ("op", op as u64, Show::Op),
            ("type", check::type_code(T::TYPE), Show::Type),
        ],
        n.wrapping_mul(std::mem::size_of::<T>()),
    )
}

/// [`reduce`] with an explicit algorithm (for compositions such as the hierarchical one).
///
/// # Safety
/// As [`reduce`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_with<T: Elem>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
    alg: DataAlg,
) -> Result<()> {
    let rt = rt(routine)?;
    T::fold(op, &mut [], &[]).map_err(|reason| Error::InvalidArgument {
        routine,
        arg: "op",
        reason,
    })?;
    if n == 0 {
        return Ok(());
    }
    let sz = std::mem::size_of::<T>();
    let bytes = n * sz;
    let disjoint = disjoint_or_same(routine, dest as usize, src as usize, bytes)?;
    let s = rt.coll_buf(routine, "source", src.cast(), bytes)?;
    let d = rt.coll_buf(routine, "dest", dest.cast(), bytes)?;
    let npes = team.n_pes();
    if npes == 1 {
        // SAFETY: both buffers hold `n` elements (checked).
        unsafe { std::ptr::copy(src, dest, n) };
        return Ok(());
    }
    match alg {
        DataAlg::Ll | DataAlg::LlRd
            if ll::eligible(rt, team, bytes) && std::mem::align_of::<T>() <= ll::ALIGN =>
        {
            let rd = alg == DataAlg::LlRd;
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { ll::reduce(rt, routine, team, dest, src, n, op, rd) };
        }
        DataAlg::Ll | DataAlg::LlRd => {
            // An active set (no slot for LL buffers): messages serve small vectors too.
            let rd = DataAlg::RecursiveDoubling;
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_msg(rt, routine, team, dest, src, n, op, rd) };
        }
        DataAlg::Direct => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { net::reduce(rt, routine, team, dest, src, &s, &d, n, op) };
        }
        DataAlg::Shm | DataAlg::Linear | DataAlg::Tree | DataAlg::Binomial => {}
        DataAlg::RecursiveDoubling | DataAlg::Ring | DataAlg::Rabenseifner => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_msg(rt, routine, team, dest, src, n, op, alg) };
        }
        DataAlg::Hierarchical => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_hierarchical(rt, routine, team, dest, src, n, op) };
        }
    }
    rt.try_sync_in(routine, team)?;
    // Reduce-scatter then all-gather, one block at a time: rank r folds chunk r of every
    // source in rank order (every member gets the same bits) and writes the block to every
    // destination. Chunk r of any buffer is read and written by rank r alone, so in place
    // needs no sync in between, only a cache-sized accumulator (disjoint: our own dest).
    let me = team.my_pe();
    let (lo, hi) = match alg {
        DataAlg::Shm => (n * me / npes, n * (me + 1) / npes),
        DataAlg::Linear if me == 0 => (0, n),
        _ => (0, 0),
    };
    if hi > lo {
        let block = (FOLD_BLOCK / sz).max(1).min(hi - lo);
        with_acc::<T, _>(if disjoint { 0 } else { block }, |buf| -> Result<()> {
            let mut at = lo;
            while at < hi {
                let len = block.min(hi - at);
                let acc = if disjoint {
                    // SAFETY: chunk `lo..hi` of our dest is checked and ours alone.
                    unsafe { std::slice::from_raw_parts_mut(dest.add(at), len) }
                } else {
                    &mut buf[..len]
                };
                // SAFETY: the block lies inside every rank's checked source; only this
                // rank reads or writes chunk `lo..hi` during the collective.
                unsafe { fold_block(rt, routine, team, &s, at, acc, op, None)? };
                for r in (0..npes).filter(|&r| !disjoint || r != me) {
                    // SAFETY: as above, for rank r's checked destination.
                    unsafe {
                        rt.coll_xfer(
                            routine,
                            team,
                            Dir::Put,
                            r,
                            &d,
                            at * sz,
                            acc.as_ptr().cast(),
                            len * sz,
                        )?
                    };
                }
                at += len;
            }
            Ok(())
        })?;
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// A reduction of a private vector `a` (a language's own array, not symmetric) through
/// `stage`, a symmetric buffer of as many elements: afterwards `a` holds the reduction of
/// every member's `a` where `write_back`, and is untouched elsewhere (Fortran's
/// RESULT_IMAGE=). Among members that map each other, each one folds its chunk straight
/// from its own `a` and the others' stages and the chunks are gathered into `a`, so `a`
/// is copied in and out once in all (not twice whole around [`reduce`]). A vector small
/// enough for the LL exchange is reduced from `a` directly (into `stage` on a member that
/// does not write back).
///
/// # Safety
/// `a` holds `n` elements of `T`, readable and (where `write_back`) writable, not inside
/// `stage`; `stage` is symmetric and holds `n` elements on every member.
pub unsafe fn reduce_staged<T: Elem>(
    routine: &'static str,
    team: &Team,
    a: *mut T,
    stage: *mut T,
    n: usize,
    op: ReduceOp,
    write_back: bool,
) -> Result<()> {
    let f = reduce_frame::<T>(routine, team, n, op)?;
    let rt = f.rt();
    let sz = std::mem::size_of::<T>();
    let npes = team.n_pes();
    let alg = rt.algs().reduce_for(n * sz, npes, rt.span(team));
    T::fold(op, &mut [], &[]).map_err(|reason| Error::InvalidArgument {
        routine,
        arg: "op",
        reason,
    })?;
    let ll = matches!(alg, DataAlg::Ll | DataAlg::LlRd)
        && npes > 1
        && n > 0
        && ll::eligible(rt, team, n * sz)
        && std::mem::align_of::<T>() <= ll::ALIGN;
    if ll {
        // The LL exchange goes through the team's own buffers and touches the source and
        // destination only locally: the private vector serves as it is.
        let dest = if write_back { a } else { stage };
        // SAFETY: both hold `n` elements, identical or disjoint (contract).
        return unsafe { ll::reduce(rt, routine, team, dest, a, n, op, alg == DataAlg::LlRd) };
    }
    if alg != DataAlg::Shm || npes == 1 || n == 0 {
        // SAFETY: both hold `n` elements and do not overlap (contract).
        unsafe {
            std::ptr::copy_nonoverlapping(a, stage, n);
            reduce_with(routine, team, stage, stage, n, op, alg)?;
            if write_back {
                std::ptr::copy_nonoverlapping(stage, a, n);
            }
        }
        return Ok(());
    }
    let st = rt.coll_buf(routine, "stage", stage.cast(), n * sz)?;
    let me = team.my_pe();
    let chunk = |r: usize| (n * r / npes, n * (r + 1) / npes);
    let (lo, hi) = chunk(me);
    // The others read only their own chunks of our stage; ours is our result.
    // SAFETY: both hold `n` elements and do not overlap (contract).
    unsafe {
        std::ptr::copy_nonoverlapping(a, stage, lo);
        std::ptr::copy_nonoverlapping(a.add(hi), stage.add(hi), n - hi);
    }
    rt.try_sync_in(routine, team)?;
    let block = (FOLD_BLOCK / sz).max(1).min(hi - lo);
    with_acc::<T, _>(block, |buf| -> Result<()> {
        let mut at = lo;
        while at < hi {
            let len = block.min(hi - at);
            let acc = &mut buf[..len];
            // SAFETY: the block lies in every rank's checked stage, in our chunk, which only
            // we read, and each rank wrote before the sync; our `a` holds it (contract).
            unsafe { fold_block(rt, routine, team, &st, at, acc, op, Some(a.add(at)))? };
            // SAFETY: the block lies in our chunk of both (contract).
            unsafe {
                std::ptr::copy_nonoverlapping(acc.as_ptr(), stage.add(at), len);
                if write_back {
                    std::ptr::copy_nonoverlapping(acc.as_ptr(), a.add(at), len);
                }
            }
            at += len;
        }
        Ok(())
    })?;
    rt.try_sync_in(routine, team)?;
    if write_back {
        for r in (0..npes).filter(|&r| r != me) {
            let (lo, hi) = chunk(r);
            // SAFETY: rank r's chunk of its stage holds its result until the last sync;
            // our `a` holds the chunk (contract).
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &st,
                    lo * sz,
                    a.add(lo).cast(),
                    (hi - lo) * sz,
                )?
            };
        }
    }
    // The stage is the caller's to reuse once nobody reads it.
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_sum_inscan` / `shmem_sum_exscan` (OpenSHMEM 1.6): `dest` on rank r gets the sum
/// of `src` over ranks `0..=r` (inclusive) or `0..r` (exclusive; zero on rank 0).
/// `dest` and `src` are identical (in place) or disjoint.
///
/// # Safety
/// As [`reduce`].
pub unsafe fn sum_scan<T: Elem + Default>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    inclusive: bool,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Scan,
        &[
            ("nelems", n as u64, Show::Num),
            (
                "inclusive (inscan=1, exscan=0)",
                inclusive as u64,
                Show::Num,
            ),
            ("type", check::type_code(T::TYPE), Show::Type),
        ],
        n.wrapping_mul(std::mem::size_of::<T>()),
    )?;
    let rt = f.rt();
    if n == 0 {
        return Ok(());
    }
    let sz = std::mem::size_of::<T>();
    let bytes = n * sz;
    let disjoint = disjoint_or_same(routine, dest as usize, src as usize, bytes)?;
    let s = rt.coll_buf(routine, "source", src.cast(), bytes)?;
    rt.coll_buf(routine, "dest", dest.cast(), bytes)?;
    rt.try_sync_in(routine, team)?;
    let upto = if inclusive {
        team.my_pe() + 1
    } else {
        team.my_pe()
    };
    let fold_into = |acc: &mut [T]| -> Result<()> {
        acc.fill(T::default());
        for r in 0..upto {
            // SAFETY: rank r's source is checked and not written until every member has
            // folded it (the sync after the fold, in place).
            unsafe {
                rt.coll_view(routine, team, r, &s, 0, n, |part: &[T]| {
                    T::fold(ReduceOp::Sum, acc, part).expect("every element type sums")
                })?
            };
        }
        Ok(())
    };
    if disjoint {
        // SAFETY: our dest holds `n` elements (checked) and is ours alone.
        fold_into(unsafe { std::slice::from_raw_parts_mut(dest, n) })?;
    } else {
        // In place: our source is other ranks' input until they have all folded it, so
        // fold into scratch and write only after a sync.
        with_acc::<T, _>(n, |acc| -> Result<()> {
            fold_into(acc)?;
            rt.try_sync_in(routine, team)?;
            // SAFETY: our dest holds `n` elements (checked); nobody reads it any more.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest, n) };
            Ok(())
        })?;
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// The collectives' name for an operator, for routine names built at run time.
pub fn op_name(op: ReduceOp) -> &'static str {
    op.name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds() {
        let mut a = [1i32, 5, -3];
        i32::fold(ReduceOp::Max, &mut a, &[2, 4, -1]).unwrap();
        assert_eq!(a, [2, 5, -1]);
        let mut f = [1.5f64, 2.0];
        f64::fold(ReduceOp::Prod, &mut f, &[2.0, 0.5]).unwrap();
        assert_eq!(f, [3.0, 1.0]);
        assert!(f32::fold(ReduceOp::Xor, &mut [], &[]).is_err());
        let mut c = [Complex {
            re: 1.0f32,
            im: 1.0,
        }];
        Complex::<f32>::fold(ReduceOp::Prod, &mut c, &[Complex { re: 0.0, im: 1.0 }]).unwrap();
        assert_eq!(c, [Complex { re: -1.0, im: 1.0 }]);
        let mut u = [0xf0u8];
        u8::fold(ReduceOp::Sum, &mut u, &[0x20]).unwrap();
        assert_eq!(u, [0x10]);
    }
}
