//! The image: start-up, the runtime's own symmetric words, termination.

use std::sync::{Mutex, MutexGuard, OnceLock};

use rshmem_core::coll::tolerant_sync::ArrivalWords;
use rshmem_core::ops::pair_sync::PairCounters;
use rshmem_core::{memory, ThreadLevel};

use crate::stat_errmsg::{fatal, CafError, CafResult};

/// Queue nodes per image: one per lock this image holds or waits for at a time.
pub(crate) const QNODES: usize = rshmem_core::lock::POOL_NODES;

/// What every image allocates at start-up, at the same symmetric addresses everywhere.
#[derive(Debug)]
pub(crate) struct State {
    /// This image's PE number (image number minus 1).
    pub me: usize,
    /// Number of images.
    pub n: usize,
    /// SYNC IMAGES's notification counters, one per image (the core's pairwise
    /// synchronization).
    pub pairs: PairCounters,
    /// [`QNODES`] queue nodes of 8 bytes, lent to the core's locks
    /// ([`rshmem_core::lock::LockAt`]).
    pub qnodes: usize,
    /// The collectives' first scratch buffer ([`SCRATCH`] bytes).
    pub scratch: usize,
    /// SYNC ALL's arrival words of the initial team (the core's barrier that goes on
    /// without stopped and failed images).
    pub all_words: ArrivalWords,
    /// Free queue nodes and the locks this image holds (no lock on LOCK/UNLOCK).
    pub locks: crate::locks::LockBook,
    /// Symmetric word that image 1 fills at start-up with one random value for the whole
    /// job (RANDOM_INIT's seeds shared by every image, [`crate::random`]).
    pub job_seed: usize,
}

/// Bytes of the collectives' scratch buffer made at start-up: collectives this small never
/// allocate (a collective allocation ends the job once an image has stopped, where the
/// collective itself reports `STAT_STOPPED_IMAGE`).
pub(crate) const SCRATCH: usize = 4096;

/// What only this image reads and writes (not on the put/get paths).
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// The collectives' symmetric scratch buffer (address, bytes).
    pub scratch: (usize, usize),
}

static STATE: OnceLock<State> = OnceLock::new();
static LOCAL: Mutex<Option<Local>> = Mutex::new(None);

/// `_gfortran_caf_init` (or the first registration, whichever comes first): starts the
/// runtime and allocates the runtime's symmetric words (collective, before any coarray is
/// registered, so addresses match on every image).
pub(crate) fn init() {
    if STATE.get().is_some() {
        return;
    }
    if let Err(e) = rshmem_core::init(ThreadLevel::Single) {
        eprintln!("libcaf_rshmem: {e}");
        std::process::exit(1);
    }
    // A program that ends through EXIT or a C exit() skips caf_finalize: finalize then.
    rshmem_core::world::finalize_at_exit_silently();
    let r = (|| -> rshmem_core::Result<State> {
        let me = rshmem_core::setup::my_pe()?;
        let n = rshmem_core::setup::n_pes()?;
        let counters = memory::calloc("_gfortran_caf_init", n, PairCounters::STRIDE)? as usize;
        let qnodes = memory::calloc("_gfortran_caf_init", QNODES, 8)? as usize;
        let all_words = memory::calloc("_gfortran_caf_init", n, ArrivalWords::STRIDE)? as usize;
        crate::byref::init(n)?;
        let scratch = memory::malloc("_gfortran_caf_init", SCRATCH)? as usize;
        let job_seed = memory::calloc("_gfortran_caf_init", 1, 8)? as usize;
        if me == 0 {
            crate::random::share_job_seed(job_seed, n)?;
        }
        Ok(State {
            me,
            n,
            pairs: PairCounters::new(counters, n),
            qnodes,
            scratch,
            all_words: ArrivalWords::new(all_words),
            locks: crate::locks::LockBook::new(QNODES),
            job_seed,
        })
    })();
    match r {
        Ok(s) => {
            *local() = Some(Local {
                scratch: (s.scratch, SCRATCH),
            });
            let _ = STATE.set(s);
        }
        Err(e) => fatal("_gfortran_caf_init", &e.to_string()),
    }
}

/// The state, starting the runtime if needed: gfortran registers static coarrays from a
/// constructor (`_caf_init.N`), which runs before `main` calls `caf_init`.
pub(crate) fn state(routine: &str) -> &'static State {
    if let Some(s) = STATE.get() {
        return s;
    }
    init();
    match STATE.get() {
        Some(s) => s,
        None => fatal(routine, "the runtime did not start"),
    }
}

/// This image's private bookkeeping.
pub(crate) fn local() -> MutexGuard<'static, Option<Local>> {
    LOCAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the private bookkeeping (present after `init`).
pub(crate) fn with_local<T>(routine: &str, f: impl FnOnce(&mut Local) -> T) -> T {
    let mut g = local();
    match g.as_mut() {
        Some(l) => f(l),
        None => fatal(routine, "called before _gfortran_caf_init"),
    }
}

/// The PE of 1-based image `image` of the current team, checked.
#[inline]
pub(crate) fn pe_of(s: &State, image: i32) -> CafResult<usize> {
    if let Some(t) = crate::team::current() {
        return t.pe_of(image);
    }
    if image < 1 || image as usize > s.n {
        return Err(CafError::new(
            crate::stat_errmsg::STAT_ERROR,
            format!(
                "image index {image} is out of range (valid images are 1..{})",
                s.n
            ),
        ));
    }
    Ok(image as usize - 1)
}

/// Flushes every Fortran unit, so output written before the job ends (STOP, ERROR STOP,
/// an error) is not lost when the launcher ends the other images.
pub(crate) fn flush_fortran() {
    type Flush = unsafe extern "C" fn(*const i32);
    static FLUSH: OnceLock<Option<Flush>> = OnceLock::new();
    let f = FLUSH.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; libgfortran is loaded in every gfortran
        // program (and absent elsewhere: then nothing is flushed).
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_gfortran_flush_i4".as_ptr()) };
        // SAFETY: `_gfortran_flush_i4(GFC_INTEGER_4 *unit)` is FLUSH; a null unit flushes
        // all units.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, Flush>(p) })
    });
    if let Some(f) = f {
        // SAFETY: null means "every unit".
        unsafe { f(std::ptr::null()) };
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
}

/// `_gfortran_caf_finalize` and normal STOP: completes this image's transfers and waits
/// for every image to end (the implicit synchronization of normal termination).
pub(crate) fn finalize() {
    if !rshmem_core::initialized() {
        return;
    }
    flush_fortran();
    let _ = rshmem_core::order::quiet();
    rshmem_core::finalize();
}

/// STOP and ERROR STOP: prints the stop message as libgfortran does (unless QUIET=), then
/// ends this image (STOP: after normal termination) or the job (ERROR STOP) with `code`.
pub(crate) fn stop(msg: Option<String>, code: i32, error: bool, quiet: bool) -> ! {
    flush_fortran();
    if !quiet {
        if let Some(m) = msg {
            let word = if error { "ERROR STOP" } else { "STOP" };
            // One write for the whole line: stderr is unbuffered and `eprintln!` writes
            // its pieces one by one, so another image's ERROR STOP ending the job could cut
            // the line after "ERROR STOP" (seen at 4 images).
            let line = format!("{word} {m}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        }
    }
    if error {
        let _ = rshmem_core::order::quiet();
        rshmem_core::setup::global_exit(code)
    }
    finalize();
    std::process::exit(code)
}
