//! RANDOM_INIT across images.
//!
//! libgfortran's `_gfortran_random_init` (GCC 12) knows one process: REPEATABLE gives the
//! same fixed seed wherever it runs, otherwise a fresh seed from the operating system, and
//! IMAGE_DISTINCT is left to the coarray runtime (an image number above 2 even makes it
//! stop). The four cases then come out as the standard says:
//!
//! | REPEATABLE | IMAGE_DISTINCT | seed |
//! |---|---|---|
//! | true | false | libgfortran's fixed seed on every image |
//! | true | true | the fixed seed, each word moved by a per-image amount (image 1 keeps it) |
//! | false | true | a fresh seed from the OS on each image |
//! | false | false | one seed for the whole job, new at each call, derived from a random value image 1 shares at start-up |

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use rshmem_core::{amo, AmoOp, Ctx};

use crate::desc::{Dim, Header, BT_INTEGER};
use crate::image::state;
use crate::stat_errmsg::{fatal, unsupported};

/// Image 1 at start-up: one random value, written to `addr` on every image (posted; the
/// SYNC ALL that ends `caf_init` completes it before any image reads it).
pub(crate) fn share_job_seed(addr: usize, n: usize) -> rshmem_core::Result<()> {
    let mut v = 0u64;
    // SAFETY: getrandom fills at most 8 bytes of `v`.
    let got = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, 0) };
    if got != 8 {
        // No getrandom: the clock and the process, different from run to run.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        v = t ^ (u64::from(std::process::id()) << 32);
    }
    for pe in 0..n {
        // SAFETY: `addr` is the symmetric word just allocated on every image, aligned.
        unsafe {
            amo::ctx_atomic_post::<u64>(
                Ctx::default_ctx(),
                "_gfortran_caf_init",
                addr as *const u64,
                AmoOp::Set(v),
                pe as i64,
            )?
        };
    }
    Ok(())
}

/// A libgfortran entry point, looked up at run time (the Rust tests link no libgfortran).
fn libgfortran(routine: &str, name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: dlsym with a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if p.is_null() {
        unsupported(
            routine,
            &format!(
                "RANDOM_INIT without libgfortran's {}",
                name.to_string_lossy()
            ),
        );
    }
    p
}

/// A rank-1 `integer(4)` array descriptor, as `random_seed(put=, get=)` reads one.
#[repr(C)]
struct SeedDesc {
    h: Header,
    d: Dim,
}

impl SeedDesc {
    fn of(words: &mut [i32]) -> SeedDesc {
        SeedDesc {
            h: Header {
                base_addr: words.as_mut_ptr().cast(),
                offset: -1,
                elem_len: 4,
                version: 0,
                rank: 1,
                ty: BT_INTEGER,
                attribute: 0,
                span: 4,
            },
            d: Dim {
                stride: 1,
                lbound: 1,
                ubound: words.len() as isize,
            },
        }
    }
}

/// `random_seed(size, put, get)` of libgfortran (`_gfortran_random_seed_i4`).
type RandomSeed = unsafe extern "C" fn(*mut i32, *mut SeedDesc, *mut SeedDesc);
/// `random_init(repeatable, image_distinct, image_num)`, logical and integer by value.
type RandomInit = unsafe extern "C" fn(c_int, c_int, c_int);

/// RANDOM_INIT's calls on this image with REPEATABLE and IMAGE_DISTINCT false: every
/// image makes the same calls, so the count picks the same new seed everywhere.
static SHARED_CALLS: AtomicU64 = AtomicU64::new(0);

/// `random_init(repeatable, image_distinct)` on this image.
pub(crate) fn random_init(routine: &'static str, repeatable: bool, distinct: bool) {
    let s = state(routine);
    let init = libgfortran(routine, c"_gfortran_random_init");
    // SAFETY: libgfortran's random_init with its signature; image number 0 is what
    // -fcoarray=single passes.
    unsafe {
        std::mem::transmute::<*mut c_void, RandomInit>(init)(
            c_int::from(repeatable),
            c_int::from(distinct),
            0,
        )
    };
    if repeatable != distinct {
        return; // Fixed and shared, or fresh on each image: libgfortran's seed is right.
    }
    // SAFETY: libgfortran's random_seed_i4 with its signature.
    let seed_fn = unsafe {
        std::mem::transmute::<*mut c_void, RandomSeed>(libgfortran(
            routine,
            c"_gfortran_random_seed_i4",
        ))
    };
    let mut size = 0i32;
    // SAFETY: SIZE= only.
    unsafe { seed_fn(&mut size, std::ptr::null_mut(), std::ptr::null_mut()) };
    let mut words = vec![0i32; size.max(0) as usize];
    // SAFETY: GET= into `words`, of the size libgfortran asked for.
    unsafe {
        seed_fn(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut SeedDesc::of(&mut words),
        )
    };
    if repeatable {
        spread(&mut words, s.me as u32);
    } else {
        // SAFETY: the job seed word of this image, written before caf_init's SYNC ALL.
        let job = unsafe { &*(s.job_seed as *const AtomicU64) }.load(Ordering::Acquire);
        if job == 0 && s.n > 1 {
            fatal(
                routine,
                "the job's random value did not arrive from image 1",
            );
        }
        shared(
            &mut words,
            job,
            SHARED_CALLS.fetch_add(1, Ordering::Relaxed),
        );
    }
    // SAFETY: PUT= from `words`, of the seed's size.
    unsafe {
        seed_fn(
            std::ptr::null_mut(),
            &mut SeedDesc::of(&mut words),
            std::ptr::null_mut(),
        )
    };
}

/// Moves every word of the seed by `image` times an odd amount of its own: images 0 and
/// `k` then differ in every word (an odd multiplier is invertible modulo 2^32).
fn spread(words: &mut [i32], image: u32) {
    for (i, w) in words.iter_mut().enumerate() {
        let odd = 0x9e37_79b9u32.wrapping_mul(i as u32 * 2 + 1) | 1;
        *w = (*w as u32).wrapping_add(image.wrapping_mul(odd)) as i32;
    }
}

/// The seed every image computes alike from the job's value and the call's number.
fn shared(words: &mut [i32], job: u64, call: u64) {
    let mut x = job ^ call.wrapping_mul(0xd1b5_4a32_d192_ed03);
    for w in words.iter_mut() {
        // splitmix64: consecutive outputs of one state are well mixed.
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        *w = (z ^ (z >> 31)) as i32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_seeds_differ_in_every_word() {
        let base = vec![7i32; 8];
        let imgs: Vec<Vec<i32>> = (0..5)
            .map(|img| {
                let mut w = base.clone();
                spread(&mut w, img);
                w
            })
            .collect();
        assert_eq!(imgs[0], base);
        for a in 0..5 {
            for b in a + 1..5 {
                assert!(imgs[a].iter().zip(&imgs[b]).all(|(x, y)| x != y));
            }
        }
    }

    #[test]
    fn shared_seeds_agree_and_change_per_call() {
        let (mut a, mut b, mut c) = (vec![0; 8], vec![0; 8], vec![0; 8]);
        shared(&mut a, 42, 0);
        shared(&mut b, 42, 0);
        shared(&mut c, 42, 1);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
