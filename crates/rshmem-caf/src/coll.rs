//! Collective subroutines: co_broadcast, co_sum, co_min, co_max, co_reduce, over the
//! core's team collectives on the world team.
//!
//! The Fortran argument is ordinary (non-symmetric) memory, so each call packs it into a
//! symmetric scratch buffer, runs the collective there in place, and unpacks the result.
//! The buffer grows collectively: the standard makes every image pass the same shape, so
//! every image takes the same decision.

use std::ffi::c_void;

use rshmem_core::coll::{self, Complex, Elem, ReduceOp};
use rshmem_core::memory;

use crate::desc::{
    DescPtr, Sane, Shape, BT_CHARACTER, BT_COMPLEX, BT_DERIVED, BT_INTEGER, BT_LOGICAL, BT_REAL,
};
use crate::image::{pe_of, state, with_local};
use crate::stat_errmsg::{unsupported, CafResult};

/// The symmetric scratch buffer, at least `bytes` long.
fn scratch(routine: &'static str, bytes: usize) -> CafResult<*mut u8> {
    if let Some(t) = crate::team::current() {
        return t.scratch(routine, bytes);
    }
    // A small collective (co_sum of a scalar) uses the start-up buffer, which is never
    // freed: no lock on its path.
    let first = state(routine).scratch;
    if bytes <= crate::image::SCRATCH {
        return Ok(first as *mut u8);
    }
    let (addr, size) = with_local(routine, |l| l.scratch);
    if size >= bytes {
        return Ok(addr as *mut u8);
    }
    if addr != 0 && addr != first {
        memory::free(routine, addr as *mut u8)?;
    }
    let size = bytes.max(2 * size).max(4096);
    let p = memory::malloc(routine, size)?;
    with_local(routine, |l| l.scratch = (p as usize, size));
    Ok(p)
}

/// The current team's core team (WORLD for the initial team).
fn world(routine: &'static str) -> CafResult<&'static rshmem_core::team::Team> {
    crate::team::core_team(routine)
}

/// Copies the elements of `a` into `buf` (`to_buf`) or back.
///
/// # Safety
/// `a` describes valid memory; `buf` holds `count * elem_len` bytes.
unsafe fn copy(a: DescPtr, buf: *mut u8, to_buf: bool) {
    // SAFETY: contract.
    let base = unsafe { (*a).base_addr };
    // SAFETY: contract.
    if let Some(bytes) = unsafe { crate::fast::dense_bytes(a) } {
        // One copy for a scalar or a contiguous array (the usual case), the descriptor
        // read in place, instead of one per element.
        // SAFETY: a dense `a` covers `bytes` from its base; `buf` holds them (contract).
        unsafe {
            if to_buf {
                std::ptr::copy_nonoverlapping(base, buf, bytes);
            } else {
                std::ptr::copy_nonoverlapping(buf, base, bytes);
            }
        }
        return;
    }
    // SAFETY: contract.
    let (shape, len) = unsafe { (Shape::of(a), (*a).elem_len) };
    shape.for_each(|i, off| {
        // SAFETY: element `i` of `a` and slot `i` of `buf` (contract).
        unsafe {
            let (x, b) = (base.offset(off), buf.add(i * len));
            if to_buf {
                std::ptr::copy_nonoverlapping(x, b, len);
            } else {
                std::ptr::copy_nonoverlapping(b, x, len);
            }
        }
    });
}

/// `co_broadcast(a, source_image)`.
///
/// # Safety
/// `a` is a valid descriptor.
pub(crate) unsafe fn co_broadcast(routine: &'static str, a: DescPtr, source: i32) -> CafResult {
    crate::team::known_gone(routine)?;
    // SAFETY: contract.
    let mut sane = unsafe { Sane::of(a) };
    let a = sane.ptr();
    let s = state(routine);
    let root = pe_of(s, source)?;
    // SAFETY: contract.
    let bytes = unsafe { Shape::of(a).count() * (*a).elem_len };
    let buf = scratch(routine, bytes)?;
    // SAFETY: `buf` is symmetric and holds `bytes`; `a` is valid (contract).
    unsafe {
        if s.me == root {
            copy(a, buf, true);
        }
        // The root is a rank of the current team: the source image's number minus one.
        coll::broadcast(routine, world(routine)?, buf, buf, bytes, source as i64 - 1)?;
        copy(a, buf, false);
    }
    Ok(())
}

/// `co_sum`, `co_min`, `co_max` (`result_image` 0: the result on every image; else it is
/// computed everywhere and written on that image only, see [`result`]).
///
/// # Safety
/// `a` is a valid descriptor.
pub(crate) unsafe fn co_op(
    routine: &'static str,
    a: DescPtr,
    op: ReduceOp,
    result_image: i32,
) -> CafResult {
    crate::team::known_gone(routine)?;
    let s = state(routine);
    if result_image != 0 {
        pe_of(s, result_image)?;
    }
    let keep = result(routine, result_image);
    // SAFETY: contract.
    let (bt, len) = unsafe { ((*a).ty, (*a).elem_len) };
    // SAFETY: contract (a scalar or contiguous array: its bytes, read in place).
    let n = match unsafe { crate::fast::dense_bytes(a) } {
        Some(bytes) if len > 0 => bytes / len,
        // SAFETY: contract.
        _ => unsafe { Shape::of(a).count() },
    };
    if bt == BT_CHARACTER && op != ReduceOp::Sum {
        let max = op == ReduceOp::Max;
        // SAFETY: forwarded contract.
        return unsafe {
            gather_fold(routine, a, keep, &mut |acc: *mut u8, x: *const u8| {
                // Both are elements of `len` bytes in the scratch buffer.
                let (l, r) = (
                    std::slice::from_raw_parts(acc, len),
                    std::slice::from_raw_parts(x, len),
                );
                // Equal lengths: Fortran's blank-padded comparison is a byte comparison.
                if r != l && (r > l) == max {
                    std::ptr::copy_nonoverlapping(x, acc, len);
                }
            })
        };
    }
    if bt == BT_INTEGER && len == 16 {
        // integer(16): the core reduces no 16-byte words; gathered and folded in order.
        // SAFETY: forwarded contract.
        return unsafe {
            gather_fold(routine, a, keep, &mut |acc: *mut u8, x: *const u8| {
                // Both are 16-byte elements of the scratch buffer (unaligned reads).
                let (l, r) = (
                    acc.cast::<i128>().read_unaligned(),
                    x.cast::<i128>().read_unaligned(),
                );
                let v = match op {
                    ReduceOp::Min => l.min(r),
                    ReduceOp::Max => l.max(r),
                    _ => l.wrapping_add(r),
                };
                acc.cast::<i128>().write_unaligned(v);
            })
        };
    }
    let buf = scratch(routine, n * len)?;
    // A contiguous argument is reduced from where it lies, through the scratch buffer;
    // another is packed into the buffer first and unpacked after.
    // SAFETY: contract.
    let dense = unsafe { crate::fast::dense_bytes(a) }.is_some();
    let at = if dense {
        // SAFETY: contract.
        unsafe { (*a).base_addr }
    } else {
        buf
    };
    let r = Reduction {
        routine,
        at,
        buf,
        n,
        op,
        keep,
    };
    // SAFETY: `buf` holds `n` elements; `a` is valid (contract).
    unsafe {
        if !dense {
            copy(a, buf, true);
        }
        match (bt, len) {
            (BT_INTEGER, 1) => r.run::<i8>()?,
            (BT_INTEGER, 2) => r.run::<i16>()?,
            (BT_INTEGER, 4) => r.run::<i32>()?,
            (BT_INTEGER, 8) => r.run::<i64>()?,
            (BT_REAL, 4) => r.run::<f32>()?,
            (BT_REAL, 8) => r.run::<f64>()?,
            (BT_COMPLEX, 8) if op == ReduceOp::Sum => r.run::<Complex<f32>>()?,
            (BT_COMPLEX, 16) if op == ReduceOp::Sum => r.run::<Complex<f64>>()?,
            _ => unsupported(
                routine,
                &format!("this collective on type code {bt} of {len} bytes"),
            ),
        }
        if keep && !dense {
            copy(a, buf, false);
        }
    }
    Ok(())
}

/// One co_sum / co_min / co_max: `n` elements at `at`, either the argument itself
/// (contiguous) or the scratch buffer `buf` it was packed into.
struct Reduction {
    routine: &'static str,
    at: *mut u8,
    buf: *mut u8,
    n: usize,
    op: ReduceOp,
    keep: bool,
}

impl Reduction {
    /// Runs the reduction on elements of `T`.
    ///
    /// # Safety
    /// `at` and `buf` hold `n` elements of `T`; `buf` is the symmetric scratch buffer.
    unsafe fn run<T: Elem>(&self) -> CafResult {
        let team = world(self.routine)?;
        let (at, buf) = (self.at.cast::<T>(), self.buf.cast::<T>());
        // SAFETY: contract.
        unsafe {
            if at == buf {
                coll::reduce::<T>(self.routine, team, buf, buf, self.n, self.op)?;
            } else {
                coll::reduce_staged::<T>(self.routine, team, at, buf, self.n, self.op, self.keep)?;
            }
        }
        Ok(())
    }
}

/// Whether this image takes a collective's result: every image without RESULT_IMAGE=,
/// else only that one. The others' argument becomes undefined in the standard; it is left
/// as it was, as gfortran's single-image library and OpenCoarrays leave it (and
/// gfortran's `collectives_2` expects).
fn result(routine: &'static str, result_image: i32) -> bool {
    result_image == 0 || crate::team::this_image(routine) == result_image
}

/// Gathers every image's `a` and folds them in image order with `f(acc, x)` (every image
/// computes the same result; it is written back into `a` where `keep`).
///
/// # Safety
/// `a` is a valid descriptor; `f` reads and writes one element.
unsafe fn gather_fold(
    routine: &'static str,
    a: DescPtr,
    keep: bool,
    f: &mut dyn FnMut(*mut u8, *const u8),
) -> CafResult {
    let images = crate::team::num_images(routine);
    // SAFETY: contract.
    let (n, len) = unsafe { (Shape::of(a).count(), (*a).elem_len) };
    let bytes = n * len;
    let buf = scratch(routine, bytes * (images + 1))?;
    // SAFETY: `buf` holds our part and every image's copy after it; `a` is valid.
    unsafe {
        copy(a, buf, true);
        coll::fcollect(routine, world(routine)?, buf.add(bytes), buf, bytes)?;
        let acc = buf; // Image 1's values become the accumulator.
        std::ptr::copy_nonoverlapping(buf.add(bytes), acc, bytes);
        for img in 1..images {
            let part = buf.add(bytes * (img + 1));
            for i in 0..n {
                f(acc.add(i * len), part.add(i * len));
            }
        }
        if keep {
            copy(a, acc, false);
        }
    }
    Ok(())
}

/// `GFC_CAF_BYREF`: the function returns its result through a first argument.
const BYREF: i32 = 1;
/// `GFC_CAF_ARG_VALUE`: the arguments are passed by value.
const ARG_VALUE: i32 = 4;

/// Applies a user function of signature `fn(T, T) -> T` (`by_value`) or
/// `fn(&T, &T) -> T`.
///
/// # Safety
/// `opr` has that signature; the pointers hold `T`s.
unsafe fn call<T: Copy>(opr: *mut c_void, by_value: bool, acc: *mut u8, x: *const u8) {
    // SAFETY: contract (unaligned: the scratch buffer packs elements back to back).
    unsafe {
        let (a, b) = (
            acc.cast::<T>().read_unaligned(),
            x.cast::<T>().read_unaligned(),
        );
        let r = if by_value {
            let f: extern "C" fn(T, T) -> T = std::mem::transmute_copy(&opr);
            f(a, b)
        } else {
            let f: extern "C" fn(*const T, *const T) -> T = std::mem::transmute_copy(&opr);
            f(&a, &b)
        };
        acc.cast::<T>().write_unaligned(r);
    }
}

/// A character function's step: `fn(char *res, size_t res_len, char *a, char *b,
/// size_t a_len, size_t b_len)`, gfortran's convention (`GFC_CAF_BYREF`). The length is
/// the one of the element, read from [`CHAR_LEN`].
///
/// # Safety
/// `opr` has that signature; the pointers hold one element each.
unsafe fn call_chars(opr: *mut c_void, _by_value: bool, acc: *mut u8, x: *const u8) {
    let len = CHAR_LEN.with(|l| l.get());
    let mut res = vec![b' '; len];
    // SAFETY: contract.
    unsafe {
        let f: extern "C" fn(*mut u8, usize, *const u8, *const u8, usize, usize) =
            std::mem::transmute_copy(&opr);
        f(res.as_mut_ptr(), len, acc, x, len, len);
        std::ptr::copy_nonoverlapping(res.as_ptr(), acc, len);
    }
}

/// A derived-type function's step: `fn(T *res, const T *a, const T *b)` with `res` the
/// hidden result argument (the element is longer than 16 bytes). The length is read from
/// [`CHAR_LEN`].
///
/// # Safety
/// `opr` has that signature; the pointers hold one element each.
unsafe fn call_sret(opr: *mut c_void, _by_value: bool, acc: *mut u8, x: *const u8) {
    let len = CHAR_LEN.with(|l| l.get());
    SRET.with(|cell| {
        let mut res = cell.borrow_mut();
        // 16-byte units: aligned for any component (real(16) included).
        let units = len.div_ceil(16);
        if res.len() < units {
            res.resize(units, 0);
        }
        let r = res.as_mut_ptr().cast::<u8>();
        // SAFETY: contract; `r` holds `len` bytes, aligned to 16.
        unsafe {
            let f: extern "C" fn(*mut u8, *const u8, *const u8) -> *mut u8 =
                std::mem::transmute_copy(&opr);
            f(r, acc, x);
            std::ptr::copy_nonoverlapping(r, acc, len);
        }
    });
}

thread_local! {
    /// The element length of the character or derived-type `co_reduce` running on this
    /// thread.
    static CHAR_LEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The result of one call of a derived-type `co_reduce` function.
    static SRET: std::cell::RefCell<Vec<u128>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `co_reduce(a, operation)`: the user's pure function folds the images' values in image
/// order, on every image.
///
/// # Safety
/// `a` is a valid descriptor; `opr` is the function gfortran passed with `flags`.
pub(crate) unsafe fn co_reduce(
    routine: &'static str,
    a: DescPtr,
    opr: *mut c_void,
    flags: i32,
    result_image: i32,
) -> CafResult {
    crate::team::known_gone(routine)?;
    let s = state(routine);
    if result_image != 0 {
        pe_of(s, result_image)?;
    }
    // SAFETY: contract.
    let (bt, len) = unsafe { ((*a).ty, (*a).elem_len) };
    let by_value = flags & ARG_VALUE != 0;
    type Step = unsafe fn(*mut c_void, bool, *mut u8, *const u8);
    let step: Step = match (bt, len) {
        (BT_CHARACTER, _) if flags & BYREF != 0 => call_chars,
        (BT_INTEGER | BT_LOGICAL, 1) => call::<i8>,
        (BT_INTEGER | BT_LOGICAL, 2) => call::<i16>,
        (BT_INTEGER | BT_LOGICAL, 4) => call::<i32>,
        (BT_INTEGER | BT_LOGICAL, 8) => call::<i64>,
        // Rust's i128 has C's __int128 ABI (by value too, since Rust 1.77).
        (BT_INTEGER | BT_LOGICAL, 16) => call::<i128>,
        (BT_REAL, 4) => call::<f32>,
        (BT_REAL, 8) => call::<f64>,
        (BT_COMPLEX, 8) => call::<Complex<f32>>,
        (BT_COMPLEX, 16) => call::<Complex<f64>>,
        // A derived type over 16 bytes is returned through a hidden first argument (the
        // x86-64 ABI's MEMORY class), whatever its components; one of up to 16 bytes comes
        // back in registers chosen by component types the descriptor does not give.
        (BT_DERIVED, 17..) if !by_value => call_sret,
        (BT_DERIVED, _) => unsupported(
            routine,
            &format!(
                "co_reduce on a derived type of {len} bytes{} (supported: over 16 bytes, \
                 arguments by reference)",
                if by_value { " passed by value" } else { "" }
            ),
        ),
        _ => unsupported(
            routine,
            &format!("co_reduce on type code {bt} of {len} bytes (flags {flags})"),
        ),
    };
    CHAR_LEN.with(|l| l.set(len));
    let mut f = |acc: *mut u8, x: *const u8| {
        // SAFETY: `step` matches the element type and gfortran's calling convention for
        // `flags`; `acc` and `x` are elements of the scratch buffer.
        unsafe { step(opr, by_value, acc, x) };
    };
    // SAFETY: forwarded contract.
    unsafe { gather_fold(routine, a, result(routine, result_image), &mut f) }
}
