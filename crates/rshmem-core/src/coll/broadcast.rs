//! Broadcasts: single-copy on one host, a low-latency path for small messages, and a
//! binomial tree or the host/leader composition across hosts (`algo::bcast_for`).

use crate::algo::{DataAlg, Span};
use crate::error::{Error, Result};
use crate::runtime::{rt, Runtime};
use crate::team::call_check::{Kind, Show};
use crate::team::frame::Frame;
use crate::team::{Flag, Team};
use crate::transport::Dir;

use super::{ll, net, staged, Buf};

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

/// A broadcast that needs no team sync (`ll`, `staged`): (runtime, routine, team, dest,
/// src, bytes, root, root_dest).
type Unsynced =
    unsafe fn(&Runtime, &'static str, &Team, *mut u8, *const u8, usize, usize, bool) -> Result<()>;

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
    // The algorithms that need no team sync, where they serve this team.
    let unsynced = match alg {
        DataAlg::Ll if ll::bcast_eligible(rt, team, nbytes) => Some(ll::broadcast as Unsynced),
        DataAlg::Staged if staged::eligible(rt, team) => Some(staged::broadcast as Unsynced),
        _ => None,
    };
    if let Some(run) = unsynced.filter(|_| team.n_pes() > 1) {
        // SAFETY: forwarded; both buffers were checked above.
        return unsafe {
            run(
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
/// parent by each child once per chunk it copied). Both only grow, and each PE knows
/// locally how far they must have grown. They count every sender's raises together, so
/// the broadcast starts with a team sync: without it a PE that left the previous broadcast
/// early (a leaf) could start the next one as root and raise "ready" on a PE still waiting
/// for its old parent's chunk, which then copied the chunk before it was there (seen over
/// the network at 6 PEs on 2 simulated hosts: a 640 KB broadcast from rank 3 followed by
/// one from rank 5 left rank 2 the stale first chunk of rank 4).
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
    // Every member has left the previous broadcast: no raise of this one meets a waiter
    // of that one.
    rt.try_sync_in(routine, team)?;
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
