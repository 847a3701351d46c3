//! Seed 002's explicit non-blocking operations: the `_nbe` puts, gets and atomics and
//! the `shmemx_request_*` routines on their requests.

use core::ffi::{c_int, c_void};

use rshmem_core::{request, rma, AmoOp, Ctx, ReqHandle, RequestParams, Word};

use super::checks::{nbytes, nonnull, nonnull_mut};
use super::errors::{fail, invalid, ok};

/// `shmemx_request_h *` as the core takes it; a null pointer ends the job naming `arg`.
#[inline(always)]
pub(super) fn slot<'a>(
    routine: &'static str,
    arg: &'static str,
    p: *mut Option<ReqHandle>,
) -> &'a mut Option<ReqHandle> {
    if p.is_null() {
        if arg == "req" {
            fail(request::null_slot(routine));
        }
        invalid(routine, arg, "is a null pointer");
    }
    // SAFETY: a non-null pointer to the caller's shmemx_request_h, which has the layout
    // of `Option<ReqHandle>` (NULL is `None`); the caller does not use it concurrently.
    unsafe { &mut *p }
}

/// `shmemx_[ctx_]{TYPENAME_,}{put,get}{SIZE,mem,}_nbe`.
pub(crate) unsafe fn nbe(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    target: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    pe: c_int,
    req: *mut Option<ReqHandle>,
) {
    let nb = nbytes(routine, nelems, esize);
    let s = slot(routine, "req", req);
    let (t, src) = (target.cast::<u8>(), source.cast::<u8>());
    // SAFETY: local buffers are the caller's, untouched until the request completes
    // (seed 002); the core checks the symmetric side; a handle in `*req` is live.
    ok(unsafe {
        if is_put {
            rma::put_nbe(
                c,
                routine,
                t,
                nonnull(routine, "source", src, nb),
                nb,
                pe.into(),
                s,
            )
        } else {
            rma::get_nbe(
                c,
                routine,
                nonnull_mut(routine, "target", t, nb),
                src,
                nb,
                pe.into(),
                s,
            )
        }
    })
}

/// `shmemx_[ctx_]TYPENAME_*_nbe`: a fetching atomic completed by the request.
pub(crate) unsafe fn amo_nbe<W: Word>(
    routine: &'static str,
    c: &Ctx,
    fetch: *mut W,
    target: *const W,
    op: AmoOp<W>,
    pe: c_int,
    req: *mut Option<ReqHandle>,
) {
    nonnull_mut(routine, "fetch", fetch, 1);
    let s = slot(routine, "req", req);
    // SAFETY: `fetch` is the caller's local (spec); the core checks `target`.
    ok(unsafe { rshmem_core::amo::atomic_nbe(c, routine, fetch, target, op, pe.into(), s) })
}

/// `shmemx_request_test`: `*flag` = 1 (and `*req` = NULL, the request released) once
/// complete, else 0.
pub(crate) unsafe fn request_test(
    routine: &'static str,
    req: *mut Option<ReqHandle>,
    flag: *mut c_int,
) -> c_int {
    let s = slot(routine, "req", req);
    if flag.is_null() {
        invalid(routine, "flag", "is a null pointer");
    }
    // SAFETY: a handle in the slot is live (seed 002: no use after completion).
    let done = ok(unsafe { request::test(s) });
    // SAFETY: `flag` is a non-null int pointer (spec).
    unsafe { flag.write(done as c_int) };
    0
}

/// `shmemx_request_wait`.
pub(crate) unsafe fn request_wait(routine: &'static str, req: *mut Option<ReqHandle>) -> c_int {
    let s = slot(routine, "req", req);
    // SAFETY: as `request_test`.
    ok(unsafe { request::wait(s) });
    0
}

/// `shmemx_request_alloc`: a new, empty request in `*req`.
pub(crate) unsafe fn request_alloc(
    routine: &'static str,
    params: RequestParams,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let s = slot(routine, "req", req);
    *s = Some(ok(request::alloc(params)));
    0
}

/// `shmemx_request_free`: completes, then releases the request (`*req` = NULL).
pub(crate) unsafe fn request_free(routine: &'static str, req: *mut Option<ReqHandle>) -> c_int {
    let s = slot(routine, "req", req);
    // SAFETY: as `request_test`.
    ok(unsafe { request::free(s) });
    0
}

/// `shmemx_merge_request`: moves each `*requests[i]` into `*merged` (allocated when
/// NULL) and sets it to NULL; `*merged` completes when all of them have.
pub(crate) unsafe fn merge_request(
    routine: &'static str,
    count: usize,
    requests: *mut *mut Option<ReqHandle>,
    merged: *mut Option<ReqHandle>,
) -> c_int {
    slot(routine, "merged", merged);
    if count > 0 && requests.is_null() {
        invalid(routine, "requests", "is a null pointer");
    }
    for i in 0..count {
        // SAFETY: the caller passes `count` handle pointers.
        let p = unsafe { requests.add(i).read() };
        slot(routine, "requests", p);
        if p == merged {
            continue;
        }
        // SAFETY: two distinct slots of the caller's, holding live handles or NULL.
        ok(unsafe { request::merge(&mut *merged, &mut *p) });
    }
    0
}
