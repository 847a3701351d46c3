//! A small safe layer over UCX's UCP API: rshmem's network transport.
//!
//! Only UCP is used (never UCT): one [`Ucp`] context per process, [`Worker`]s (one per
//! communication context), [`Endpoint`]s to remote workers, registered memory [`Region`]s whose
//! packed remote keys are unpacked per endpoint into [`RemoteKey`]s, and one-sided operations
//! (put, get, atomics) on raw remote addresses (`u64`). A [`ProgressThread`] serves a worker's
//! peers while its owner computes: on TCP, UCX emulates RMA and atomics with active messages, so
//! the TARGET worker must progress for an operation to complete.
//!
//! # Loading UCX at run time
//!
//! The bindings (`src/bindings.rs`) were generated once by `scripts/gen-ucx-bindings.sh` against
//! Debian's `libucx-dev` 1.13.1 (UCP API 1.13) and are checked in. They use bindgen's
//! `--dynamic-loading` mode over the `libloading` crate: `libucp.so.0` is opened with `dlopen`
//! when [`Ucp::load`] is called, not linked. So building this crate, and `cargo test` of the
//! whole workspace, needs neither UCX headers, libclang nor `libucp` — only a job that actually
//! uses the network needs UCX installed, and then [`Ucp::load`]'s error says what to install.
//! UCP keeps its ABI backward compatible and [`Ucp::load`] passes the API version the bindings
//! were generated for to `ucp_init_version`, so newer UCX libraries work too. This crate's own
//! tests that need UCX are skipped (saying so on stderr) when `libucp.so.0` cannot be loaded,
//! unless `RSHMEM_REQUIRE_UCX=1`. The library is
//! opened with `RTLD_NODELETE`: UCX is never unloaded once loaded (its own modules and
//! callbacks may outlive a context).
//!
//! # Threads
//!
//! [`Ucp`] and [`Region`] are `Send + Sync` (the context is created with `mt_workers_shared`).
//! A [`Worker<Multi>`] (the default, `UCS_THREAD_MODE_MULTI`) and its endpoints and remote keys
//! are `Send + Sync`: any thread may issue operations or progress it, e.g. its owner and a
//! [`ProgressThread`]. A [`Worker<Local>`] (`UCS_THREAD_MODE_SERIALIZED`, cheaper) and its
//! endpoints and keys are neither `Send` nor `Sync`: they share the worker, so they must stay
//! on the thread that created them:
//!
//! ```compile_fail
//! fn needs_send<T: Send>(_: T) {}
//! let ucp = rshmem_ucx::Ucp::load().unwrap();
//! needs_send(ucp.local_worker().unwrap()); // a Local worker cannot move to another thread
//! ```
//! ```no_run
//! fn needs_send<T: Send>(_: T) {}
//! let ucp = rshmem_ucx::Ucp::load().unwrap();
//! needs_send(ucp.worker().unwrap()); // a Multi worker can
//! ```
//!
//! # Completion contract
//!
//! Non-blocking operations return [`Issued::Done`] when UCX completed them at once (a `done`
//! counter is then left untouched) or [`Issued::Pending`]: then, if a `done` counter was given,
//! 1 is added to it (`Release`) when the operation completes, from UCX's completion callback,
//! run inside some thread's progress call; the crate releases the request itself. A completed
//! put is LOCALLY complete (the source may be reused); remote completion needs
//! [`Worker::flush`]. A failed operation also counts as completed. When a peer dies, the
//! endpoint's [`Endpoint::status`] turns to [`UcxError::PeerFailed`], blocking operations waiting
//! on it return that error and later operations fail at once; a worker flush does NOT report it
//! (UCX purges the failed operations), so check the endpoints' status after a flush when it
//! matters.
//!
//! Status codes are named by a table of this crate ([`Status::name`]) rather than by
//! `ucs_status_string`, which lives in another library (`libucs`).

#![warn(missing_docs)]

#[allow(clippy::all)]
mod bindings;

use bindings as sys;
use rshmem_util::handoff::{self, Handoff};
use std::cell::Cell;
use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The library [`Ucp::load`] opens.
pub const DEFAULT_LIBRARY: &str = "libucp.so.0";

/// The UCP API version the checked-in bindings were generated against.
pub const API_VERSION: (u32, u32) = (sys::UCP_API_MAJOR, sys::UCP_API_MINOR);

/// A UCX status code (`ucs_status_t`, a signed byte; negative values are errors).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Status(pub i8);

impl Status {
    /// The name of the UCX constant (`UCS_ERR_...`) for this code.
    pub fn name(self) -> &'static str {
        match self.0 {
            sys::UCS_OK => "UCS_OK",
            sys::UCS_INPROGRESS => "UCS_INPROGRESS",
            sys::UCS_ERR_NO_MESSAGE => "UCS_ERR_NO_MESSAGE",
            sys::UCS_ERR_NO_RESOURCE => "UCS_ERR_NO_RESOURCE",
            sys::UCS_ERR_IO_ERROR => "UCS_ERR_IO_ERROR",
            sys::UCS_ERR_NO_MEMORY => "UCS_ERR_NO_MEMORY",
            sys::UCS_ERR_INVALID_PARAM => "UCS_ERR_INVALID_PARAM",
            sys::UCS_ERR_UNREACHABLE => "UCS_ERR_UNREACHABLE",
            sys::UCS_ERR_INVALID_ADDR => "UCS_ERR_INVALID_ADDR",
            sys::UCS_ERR_NOT_IMPLEMENTED => "UCS_ERR_NOT_IMPLEMENTED",
            sys::UCS_ERR_MESSAGE_TRUNCATED => "UCS_ERR_MESSAGE_TRUNCATED",
            sys::UCS_ERR_NO_PROGRESS => "UCS_ERR_NO_PROGRESS",
            sys::UCS_ERR_BUFFER_TOO_SMALL => "UCS_ERR_BUFFER_TOO_SMALL",
            sys::UCS_ERR_NO_ELEM => "UCS_ERR_NO_ELEM",
            sys::UCS_ERR_SOME_CONNECTS_FAILED => "UCS_ERR_SOME_CONNECTS_FAILED",
            sys::UCS_ERR_NO_DEVICE => "UCS_ERR_NO_DEVICE",
            sys::UCS_ERR_BUSY => "UCS_ERR_BUSY",
            sys::UCS_ERR_CANCELED => "UCS_ERR_CANCELED",
            sys::UCS_ERR_SHMEM_SEGMENT => "UCS_ERR_SHMEM_SEGMENT",
            sys::UCS_ERR_ALREADY_EXISTS => "UCS_ERR_ALREADY_EXISTS",
            sys::UCS_ERR_OUT_OF_RANGE => "UCS_ERR_OUT_OF_RANGE",
            sys::UCS_ERR_TIMED_OUT => "UCS_ERR_TIMED_OUT",
            sys::UCS_ERR_EXCEEDS_LIMIT => "UCS_ERR_EXCEEDS_LIMIT",
            sys::UCS_ERR_UNSUPPORTED => "UCS_ERR_UNSUPPORTED",
            sys::UCS_ERR_REJECTED => "UCS_ERR_REJECTED",
            sys::UCS_ERR_NOT_CONNECTED => "UCS_ERR_NOT_CONNECTED",
            sys::UCS_ERR_CONNECTION_RESET => "UCS_ERR_CONNECTION_RESET",
            sys::UCS_ERR_ENDPOINT_TIMEOUT => "UCS_ERR_ENDPOINT_TIMEOUT",
            s if (sys::UCS_ERR_LAST_LINK_FAILURE..=sys::UCS_ERR_FIRST_LINK_FAILURE)
                .contains(&s) =>
            {
                "UCS_ERR_LINK_FAILURE"
            }
            s if (sys::UCS_ERR_LAST_ENDPOINT_FAILURE..=sys::UCS_ERR_FIRST_ENDPOINT_FAILURE)
                .contains(&s) =>
            {
                "UCS_ERR_ENDPOINT_FAILURE"
            }
            _ => "UCS_ERR_UNKNOWN",
        }
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum UcxError {
    /// The UCX library could not be opened or lacks a needed function.
    #[error(
        "cannot load the UCX library {library} ({reason}); the network transport needs UCX: \
         install it (Debian/Ubuntu: `apt-get install libucx0`; RHEL/Fedora: `dnf install ucx`)"
    )]
    Load {
        /// The library name given to `dlopen`.
        library: String,
        /// The `dlopen`/`dlsym` error.
        reason: String,
    },
    /// A UCP routine failed.
    #[error("{routine} failed: {status}")]
    Status {
        /// The UCP routine.
        routine: &'static str,
        /// Its status.
        status: Status,
    },
    /// The endpoint's peer failed (the endpoint is unusable; close it).
    #[error("endpoint to the peer failed: {0}")]
    PeerFailed(Status),
    /// A bad argument to a routine of this crate.
    #[error("{routine}: {message}")]
    InvalidArgument {
        /// The routine of this crate.
        routine: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Result of this crate.
pub type Result<T, E = UcxError> = std::result::Result<T, E>;

fn check(routine: &'static str, st: sys::ucs_status_t) -> Result<()> {
    if st == sys::UCS_OK {
        Ok(())
    } else {
        Err(UcxError::Status {
            routine,
            status: Status(st),
        })
    }
}

// `UCS_PTR_IS_ERR` / `UCS_PTR_STATUS` are C macros: an error is encoded as a pointer whose
// value, read as a signed integer, is a status in [UCS_ERR_LAST, 0).
fn ptr_is_err(p: *mut c_void) -> bool {
    (p as usize) >= (sys::UCS_ERR_LAST as isize as usize)
}

fn ptr_status(p: *mut c_void) -> Status {
    Status(p as isize as i8)
}

/// `ucp_dt_make_contig(n)` (a C macro).
fn dt_contig(elem_size: usize) -> sys::ucp_datatype_t {
    ((elem_size as u64) << sys::UCP_DATATYPE_SHIFT) | u64::from(sys::UCP_DATATYPE_CONTIG)
}

// `ucp_request_free`, for the completion callback (which has no other way to reach the library).
// The library is never unloaded (RTLD_NODELETE), so the pointer stays valid.
static REQUEST_FREE: OnceLock<unsafe extern "C" fn(*mut c_void)> = OnceLock::new();

/// Options for [`Ucp::load_with`].
#[derive(Debug, Clone)]
pub struct LoadOptions<'a> {
    /// The library to `dlopen` (default [`DEFAULT_LIBRARY`]).
    pub library: &'a str,
    /// UCX configuration overrides, e.g. `("TLS", "tcp")` (names without the `UCX_` prefix);
    /// applied on top of the `UCX_*` environment variables.
    pub config: &'a [(&'a str, &'a str)],
    /// Overrides applied only where this UCX knows the name (settings of one transport,
    /// which other versions may lack or rename); an unknown name is skipped.
    pub if_known: &'a [(&'a str, &'a str)],
}

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions {
            library: DEFAULT_LIBRARY,
            config: &[],
            if_known: &[],
        }
    }
}

/// The loaded UCP library and one UCP context (features RMA, AMO32, AMO64, WAKEUP; workers may
/// be used from several threads). Cleaned up when the last worker, region and handle are gone.
pub struct Ucp {
    lib: sys::UcpLib,
    ctx: sys::ucp_context_h,
    version: String,
}

// SAFETY: the context is created with `mt_workers_shared`, which makes its routines (mem_map,
// rkey_pack, worker creation) thread-safe; the library table is immutable function pointers.
unsafe impl Send for Ucp {}
// SAFETY: as for Send.
unsafe impl Sync for Ucp {}

impl fmt::Debug for Ucp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ucp")
            .field("version", &self.version)
            .finish()
    }
}

impl Ucp {
    /// Opens `libucp.so.0` and creates a context (UCX settings from the `UCX_*` environment).
    pub fn load() -> Result<Arc<Ucp>> {
        Self::load_with(&LoadOptions::default())
    }

    /// As [`Ucp::load`], opening `library` instead.
    pub fn load_from(library: &str) -> Result<Arc<Ucp>> {
        Self::load_with(&LoadOptions {
            library,
            ..LoadOptions::default()
        })
    }

    /// As [`Ucp::load`], with options.
    pub fn load_with(opts: &LoadOptions<'_>) -> Result<Arc<Ucp>> {
        let load_err = |reason: String| UcxError::Load {
            library: opts.library.to_string(),
            reason,
        };
        let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
        // SAFETY: opening UCX runs its library constructors, which only initialise UCX itself.
        let lib = unsafe { libloading::os::unix::Library::open(Some(opts.library), flags) }
            .map_err(|e| load_err(e.to_string()))?;
        // SAFETY: the symbols are looked up by the names and C signatures of the UCX 1.13
        // headers the bindings were generated from; UCP keeps them ABI compatible.
        let lib = unsafe { sys::UcpLib::from_library(lib) }.map_err(|e| load_err(e.to_string()))?;
        let _ = REQUEST_FREE.set(lib.ucp_request_free);
        // SAFETY: returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(lib.ucp_get_version_string()) }
            .to_string_lossy()
            .into_owned();

        let mut config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: NULL prefix and file mean "UCX_ environment, default files"; `config` is an
        // out pointer.
        check("ucp_config_read", unsafe {
            lib.ucp_config_read(std::ptr::null(), std::ptr::null(), &mut config)
        })?;
        let mut ctx: sys::ucp_context_h = std::ptr::null_mut();
        let res = (|| {
            let required = opts.config.iter().map(|kv| (kv, true));
            for ((name, value), required) in
                required.chain(opts.if_known.iter().map(|kv| (kv, false)))
            {
                let bad = |what: &str| UcxError::InvalidArgument {
                    routine: "Ucp::load_with",
                    message: format!("config {what} contains a NUL byte"),
                };
                let n = CString::new(*name).map_err(|_| bad("name"))?;
                let v = CString::new(*value).map_err(|_| bad("value"))?;
                // SAFETY: config is valid; name and value are C strings.
                let status = unsafe { lib.ucp_config_modify(config, n.as_ptr(), v.as_ptr()) };
                if required || status != sys::UCS_ERR_NO_ELEM {
                    check("ucp_config_modify", status)?;
                }
            }
            let mut params = sys::ucp_params_t {
                field_mask: u64::from(
                    sys::UCP_PARAM_FIELD_FEATURES | sys::UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                ),
                features: u64::from(
                    sys::UCP_FEATURE_RMA
                        | sys::UCP_FEATURE_AMO32
                        | sys::UCP_FEATURE_AMO64
                        | sys::UCP_FEATURE_WAKEUP
                        | sys::UCP_FEATURE_AM,
                ),
                ..Default::default()
            };
            params.mt_workers_shared = 1;
            // SAFETY: `ucp_init` is an inline wrapper over this call with the header's API
            // version; params are zero-initialised except the fields named in field_mask.
            check("ucp_init", unsafe {
                lib.ucp_init_version(API_VERSION.0, API_VERSION.1, &params, config, &mut ctx)
            })
        })();
        // SAFETY: config came from ucp_config_read and is not used after this.
        unsafe { lib.ucp_config_release(config) };
        res?;
        Ok(Arc::new(Ucp { lib, ctx, version }))
    }

    /// The loaded UCX library's version string (e.g. "1.13.1").
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Creates a worker in `UCS_THREAD_MODE_MULTI`: usable from any thread (`Sync`).
    pub fn worker(self: &Arc<Self>) -> Result<Worker<Multi>> {
        Worker::create(self)
    }

    /// Creates a worker in `UCS_THREAD_MODE_SERIALIZED`, confined to the calling thread with
    /// its endpoints and keys.
    pub fn local_worker(self: &Arc<Self>) -> Result<Worker<Local>> {
        Worker::create(self)
    }

    /// Registers the existing memory `[addr, addr + len)` for remote access (nothing beyond the
    /// range is registered; UCX allocates nothing). The memory must stay mapped until the
    /// region is dropped.
    pub fn mem_map(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        self.map(addr, len, false)
    }

    /// [`Ucp::mem_map`] with `UCP_MEM_MAP_NONBLOCK`: pages are neither populated nor pinned
    /// up front, but when communication first touches them (on-demand paging where the
    /// network supports it), for a large range of which little is ever used.
    pub fn mem_map_on_demand(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        self.map(addr, len, true)
    }

    /// Allocates memory through UCX at exactly `[addr, addr + len)`, replacing what is mapped
    /// there (`UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED`), and registers it. On one host, memory
    /// that UCX allocated from its shared-memory domains is what its shared-memory transports
    /// reach one-sidedly (a put is a copy, an atomic a CPU atomic); memory it merely registered
    /// takes a system call per operation or the target's progress. The new memory reads as
    /// zero. When the region drops, the range is left reserved (inaccessible, backed by
    /// nothing) rather than unmapped, so the caller's reservation stays whole.
    ///
    /// # Safety
    /// `[addr, addr + len)` is page-aligned, lies in a mapping the caller owns, and holds
    /// nothing anyone still uses: its contents are lost.
    pub unsafe fn mem_alloc_fixed(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        let mut r = self.map_with(
            addr,
            len,
            sys::UCP_MEM_MAP_ALLOCATE | sys::UCP_MEM_MAP_FIXED,
        )?;
        r.fixed = true;
        Ok(r)
    }

    fn map(self: &Arc<Self>, addr: *mut u8, len: usize, on_demand: bool) -> Result<Region> {
        self.map_with(
            addr,
            len,
            if on_demand {
                sys::UCP_MEM_MAP_NONBLOCK
            } else {
                0
            },
        )
    }

    fn map_with(self: &Arc<Self>, addr: *mut u8, len: usize, flags: u32) -> Result<Region> {
        if addr.is_null() || len == 0 {
            return Err(UcxError::InvalidArgument {
                routine: "Ucp::mem_map",
                message: format!("empty range (addr {addr:p}, len {len})"),
            });
        }
        let params = sys::ucp_mem_map_params_t {
            field_mask: u64::from(
                sys::UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                    | sys::UCP_MEM_MAP_PARAM_FIELD_LENGTH
                    | sys::UCP_MEM_MAP_PARAM_FIELD_FLAGS,
            ),
            address: addr.cast(),
            length: len,
            flags,
            ..Default::default()
        };
        let mut memh: sys::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: params name an existing range (registered, or replaced under FIXED: the
        // caller of `mem_alloc_fixed` vouched for it); memh is an out pointer.
        check("ucp_mem_map", unsafe {
            self.lib.ucp_mem_map(self.ctx, &params, &mut memh)
        })?;
        Ok(Region {
            ucp: self.clone(),
            memh,
            addr: addr as u64,
            len,
            fixed: false,
        })
    }
}

impl Drop for Ucp {
    fn drop(&mut self) {
        // SAFETY: every worker and region holds an Arc<Ucp>, so none is left.
        unsafe { self.lib.ucp_cleanup(self.ctx) };
    }
}

/// Memory registered with [`Ucp::mem_map`]; unregistered on drop.
pub struct Region {
    ucp: Arc<Ucp>,
    memh: sys::ucp_mem_h,
    addr: u64,
    len: usize,
    /// Allocated at a fixed address ([`Ucp::mem_alloc_fixed`]): reserved again on drop.
    fixed: bool,
}

// SAFETY: memory handles belong to the thread-safe context (mt_workers_shared).
unsafe impl Send for Region {}
// SAFETY: as for Send; `pack_rkey` takes the context lock inside UCX.
unsafe impl Sync for Region {}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Region({:#x}, {} bytes)", self.addr, self.len)
    }
}

impl Region {
    /// The registered range's start address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The registered range's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (empty regions are refused).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The packed remote key, for peers' [`Endpoint::unpack_rkey`].
    pub fn pack_rkey(&self) -> Result<Vec<u8>> {
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let lib = &self.ucp.lib;
        // SAFETY: memh is live; buf and size are out pointers.
        check("ucp_rkey_pack", unsafe {
            lib.ucp_rkey_pack(self.ucp.ctx, self.memh, &mut buf, &mut size)
        })?;
        // SAFETY: UCX returned `size` bytes at `buf`, released right after the copy.
        let v = unsafe { std::slice::from_raw_parts(buf as *const u8, size) }.to_vec();
        // SAFETY: buf came from ucp_rkey_pack.
        unsafe { lib.ucp_rkey_buffer_release(buf) };
        Ok(v)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: memh came from ucp_mem_map on this context and is dropped once.
        unsafe { self.ucp.lib.ucp_mem_unmap(self.ucp.ctx, self.memh) };
        if self.fixed {
            // SAFETY: the range was the caller's (mem_alloc_fixed's contract) and UCX just
            // unmapped it; an inaccessible mapping keeps it from being handed out again.
            unsafe {
                libc::mmap(
                    self.addr as *mut c_void,
                    self.len,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A worker's thread mode, [`Multi`] or [`Local`].
pub trait ThreadMode: sealed::Sealed + 'static {
    #[doc(hidden)]
    const UCS_MODE: sys::ucs_thread_mode_t;
}

/// `UCS_THREAD_MODE_MULTI`: the worker and its endpoints and keys are `Send + Sync`.
#[derive(Debug)]
pub struct Multi;

/// `UCS_THREAD_MODE_SERIALIZED` used by one thread: the worker and its endpoints and keys are
/// neither `Send` nor `Sync`.
#[derive(Debug)]
pub struct Local(PhantomData<*const Cell<()>>);

impl sealed::Sealed for Multi {}
impl sealed::Sealed for Local {}
impl ThreadMode for Multi {
    const UCS_MODE: sys::ucs_thread_mode_t = sys::UCS_THREAD_MODE_MULTI;
}
impl ThreadMode for Local {
    const UCS_MODE: sys::ucs_thread_mode_t = sys::UCS_THREAD_MODE_SERIALIZED;
}

struct WorkerInner {
    ucp: Arc<Ucp>,
    h: sys::ucp_worker_h,
    /// The active-message handlers set on this worker, boxed so that the address UCX was
    /// given stays put; dropped after the worker is destroyed (`Drop` runs before fields).
    /// Boxed twice: UCX takes a thin pointer, a handler is a fat one, and a vector's
    /// elements move when it grows.
    #[allow(clippy::vec_box)]
    am_handlers: Mutex<Vec<Box<AmHandler>>>,
    /// The service this worker's blocking waits drive, where a wait of the process left it
    /// out of its progress thread's set ([`Worker::serve_while_blocked`]).
    serves: OnceLock<Driver>,
}

// SAFETY: the handle is only used through Worker/Endpoint/RemoteKey, whose mode marker makes
// them Send/Sync only for UCS_THREAD_MODE_MULTI workers, which UCX locks internally.
unsafe impl Send for WorkerInner {}
// SAFETY: as for Send.
unsafe impl Sync for WorkerInner {}

impl Drop for WorkerInner {
    fn drop(&mut self) {
        // SAFETY: every endpoint holds an Arc of this, so none is left.
        unsafe { self.ucp.lib.ucp_worker_destroy(self.h) };
    }
}

impl WorkerInner {
    fn lib(&self) -> &sys::UcpLib {
        &self.ucp.lib
    }

    fn progress(&self) -> bool {
        // SAFETY: live worker; the mode marker rules out unsynchronised use.
        unsafe { self.lib().ucp_worker_progress(self.h) != 0 }
    }

    /// Progresses until `req` (an `_nbx` return value) completes, then releases it.
    fn wait(&self, routine: &'static str, req: sys::ucs_status_ptr_t) -> Result<()> {
        self.wait_until(routine, req, None).map(|_| ())
    }

    /// As [`WorkerInner::wait`], giving up at `deadline`: returns whether `req` completed
    /// (if not, it is released and UCX frees it when it completes or its worker goes).
    fn wait_until(
        &self,
        routine: &'static str,
        req: sys::ucs_status_ptr_t,
        deadline: Option<Instant>,
    ) -> Result<bool> {
        if req.is_null() {
            return Ok(true);
        }
        if ptr_is_err(req) {
            return Err(UcxError::Status {
                routine,
                status: ptr_status(req),
            });
        }
        let lib = self.lib();
        let mut serving = None;
        loop {
            // SAFETY: req is a live request we own (no callback was set).
            let st = unsafe { lib.ucp_request_check_status(req) };
            if st != sys::UCS_INPROGRESS {
                // SAFETY: completed request, released once.
                unsafe { lib.ucp_request_free(req) };
                return check(routine, st).map(|()| true);
            }
            // Blocked: claimed here, not around every operation, so one that completes at
            // once (shared memory) never touches the handoff's lock.
            serving.get_or_insert_with(|| self.serves.get().and_then(Driver::drive_if_out));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                // SAFETY: a request we own, released once; UCX keeps it until it ends.
                unsafe { lib.ucp_request_free(req) };
                return Ok(false);
            }
            // A thread that claimed a service worker keeps serving it while it waits here:
            // the progress thread stands aside, and a peer may wait for this very service
            // to answer our request.
            let served = handoff::serve_claimed();
            if !self.progress() && !served {
                std::thread::yield_now();
            }
        }
    }
}

/// A UCP worker (one per communication context). See the crate doc for thread safety.
pub struct Worker<M: ThreadMode = Multi> {
    inner: Arc<WorkerInner>,
    _mode: PhantomData<M>,
}

impl<M: ThreadMode> fmt::Debug for Worker<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Worker({:p})", self.inner.h)
    }
}

impl<M: ThreadMode> Worker<M> {
    fn create(ucp: &Arc<Ucp>) -> Result<Self> {
        let params = sys::ucp_worker_params_t {
            field_mask: u64::from(sys::UCP_WORKER_PARAM_FIELD_THREAD_MODE),
            thread_mode: M::UCS_MODE,
            ..Default::default()
        };
        let mut h: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: params zero-initialised except thread_mode; h is an out pointer.
        check("ucp_worker_create", unsafe {
            ucp.lib.ucp_worker_create(ucp.ctx, &params, &mut h)
        })?;
        Ok(Worker {
            inner: Arc::new(WorkerInner {
                ucp: ucp.clone(),
                h,
                am_handlers: Mutex::new(Vec::new()),
                serves: OnceLock::new(),
            }),
            _mode: PhantomData,
        })
    }

    /// Runs `handler` for every active message `id` that arrives at this worker, inside the
    /// progress call that receives it (whichever thread progresses the worker), with the
    /// message's header and payload, whole. Senders use [`Endpoint::am_send`]. The handler
    /// stays until the worker is destroyed; it must not block, and a panic in it aborts the
    /// process (it runs inside UCX).
    pub fn set_am_handler(&self, id: u16, handler: AmHandler) -> Result<()> {
        let boxed = Box::new(handler);
        let param = sys::ucp_am_handler_param_t {
            field_mask: u64::from(
                sys::UCP_AM_HANDLER_PARAM_FIELD_ID
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_CB
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_ARG,
            ),
            id: u32::from(id),
            flags: sys::UCP_AM_FLAG_WHOLE_MSG,
            cb: Some(am_trampoline),
            arg: (&*boxed as *const AmHandler).cast_mut().cast(),
        };
        let mut handlers = self
            .inner
            .am_handlers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // SAFETY: live worker; `arg` points into a box kept (below) until after the worker is
        // destroyed, and the trampoline reads it as that type.
        check("ucp_worker_set_am_recv_handler", unsafe {
            self.inner
                .lib()
                .ucp_worker_set_am_recv_handler(self.inner.h, &param)
        })?;
        handlers.push(boxed);
        Ok(())
    }

    /// The packed worker address, for a peer's [`Worker::connect`].
    pub fn address(&self) -> Result<Vec<u8>> {
        let lib = self.inner.lib();
        let mut addr: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live worker; out pointers.
        check("ucp_worker_get_address", unsafe {
            lib.ucp_worker_get_address(self.inner.h, &mut addr, &mut len)
        })?;
        // SAFETY: UCX returned `len` bytes at `addr`, released right after the copy.
        let v = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
        // SAFETY: addr came from ucp_worker_get_address on this worker.
        unsafe { lib.ucp_worker_release_address(self.inner.h, addr) };
        Ok(v)
    }

    /// One round of progress; true if anything happened (call again until false).
    pub fn progress(&self) -> bool {
        self.inner.progress()
    }

    /// Makes this worker's blocking waits serve `service` too, while a wait of the process
    /// left it out of its progress thread's set ([`Driver::drive_if_out`]): a peer blocked
    /// towards this process may be waiting for that service to answer it. Set once, before
    /// the worker is used (a later call is ignored); `service` must not be this worker's.
    pub fn serve_while_blocked(&self, service: &Driver) {
        let _ = self.inner.serves.set(service.clone());
    }

    /// Orders the operations issued before it before those issued after it (no completion).
    pub fn fence(&self) -> Result<()> {
        // SAFETY: live worker.
        check("ucp_worker_fence", unsafe {
            self.inner.lib().ucp_worker_fence(self.inner.h)
        })
    }

    /// Blocks (progressing the worker) until every operation issued on this worker so far is
    /// complete at its target.
    pub fn flush(&self) -> Result<()> {
        self.flush_until(None).map(drop)
    }

    /// As [`Worker::flush`], giving up after `bound`: returns whether the flush completed.
    /// For a teardown, once every peer has said it needs nothing more: a peer that already
    /// exited may never answer (a process it started can hold its connections open).
    pub fn flush_within(&self, bound: Duration) -> Result<bool> {
        self.flush_until(Some(Instant::now() + bound))
    }

    fn flush_until(&self, deadline: Option<Instant>) -> Result<bool> {
        let param = sys::ucp_request_param_t::default();
        // SAFETY: live worker; no callback, the request is waited for or released below.
        let req = unsafe { self.inner.lib().ucp_worker_flush_nbx(self.inner.h, &param) };
        self.inner.wait_until("ucp_worker_flush_nbx", req, deadline)
    }

    /// Starts a flush of every operation issued on this worker so far: when it completes, they
    /// are complete at their targets. Same completion contract as the operations.
    ///
    /// # Safety
    /// `done` must stay alive until it is incremented.
    pub unsafe fn flush_nb(&self, done: Option<&AtomicU64>) -> Result<Issued> {
        let p = Endpoint::<M>::param(done);
        // SAFETY: live worker; the caller keeps done alive.
        let req = unsafe { self.inner.lib().ucp_worker_flush_nbx(self.inner.h, &p) };
        issued(
            self.inner.lib(),
            "ucp_worker_flush_nbx",
            req,
            done.is_some(),
        )
    }

    /// The worker's event file descriptor (readable when [`Worker::arm`]ed and work arrived).
    /// Owned by the worker: do not close it.
    pub fn efd(&self) -> Result<RawFd> {
        let mut fd: libc::c_int = -1;
        // SAFETY: live worker (created with the WAKEUP feature); fd is an out pointer.
        check("ucp_worker_get_efd", unsafe {
            self.inner.lib().ucp_worker_get_efd(self.inner.h, &mut fd)
        })?;
        Ok(fd)
    }

    /// Arms the event fd before sleeping on it: true if armed, false if events are pending
    /// (progress again instead of sleeping).
    pub fn arm(&self) -> Result<bool> {
        // SAFETY: live worker.
        match unsafe { self.inner.lib().ucp_worker_arm(self.inner.h) } {
            sys::UCS_OK => Ok(true),
            sys::UCS_ERR_BUSY => Ok(false),
            st => Err(UcxError::Status {
                routine: "ucp_worker_arm",
                status: Status(st),
            }),
        }
    }

    /// Wakes a thread sleeping on the event fd.
    pub fn signal(&self) -> Result<()> {
        // SAFETY: live worker; ucp_worker_signal is thread-safe in any mode.
        check("ucp_worker_signal", unsafe {
            self.inner.lib().ucp_worker_signal(self.inner.h)
        })
    }

    /// Creates an endpoint to the worker whose packed [`Worker::address`] is `remote_address`,
    /// with peer error handling: if the peer dies, pending and later operations fail with
    /// [`UcxError::PeerFailed`] instead of hanging. The connection is wired up lazily: the first
    /// operation needs both workers to progress.
    ///
    /// UCX 1.13 then uses only transports able to detect a dead peer (tcp here; rc/dc/ud on
    /// InfiniBand), not shared memory: see [`Worker::connect_with`].
    pub fn connect(&self, remote_address: &[u8]) -> Result<Endpoint<M>> {
        self.connect_with(remote_address, true)
    }

    /// As [`Worker::connect`]; with `peer_errors` false (`UCP_ERR_HANDLING_MODE_NONE`) UCX may
    /// use every transport, shared memory included, but an operation to a dead peer may hang.
    pub fn connect_with(&self, remote_address: &[u8], peer_errors: bool) -> Result<Endpoint<M>> {
        if remote_address.is_empty() {
            return Err(UcxError::InvalidArgument {
                routine: "Worker::connect",
                message: "empty remote address".into(),
            });
        }
        let failed = Box::new(AtomicI8::new(sys::UCS_OK));
        let params = sys::ucp_ep_params_t {
            field_mask: u64::from(
                sys::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                    | sys::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                    | sys::UCP_EP_PARAM_FIELD_ERR_HANDLER,
            ),
            address: remote_address.as_ptr().cast(),
            err_mode: if peer_errors {
                sys::UCP_ERR_HANDLING_MODE_PEER
            } else {
                sys::UCP_ERR_HANDLING_MODE_NONE
            },
            err_handler: sys::ucp_err_handler {
                cb: Some(ep_error_cb),
                arg: (&*failed as *const AtomicI8).cast_mut().cast(),
            },
            ..Default::default()
        };
        let mut h: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: live worker; the address bytes are read during the call (UCX copies what it
        // needs); the error handler's argument is a heap cell owned by the endpoint, which
        // outlives the UCX endpoint (closed in EpInner's Drop before the box is freed).
        check("ucp_ep_create", unsafe {
            self.inner
                .lib()
                .ucp_ep_create(self.inner.h, &params, &mut h)
        })?;
        Ok(Endpoint {
            inner: Arc::new(EpInner {
                worker: self.inner.clone(),
                h,
                failed,
            }),
            _mode: PhantomData,
        })
    }
}

/// Turns an `_nbx` return value into [`Issued`]; a request without a counting callback is
/// released at once (UCX then completes it internally).
fn issued(
    lib: &sys::UcpLib,
    routine: &'static str,
    req: sys::ucs_status_ptr_t,
    counted: bool,
) -> Result<Issued> {
    if req.is_null() {
        Ok(Issued::Done)
    } else if ptr_is_err(req) {
        Err(UcxError::Status {
            routine,
            status: ptr_status(req),
        })
    } else {
        if !counted {
            // SAFETY: a live request nobody else references.
            unsafe { lib.ucp_request_free(req) };
        }
        Ok(Issued::Pending)
    }
}

extern "C" fn ep_error_cb(arg: *mut c_void, _ep: sys::ucp_ep_h, status: sys::ucs_status_t) {
    // SAFETY: arg is the endpoint's failure cell, alive until the endpoint is closed.
    let cell = unsafe { &*(arg as *const AtomicI8) };
    cell.store(
        if status == sys::UCS_OK {
            sys::UCS_ERR_IO_ERROR
        } else {
            status
        },
        Ordering::Release,
    );
}

/// An active-message handler (see [`Worker::set_am_handler`]): called with the message's
/// header and payload.
pub type AmHandler = Box<dyn Fn(&[u8], &[u8]) + Send + Sync>;

// Receive callback of every active-message id: the handler registered with it, on the
// message's header and payload (eager and whole: `Endpoint::am_send` never sends otherwise).
extern "C" fn am_trampoline(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const sys::ucp_am_recv_param_t,
) -> sys::ucs_status_t {
    // SAFETY: UCX passes the receive parameters of this message.
    let attr = unsafe { (*param).recv_attr };
    if attr & u64::from(sys::UCP_AM_RECV_ATTR_FLAG_RNDV) != 0 {
        // Its payload would need a receive of its own; no sender of ours asks for that.
        eprintln!("rshmem-ucx: an active message arrived by rendezvous; aborting");
        std::process::abort();
    }
    let bytes = |p: *const c_void, n: usize| -> &[u8] {
        if n == 0 {
            &[]
        } else {
            // SAFETY: UCX passes `n` readable bytes at `p`, valid during this call.
            unsafe { std::slice::from_raw_parts(p.cast(), n) }
        }
    };
    // SAFETY: `arg` is the address of a handler `Worker::set_am_handler` keeps alive as long
    // as the worker.
    let handler = unsafe { &*(arg as *const AmHandler) };
    let run =
        std::panic::AssertUnwindSafe(|| handler(bytes(header, header_length), bytes(data, length)));
    if std::panic::catch_unwind(run).is_err() {
        // Unwinding into UCX is undefined behaviour.
        std::process::abort();
    }
    sys::UCS_OK
}

// Completion callback of pending operations with a `done` counter: release, then count (the
// caller may tear everything down as soon as it sees the count).
extern "C" fn send_done_cb(
    request: *mut c_void,
    _status: sys::ucs_status_t,
    user_data: *mut c_void,
) {
    if let Some(free) = REQUEST_FREE.get() {
        // SAFETY: request is this completed request, not referenced elsewhere (the issuer did
        // not keep it); releasing inside the callback is allowed by UCX.
        unsafe { free(request) };
    }
    // SAFETY: user_data is the caller's counter, which the caller keeps alive until this runs.
    unsafe { &*(user_data as *const AtomicU64) }.fetch_add(1, Ordering::Release);
}

struct EpInner {
    worker: Arc<WorkerInner>,
    h: sys::ucp_ep_h,
    failed: Box<AtomicI8>,
}

// SAFETY: as for WorkerInner: only reachable through mode-marked Endpoint/RemoteKey; the failure
// cell is atomic.
unsafe impl Send for EpInner {}
// SAFETY: as for Send.
unsafe impl Sync for EpInner {}

impl Drop for EpInner {
    fn drop(&mut self) {
        let mut param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_FLAGS,
            ..Default::default()
        };
        param.flags = sys::UCP_EP_CLOSE_FLAG_FORCE;
        // SAFETY: every RemoteKey of this endpoint holds an Arc of this, so all are destroyed;
        // the endpoint is closed once.
        let req = unsafe { self.worker.lib().ucp_ep_close_nbx(self.h, &param) };
        // A forced close completes locally; its status is of no use here.
        let _ = self.worker.wait("ucp_ep_close_nbx", req);
    }
}

/// An endpoint to a remote worker. Closed (forced) on drop, once its remote keys are gone.
pub struct Endpoint<M: ThreadMode = Multi> {
    inner: Arc<EpInner>,
    _mode: PhantomData<M>,
}

impl<M: ThreadMode> fmt::Debug for Endpoint<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({:p})", self.inner.h)
    }
}

/// A remote key unpacked on one endpoint; destroyed on drop (before its endpoint is closed).
pub struct RemoteKey<M: ThreadMode = Multi> {
    ep: Arc<EpInner>,
    h: RkeyHandle,
    _mode: PhantomData<M>,
}

#[derive(Clone, Copy)]
struct RkeyHandle(sys::ucp_rkey_h);

// SAFETY: only reachable through the mode-marked RemoteKey; operations using it run under the
// worker's lock in UCS_THREAD_MODE_MULTI.
unsafe impl Send for RkeyHandle {}
// SAFETY: as for Send.
unsafe impl Sync for RkeyHandle {}

impl<M: ThreadMode> fmt::Debug for RemoteKey<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemoteKey({:p})", self.h.0)
    }
}

impl<M: ThreadMode> RemoteKey<M> {
    /// A pointer through which this process reaches the remote byte at `raddr` with loads
    /// and stores, where UCX maps the remote memory here (its shared-memory transports, on
    /// memory UCX allocated); `None` elsewhere.
    pub fn local_ptr(&self, raddr: u64) -> Option<*mut u8> {
        let mut p = std::ptr::null_mut();
        // SAFETY: a live key (its endpoint is held); `p` is a valid out-pointer.
        let st = unsafe { self.ep.worker.lib().ucp_rkey_ptr(self.h.0, raddr, &mut p) };
        (st == sys::UCS_OK && !p.is_null()).then_some(p.cast())
    }
}

impl<M: ThreadMode> Drop for RemoteKey<M> {
    fn drop(&mut self) {
        // SAFETY: the key came from ucp_ep_rkey_unpack; its endpoint is still open (we hold it).
        unsafe { self.ep.worker.lib().ucp_rkey_destroy(self.h.0) };
    }
}

/// What a non-blocking operation did (see the crate doc's completion contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// Completed at once; the `done` counter was not touched.
    Done,
    /// Outstanding; the `done` counter, if given, gets +1 on completion.
    Pending,
}

/// A non-fetching atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// `*r += v`
    Add,
    /// `*r &= v`
    And,
    /// `*r |= v`
    Or,
    /// `*r ^= v`
    Xor,
}

/// A fetching atomic operation (returns the old value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchOp {
    /// `*r += v`
    Add,
    /// `*r &= v`
    And,
    /// `*r |= v`
    Or,
    /// `*r ^= v`
    Xor,
    /// `*r = v`
    Swap,
}

impl AtomicOp {
    fn ucp(self) -> sys::ucp_atomic_op_t {
        match self {
            AtomicOp::Add => sys::UCP_ATOMIC_OP_ADD,
            AtomicOp::And => sys::UCP_ATOMIC_OP_AND,
            AtomicOp::Or => sys::UCP_ATOMIC_OP_OR,
            AtomicOp::Xor => sys::UCP_ATOMIC_OP_XOR,
        }
    }
}

impl FetchOp {
    fn ucp(self) -> sys::ucp_atomic_op_t {
        match self {
            FetchOp::Add => sys::UCP_ATOMIC_OP_ADD,
            FetchOp::And => sys::UCP_ATOMIC_OP_AND,
            FetchOp::Or => sys::UCP_ATOMIC_OP_OR,
            FetchOp::Xor => sys::UCP_ATOMIC_OP_XOR,
            FetchOp::Swap => sys::UCP_ATOMIC_OP_SWAP,
        }
    }
}

/// An atomic operand: 4 or 8 bytes, in native byte order.
#[repr(C)]
union Operand {
    u32: u32,
    u64: u64,
}

impl Operand {
    fn new(size: usize, v: u64) -> Operand {
        if size == 4 {
            Operand { u32: v as u32 }
        } else {
            Operand { u64: v }
        }
    }

    fn get(&self, size: usize) -> u64 {
        // SAFETY: both fields are plain integers; the one of `size` bytes was written.
        unsafe {
            if size == 4 {
                u64::from(self.u32)
            } else {
                self.u64
            }
        }
    }
}

/// Caller-owned storage of a non-blocking fetching atomic ([`Endpoint::atomic_fetch_nb`],
/// [`Endpoint::cswap_nb`]): UCX reads the operand and writes the old value here while the
/// operation is in flight, so it must outlive the operation and not be reused before.
#[repr(C)]
pub struct AmoBuffer {
    operand: std::cell::UnsafeCell<Operand>,
    reply: std::cell::UnsafeCell<Operand>,
}

// SAFETY: plain integers; the unsafe issuing functions make the caller keep it unshared while
// an operation is in flight.
unsafe impl Send for AmoBuffer {}

impl Default for AmoBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for AmoBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AmoBuffer")
    }
}

impl AmoBuffer {
    /// An empty buffer.
    pub const fn new() -> Self {
        AmoBuffer {
            operand: std::cell::UnsafeCell::new(Operand { u64: 0 }),
            reply: std::cell::UnsafeCell::new(Operand { u64: 0 }),
        }
    }

    /// The old value fetched by the completed operation of `size` bytes (4 or 8). Read it
    /// after completion only ([`Issued::Done`], or the `done` counter observed incremented).
    pub fn result(&self, size: usize) -> u64 {
        // SAFETY: after completion UCX no longer writes the reply; the caller reads it after
        // observing completion (Acquire on the counter, or the issuing call's return).
        unsafe { (*self.reply.get()).get(size) }
    }
}

#[inline(always)]
fn check_size(routine: &'static str, size: usize) -> Result<()> {
    if size == 4 || size == 8 {
        Ok(())
    } else {
        Err(bad_size(routine, size))
    }
}

#[cold]
#[inline(never)]
fn bad_size(routine: &'static str, size: usize) -> UcxError {
    UcxError::InvalidArgument {
        routine,
        message: format!("size {size} (must be 4 or 8)"),
    }
}

impl<M: ThreadMode> Endpoint<M> {
    /// The endpoint's state: `Ok` or the peer failure UCX reported.
    #[inline]
    pub fn status(&self) -> Result<()> {
        match self.inner.failed.load(Ordering::Acquire) {
            sys::UCS_OK => Ok(()),
            st => Err(UcxError::PeerFailed(Status(st))),
        }
    }

    /// Unpacks a peer's packed remote key ([`Region::pack_rkey`]) for use on this endpoint.
    pub fn unpack_rkey(&self, packed: &[u8]) -> Result<RemoteKey<M>> {
        if packed.is_empty() {
            return Err(UcxError::InvalidArgument {
                routine: "Endpoint::unpack_rkey",
                message: "empty packed key".into(),
            });
        }
        let mut h: sys::ucp_rkey_h = std::ptr::null_mut();
        // SAFETY: open endpoint; the packed bytes are read during the call.
        check("ucp_ep_rkey_unpack", unsafe {
            self.lib()
                .ucp_ep_rkey_unpack(self.inner.h, packed.as_ptr().cast(), &mut h)
        })?;
        Ok(RemoteKey {
            ep: self.inner.clone(),
            h: RkeyHandle(h),
            _mode: PhantomData,
        })
    }

    /// Closes the endpoint now (forced: outstanding operations are dropped), or when its last
    /// remote key is dropped if some are still alive.
    pub fn close(self) {
        drop(self)
    }

    fn lib(&self) -> &sys::UcpLib {
        self.inner.worker.lib()
    }

    #[inline]
    fn check_rkey(&self, routine: &'static str, rkey: &RemoteKey<M>) -> Result<()> {
        if !Arc::ptr_eq(&self.inner, &rkey.ep) {
            return Err(UcxError::InvalidArgument {
                routine,
                message: "remote key unpacked on another endpoint".into(),
            });
        }
        self.status()
    }

    /// Waits for `req`; a failure on a failed endpoint is reported as the peer's failure.
    #[inline]
    fn wait(&self, routine: &'static str, req: sys::ucs_status_ptr_t) -> Result<()> {
        // Completed at once (shared memory, short messages): nothing to wait for.
        if req.is_null() {
            return Ok(());
        }
        self.inner
            .worker
            .wait(routine, req)
            .map_err(|e| match self.status() {
                Err(peer) => peer,
                Ok(()) => e,
            })
    }

    fn param(done: Option<&AtomicU64>) -> sys::ucp_request_param_t {
        let mut p = sys::ucp_request_param_t::default();
        if let Some(d) = done {
            p.op_attr_mask = sys::UCP_OP_ATTR_FIELD_CALLBACK | sys::UCP_OP_ATTR_FIELD_USER_DATA;
            p.cb.send = Some(send_done_cb);
            p.user_data = (d as *const AtomicU64).cast_mut().cast();
        }
        p
    }

    fn issued(
        &self,
        routine: &'static str,
        req: sys::ucs_status_ptr_t,
        counted: bool,
    ) -> Result<Issued> {
        if req.is_null() {
            Ok(Issued::Done)
        } else if ptr_is_err(req) {
            Err(UcxError::Status {
                routine,
                status: ptr_status(req),
            })
        } else {
            if !counted {
                // SAFETY: a request we do not need; UCX completes it internally.
                unsafe { self.lib().ucp_request_free(req) };
            }
            Ok(Issued::Pending)
        }
    }

    /// Starts writing `len` bytes from `src` to `raddr` in the peer's region of `rkey`.
    ///
    /// # Safety
    /// `src..src+len` must stay readable and unmodified until local completion ([`Issued::Done`]
    /// or the `done` increment), and `done` must stay alive until it is incremented.
    pub unsafe fn put(
        &self,
        src: *const u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        self.check_rkey("Endpoint::put", rkey)?;
        let p = Self::param(done);
        // SAFETY: the caller keeps src and done alive as documented; the key is this endpoint's.
        let req = unsafe {
            self.lib()
                .ucp_put_nbx(self.inner.h, src.cast(), len, raddr, rkey.h.0, &p)
        };
        self.issued("ucp_put_nbx", req, done.is_some())
    }

    /// Starts reading `len` bytes at `raddr` in the peer's region of `rkey` into `dst`.
    ///
    /// # Safety
    /// `dst..dst+len` must stay writable and otherwise unused until completion ([`Issued::Done`]
    /// or the `done` increment), and `done` must stay alive until it is incremented.
    pub unsafe fn get(
        &self,
        dst: *mut u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        self.check_rkey("Endpoint::get", rkey)?;
        let p = Self::param(done);
        // SAFETY: the caller keeps dst and done alive as documented; the key is this endpoint's.
        let req = unsafe {
            self.lib()
                .ucp_get_nbx(self.inner.h, dst.cast(), len, raddr, rkey.h.0, &p)
        };
        self.issued("ucp_get_nbx", req, done.is_some())
    }

    /// Writes `src` to `raddr` and waits for local completion (`src` reusable; remote
    /// completion needs [`Worker::flush`]).
    pub fn put_blocking(&self, src: &[u8], raddr: u64, rkey: &RemoteKey<M>) -> Result<()> {
        self.check_rkey("Endpoint::put_blocking", rkey)?;
        let p = sys::ucp_request_param_t::default();
        // SAFETY: src is borrowed until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_put_nbx(
                self.inner.h,
                src.as_ptr().cast(),
                src.len(),
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_put_nbx", req)
    }

    /// Sends active message `id` with `header` and `data` to the peer's worker, eagerly (its
    /// handler gets the message whole), and waits for local completion (both buffers
    /// reusable). Delivery is not awaited: a [`Worker::flush`] covers the message once sent.
    pub fn am_send(&self, id: u16, header: &[u8], data: &[u8]) -> Result<()> {
        self.status()?;
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_FLAGS,
            flags: sys::UCP_AM_SEND_FLAG_EAGER,
            ..Default::default()
        };
        // SAFETY: header and data are borrowed until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_am_send_nbx(
                self.inner.h,
                u32::from(id),
                header.as_ptr().cast(),
                header.len(),
                data.as_ptr().cast(),
                data.len(),
                &p,
            )
        };
        self.wait("ucp_am_send_nbx", req)
    }

    /// Reads `dst.len()` bytes at `raddr` into `dst` and waits until they arrived.
    pub fn get_blocking(&self, dst: &mut [u8], raddr: u64, rkey: &RemoteKey<M>) -> Result<()> {
        self.check_rkey("Endpoint::get_blocking", rkey)?;
        let p = sys::ucp_request_param_t::default();
        // SAFETY: dst is borrowed mutably until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_get_nbx(
                self.inner.h,
                dst.as_mut_ptr().cast(),
                dst.len(),
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_get_nbx", req)
    }

    /// A non-fetching atomic `op` with `value` on the `size`-byte (4 or 8) word at `raddr`.
    /// Returns after local completion (normally at once).
    pub fn atomic_post(
        &self,
        op: AtomicOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<()> {
        check_size("Endpoint::atomic_post", size)?;
        self.check_rkey("Endpoint::atomic_post", rkey)?;
        let operand = Operand::new(size, value);
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE,
            datatype: dt_contig(size),
            ..Default::default()
        };
        // SAFETY: operand lives until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op.ucp(),
                (&operand as *const Operand).cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_atomic_op_nbx", req)
    }

    /// A fetching atomic `op` with `value` on the `size`-byte word at `raddr`; blocks
    /// (progressing the worker) and returns the old value.
    pub fn atomic_fetch(
        &self,
        op: FetchOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<u64> {
        check_size("Endpoint::atomic_fetch", size)?;
        self.check_rkey("Endpoint::atomic_fetch", rkey)?;
        let operand = Operand::new(size, value);
        let mut reply = Operand::new(size, 0);
        self.fetch_op(op.ucp(), size, &operand, &mut reply, raddr, rkey)?;
        Ok(reply.get(size))
    }

    /// Compare-and-swap on the `size`-byte word at `raddr`: stores `new` if it holds `compare`;
    /// blocks and returns the old value (equal to `compare` iff the swap happened).
    pub fn cswap(
        &self,
        compare: u64,
        new: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<u64> {
        check_size("Endpoint::cswap", size)?;
        self.check_rkey("Endpoint::cswap", rkey)?;
        // UCP's CSWAP takes the compare value as the operand and the new value in the reply
        // buffer, which then receives the old value.
        let operand = Operand::new(size, compare);
        let mut reply = Operand::new(size, new);
        self.fetch_op(
            sys::UCP_ATOMIC_OP_CSWAP,
            size,
            &operand,
            &mut reply,
            raddr,
            rkey,
        )?;
        Ok(reply.get(size))
    }

    /// Starts a fetching atomic `op` with `value` on the `size`-byte word at `raddr`; the old
    /// value is then in `buf` ([`AmoBuffer::result`]).
    ///
    /// # Safety
    /// `buf` must stay alive and unused by anything else until completion ([`Issued::Done`] or
    /// the `done` increment), and `done` must stay alive until it is incremented.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn atomic_fetch_nb(
        &self,
        op: FetchOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        buf: &AmoBuffer,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        check_size("Endpoint::atomic_fetch_nb", size)?;
        self.check_rkey("Endpoint::atomic_fetch_nb", rkey)?;
        // SAFETY: the caller gives us buf exclusively until completion.
        unsafe {
            *buf.operand.get() = Operand::new(size, value);
            *buf.reply.get() = Operand::new(size, 0);
            self.fetch_op_nb(op.ucp(), size, buf, raddr, rkey, done)
        }
    }

    /// Starts a compare-and-swap (as [`Endpoint::cswap`]); the old value is then in `buf`.
    ///
    /// # Safety
    /// As for [`Endpoint::atomic_fetch_nb`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn cswap_nb(
        &self,
        compare: u64,
        new: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        buf: &AmoBuffer,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        check_size("Endpoint::cswap_nb", size)?;
        self.check_rkey("Endpoint::cswap_nb", rkey)?;
        // SAFETY: the caller gives us buf exclusively until completion.
        unsafe {
            *buf.operand.get() = Operand::new(size, compare);
            *buf.reply.get() = Operand::new(size, new);
            self.fetch_op_nb(sys::UCP_ATOMIC_OP_CSWAP, size, buf, raddr, rkey, done)
        }
    }

    /// # Safety
    /// buf and done as for [`Endpoint::atomic_fetch_nb`].
    unsafe fn fetch_op_nb(
        &self,
        op: sys::ucp_atomic_op_t,
        size: usize,
        buf: &AmoBuffer,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        let mut p = Self::param(done);
        p.op_attr_mask |= sys::UCP_OP_ATTR_FIELD_DATATYPE | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.datatype = dt_contig(size);
        p.reply_buffer = buf.reply.get().cast();
        // SAFETY: the caller keeps buf and done alive until completion.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op,
                buf.operand.get().cast_const().cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.issued("ucp_atomic_op_nbx", req, done.is_some())
    }

    fn fetch_op(
        &self,
        op: sys::ucp_atomic_op_t,
        size: usize,
        operand: &Operand,
        reply: &mut Operand,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<()> {
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER,
            datatype: dt_contig(size),
            reply_buffer: (reply as *mut Operand).cast(),
            ..Default::default()
        };
        // SAFETY: operand and reply live until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op,
                (operand as *const Operand).cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_atomic_op_nbx", req)
    }
}

/// Lets threads that wait anyway drive a [`ProgressThread`]'s worker, so a request that
/// needs the target (a get or fetching atomic over TCP) is served at once instead of after
/// the thread wakes up. One driver at a time: UCX's own worker lock spins, which on an
/// oversubscribed host costs whole time slices, so drivers take a sleeping lock first,
/// and a waiter only tries it.
#[derive(Debug, Clone)]
pub struct Driver {
    worker: Arc<Worker<Multi>>,
    lock: Arc<Mutex<()>>,
    /// Who sleeps on the worker's event fd: the thread, or the threads that wait anyway
    /// (an arrival wakes the one thread that needs it; see [`rshmem_util::handoff`]).
    handoff: Arc<Handoff>,
}

/// A waiting thread's claim on a [`Driver`]'s worker ([`Driver::drive`],
/// [`rshmem_util::handoff::Claim`]); dropping it hands the worker back to the progress
/// thread once no other thread waits. While it lives, the thread's blocking operations on
/// any worker drive the claimed worker too.
pub type Driving<'d> = handoff::Claim<'d, Driver>;

impl handoff::Service for Driver {
    fn serve(&self) -> bool {
        self.try_progress()
    }

    /// The last waiter arms the worker (so that its fd signals the next event) before the
    /// fd goes back to the progress thread, which then wakes only if an event is pending.
    fn rearm(&self) -> bool {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Arming fails while events are pending: serve them first. An error is the
        // progress thread's to meet (and end on): it is woken for it.
        for _ in 0..64 {
            while self.worker.progress() {}
            match self.worker.arm() {
                Ok(true) => return true,
                Ok(false) => {}
                Err(_) => return false,
            }
        }
        false
    }

    fn handoff(&self) -> &Handoff {
        &self.handoff
    }
}

impl Driver {
    /// Progresses the worker until idle unless another thread is driving it; true if this
    /// call found work (a peer's operation was served, or one of ours completed).
    pub fn try_progress(&self) -> bool {
        match self.lock.try_lock() {
            Ok(_g) => {
                let mut any = false;
                while self.worker.progress() {
                    any = true;
                }
                any
            }
            Err(_) => false,
        }
    }

    /// Claims the worker for a waiting thread: until the claim drops, the progress thread
    /// stands aside, and the waiter must drive the worker ([`Driver::try_progress`] between
    /// checks, [`Driver::sleep`] rather than a timed sleep).
    pub fn drive(&self) -> Driving<'_> {
        handoff::claim(self)
    }

    /// [`Driver::drive`] only if a waiter left the worker out of the thread's set
    /// ([`handoff::claim_if_out`]), for a thread about to block on its own operations.
    #[inline]
    pub fn drive_if_out(&self) -> Option<Driving<'_>> {
        handoff::claim_if_out(self)
    }

    /// Sleeps until the worker has work or `timeout` passes (a driving waiter's nap);
    /// returns at once if work is pending or another thread is driving the worker.
    pub fn sleep(&self, timeout: std::time::Duration) {
        {
            let Ok(_g) = self.lock.try_lock() else {
                return;
            };
            while self.worker.progress() {}
            if !matches!(self.worker.arm(), Ok(true)) {
                return;
            }
        }
        self.handoff.nap(timeout);
    }
}

/// A thread that progresses a [`Worker<Multi>`] whenever it has work and sleeps on its event fd
/// otherwise (never spins), so the worker's peers are served while its owner computes; it
/// stands aside while threads of the process drive the worker themselves ([`Driver::drive`]).
/// Stopped and joined by [`ProgressThread::stop`] or on drop.
#[derive(Debug)]
pub struct ProgressThread {
    driver: Driver,
    stopping: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl ProgressThread {
    /// Starts the thread.
    pub fn start(worker: Arc<Worker<Multi>>) -> Result<ProgressThread> {
        let handoff = Handoff::new(worker.efd()?).map_err(|e| UcxError::InvalidArgument {
            routine: "ProgressThread::start",
            message: format!("cannot make the thread's epoll set: {e}"),
        })?;
        let stopping = Arc::new(AtomicBool::new(false));
        let flag = stopping.clone();
        let rounds = Arc::new(AtomicU64::new(0));
        let counter = rounds.clone();
        let driver = Driver {
            worker: worker.clone(),
            lock: Arc::new(Mutex::new(())),
            handoff: Arc::new(handoff),
        };
        let lock = driver.lock.clone();
        let handoff = driver.handoff.clone();
        let handle = std::thread::Builder::new()
            .name("ucx-progress".into())
            .spawn(move || -> Result<()> {
                while !flag.load(Ordering::Acquire) {
                    counter.fetch_add(1, Ordering::Relaxed);
                    // While a waiting thread holds the worker's fd (or did within
                    // handoff::LINGER) the worker is its to drive: the thread only sleeps.
                    if !handoff.claimed() {
                        // Sleeps (never spins) while a waiting thread drives the worker.
                        let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
                        while worker.progress() {}
                        if !worker.arm()? {
                            continue;
                        }
                    }
                    // Wakes on the stop fd, or on the worker's while no thread drives it.
                    handoff.sleep().map_err(|e| UcxError::InvalidArgument {
                        routine: "ProgressThread",
                        message: format!("epoll_wait: {e}"),
                    })?;
                }
                Ok(())
            })
            .map_err(|e| UcxError::InvalidArgument {
                routine: "ProgressThread::start",
                message: format!("cannot spawn the thread: {e}"),
            })?;
        Ok(ProgressThread {
            driver,
            stopping,
            rounds,
            handle: Some(handle),
        })
    }

    /// A handle with which other threads drive the worker too, without contending: while
    /// one drives, the thread and the others do not (see [`Driver::try_progress`]).
    pub fn driver(&self) -> Driver {
        self.driver.clone()
    }

    /// How many times the thread has woken up and progressed the worker (a diagnostic: it
    /// stays still while the worker is idle).
    pub fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Stops and joins the thread; returns the error that ended it early, if any.
    pub fn stop(mut self) -> Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        let Some(h) = self.handle.take() else {
            return Ok(());
        };
        self.stopping.store(true, Ordering::Release);
        self.driver.handoff.stop();
        h.join().unwrap_or_else(|_| {
            Err(UcxError::InvalidArgument {
                routine: "ProgressThread",
                message: "the progress thread panicked".into(),
            })
        })
    }
}

impl Drop for ProgressThread {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

#[cfg(test)]
mod tests;
