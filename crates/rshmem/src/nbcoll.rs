//! Non-blocking collectives (seed 004) on teams and active sets, inside an
//! [`NbeScope`]: each returns a [`CollRequest`] whose `wait` reports failures as
//! `Err`; it merges with RMA requests through [`CollRequest::into_request`].

use std::marker::PhantomData;

use crate::coll::{sealed, Operator, Reducible};
use crate::error::Result;
use crate::nbe::{NbeScope, Request};
use crate::raw::{self, Req};
use crate::remote::Remote;
use crate::sym::SymVec;
use crate::team::TeamRef;

/// A non-blocking collective in flight: it runs (in the order the members issued their
/// collectives) while the caller computes; [`wait`](Self::wait) completes it. Dropping
/// it waits too; the scope's exit completes any that were forgotten.
#[must_use = "a collective request completes when waited for or dropped"]
#[derive(Debug)]
pub struct CollRequest<'sc> {
    req: Req<()>,
    _sc: PhantomData<&'sc ()>,
    /// Completed on the thread that issued it.
    _thread: PhantomData<*const ()>,
}

impl<'sc> CollRequest<'sc> {
    fn new() -> Self {
        CollRequest {
            req: raw::req_empty(),
            _sc: PhantomData,
            _thread: PhantomData,
        }
    }

    /// Whether the collective has completed, without blocking.
    ///
    /// # Errors
    /// The collective's failure (a member that finalized or died during it, a bad
    /// argument found when it ran), once, when it completes.
    pub fn test(&mut self) -> Result<bool> {
        self.req.try_test()
    }

    /// Blocks until the collective has completed.
    ///
    /// # Errors
    /// As [`test`](Self::test).
    pub fn wait(mut self) -> Result<()> {
        self.req.try_complete()
    }

    /// As a plain [`Request`], to merge with RMA requests (a failure then ends the job
    /// when it is waited for, as a runtime error does).
    pub fn into_request(self) -> Request<'sc, ()> {
        Request::from_req(self.req)
    }
}

impl<'sc, 'env> NbeScope<'sc, 'env> {
    /// Issues a collective (the core counts it in the profile when it runs).
    fn issue(
        &self,
        f: impl FnOnce(&mut Option<rshmem_core::ReqHandle>) -> Result<()>,
    ) -> Result<CollRequest<'sc>> {
        let _ = self.drain;
        let mut r = CollRequest::new();
        f(r.req.slot())?;
        Ok(r)
    }

    /// Non-blocking [`TeamRef::broadcast`]: `dest` and `src` stay borrowed until the
    /// scope ends.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(4, world.my_pe() as u32 + 7)?;
    /// let dest = shmem.alloc(4, 0u32)?;
    /// shmem.nbe_scope(|s| -> rshmem::Result<()> {
    ///     let r = s.broadcast_nbe(&world, &dest, &src, 4, 0)?;
    ///     // ... compute here while it runs ...
    ///     r.wait()
    /// })?;
    /// assert_eq!(dest.to_vec(), [7; 4]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn broadcast_nbe<T: Remote>(
        &self,
        team: &TeamRef<'_>,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        nelems: usize,
        root: usize,
    ) -> Result<CollRequest<'sc>> {
        self.issue(|r| {
            raw::broadcast(
                "shmemx_broadcast_nbe",
                &team.team,
                &dest.region,
                &src.region,
                nelems,
                root,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::reduce`]: `dest` and `src` stay borrowed until the scope
    /// ends.
    ///
    /// ```
    /// use rshmem::Sum;
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let n = world.n_pes() as i64;
    /// let a = shmem.alloc(2, 1i64)?;
    /// let b = shmem.alloc(2, world.my_pe() as i64)?;
    /// let (da, db) = (shmem.alloc(2, 0i64)?, shmem.alloc(2, 0i64)?);
    /// shmem.nbe_scope(|s| -> rshmem::Result<()> {
    ///     let ra = s.reduce_nbe(&world, Sum, &da, &a, 2)?;
    ///     let rb = s.reduce_nbe(&world, Sum, &db, &b, 2)?; // two in flight on one team
    ///     rb.wait()?; // any order
    ///     ra.wait()
    /// })?;
    /// assert_eq!(da.to_vec(), [n; 2]);
    /// assert_eq!(db.to_vec(), [n * (n - 1) / 2; 2]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn reduce_nbe<Op: Operator, T: Reducible<Op>>(
        &self,
        team: &TeamRef<'_>,
        op: Op,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        nelems: usize,
    ) -> Result<CollRequest<'sc>> {
        let _ = op;
        self.issue(|r| {
            raw::reduce(
                <T as sealed::Reduce<Op>>::ROUTINE,
                &team.team,
                &dest.region,
                &src.region,
                nelems,
                Op::OP,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::fcollect`].
    pub fn fcollect_nbe<T: Remote>(
        &self,
        team: &TeamRef<'_>,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        nelems: usize,
    ) -> Result<CollRequest<'sc>> {
        self.issue(|r| {
            raw::fcollect_or_alltoall(
                "shmemx_fcollect_nbe",
                &team.team,
                &dest.region,
                &src.region,
                nelems,
                false,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::collect`].
    pub fn collect_nbe<T: Remote>(
        &self,
        team: &TeamRef<'_>,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        nelems: usize,
    ) -> Result<CollRequest<'sc>> {
        self.issue(|r| {
            raw::collect(
                "shmemx_collect_nbe",
                &team.team,
                &dest.region,
                &src.region,
                nelems,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::alltoall`].
    pub fn alltoall_nbe<T: Remote>(
        &self,
        team: &TeamRef<'_>,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        nelems: usize,
    ) -> Result<CollRequest<'sc>> {
        self.issue(|r| {
            raw::fcollect_or_alltoall(
                "shmemx_alltoall_nbe",
                &team.team,
                &dest.region,
                &src.region,
                nelems,
                true,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::alltoalls`] (strides in elements, at least 1).
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let n = world.n_pes();
    /// let src = shmem.alloc(2 * n, world.my_pe() as i32)?;
    /// let dest = shmem.alloc(3 * n, -1i32)?;
    /// shmem.nbe_scope(|s| s.alltoalls_nbe(&world, &dest, &src, 3, 2, 1)?.wait())?;
    /// assert_eq!((dest.load(0), dest.load(1)), (0, -1));
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn alltoalls_nbe<T: Remote>(
        &self,
        team: &TeamRef<'_>,
        dest: &'env SymVec<'_, T>,
        src: &'env SymVec<'_, T>,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
    ) -> Result<CollRequest<'sc>> {
        self.issue(|r| {
            raw::alltoalls(
                "shmemx_alltoalls_nbe",
                &team.team,
                &dest.region,
                &src.region,
                dst_stride,
                src_stride,
                nelems,
                Some(r),
            )
        })
    }

    /// Non-blocking [`TeamRef::sync`].
    pub fn sync_nbe(&self, team: &TeamRef<'_>) -> Result<CollRequest<'sc>> {
        self.issue(|r| raw::sync("shmemx_team_sync_nbe", &team.team, Some(r)))
    }

    /// Non-blocking [`Shmem::barrier_all`](crate::Shmem::barrier_all): the quiet of the
    /// default context is taken at the call (it covers the operations issued before it),
    /// then the world's sync runs while the caller computes.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// shmem.nbe_scope(|s| s.barrier_all_nbe()?.wait())?;
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn barrier_all_nbe(&self) -> Result<CollRequest<'sc>> {
        let world = rshmem_core::team::world()?;
        self.issue(|r| raw::barrier_nbe("shmemx_barrier_all_nbe", &world, r))
    }
}
