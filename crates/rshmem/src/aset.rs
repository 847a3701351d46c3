//! Explicit active sets (seed 004): groups of PEs made locally, without communication
//! or a team slot, that every collective takes like a team.

use std::sync::Arc;

use rshmem_core::team::{self as core_team, Members};

use crate::error::Result;
use crate::shmem::Shmem;
use crate::team::Team;

impl Shmem {
    fn active_set(&self, routine: &'static str, members: Members) -> Result<Option<Team<'_>>> {
        let t = core_team::active_set(routine, members)?;
        Ok(t.map(|t| Team::new(t, self)))
    }

    /// An active set of the PEs `start, start + stride, ...` (`size` of them), ranked in
    /// that order. Unlike a split it is made locally: only its members need to call
    /// this, at any time, with no communication; it costs no team slot and lives until
    /// dropped (dropping it is local too). Every collective of [`TeamRef`](crate::TeamRef)
    /// runs on it (and its non-blocking forms); it cannot be split or host contexts of
    /// its own numbering beyond what teams allow. A set with WORLD's members is WORLD.
    ///
    /// Returns `Ok(None)` on PEs outside the set.
    ///
    /// # Errors
    /// [`Error::PeOutOfRange`](crate::Error::PeOutOfRange) when a member is not a PE of
    /// the job; [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `size` is
    /// 0 or a PE is listed twice (`stride` 0 with `size` above 1).
    ///
    /// ```
    /// use rshmem::Sum;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let src = shmem.alloc(1, me as u64)?;
    /// let dst = shmem.alloc(1, 0u64)?;
    /// // The even PEs, made by the even PEs alone.
    /// if me % 2 == 0 {
    ///     let evens = shmem.active_set_strided(0, 2, n.div_ceil(2))?.unwrap();
    ///     evens.reduce(Sum, &dst, &src, 1)?;
    ///     assert_eq!(dst.load(0), (0..n as u64).step_by(2).sum::<u64>());
    /// }
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn active_set_strided(
        &self,
        start: usize,
        stride: isize,
        size: usize,
    ) -> Result<Option<Team<'_>>> {
        self.active_set(
            "shmemx_create_strided_aset",
            Members::Strided {
                start,
                stride: if size == 1 { 1 } else { stride },
                size,
            },
        )
    }

    /// [`active_set_strided`](Self::active_set_strided) with stride
    /// `stride_base.pow(log_stride)` (seed 004's log-strided sets; base 2 is the
    /// deprecated active sets' `logPE_stride`).
    ///
    /// # Errors
    /// As [`active_set_strided`](Self::active_set_strided), and
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the stride
    /// overflows or `stride_base` is 0.
    pub fn active_set_log_strided(
        &self,
        start: usize,
        log_stride: u32,
        size: usize,
        stride_base: usize,
    ) -> Result<Option<Team<'_>>> {
        const R: &str = "shmemx_create_log_strided_aset";
        let stride = stride_base
            .checked_pow(log_stride)
            .filter(|&s| stride_base > 0 && s <= isize::MAX as usize)
            .ok_or(rshmem_core::Error::InvalidArgument {
                routine: R,
                arg: "PE_log_stride",
                reason: "stride_base must be at least 1 and stride_base^PE_log_stride fit",
            })?;
        self.active_set(
            R,
            Members::Strided {
                start,
                stride: if size == 1 { 1 } else { stride as isize },
                size,
            },
        )
    }

    /// An active set whose member `i` (`0..size`) is PE `index(i)` (seed 004's custom
    /// index function).
    ///
    /// # Errors
    /// As [`active_set_strided`](Self::active_set_strided).
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let n = shmem.n_pes();
    /// // WORLD reversed: rank r is PE n - 1 - r.
    /// let rev = shmem.active_set_from_fn(n, |i| n - 1 - i)?.unwrap();
    /// assert_eq!(rev.my_pe(), n - 1 - shmem.my_pe());
    /// rev.sync()?;
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn active_set_from_fn(
        &self,
        size: usize,
        index: impl Fn(usize) -> usize,
    ) -> Result<Option<Team<'_>>> {
        let list: Arc<[usize]> = (0..size).map(index).collect();
        self.active_set("shmemx_create_custom_aset", Members::List(list))
    }

    /// An active set of the PEs in `pes`, ranked in that order (seed 004's generic sets).
    ///
    /// # Errors
    /// As [`active_set_strided`](Self::active_set_strided).
    pub fn active_set_from_list(&self, pes: &[usize]) -> Result<Option<Team<'_>>> {
        self.active_set("shmemx_create_generic_aset", Members::List(pes.into()))
    }
}
