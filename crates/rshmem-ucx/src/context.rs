//! The UCP library and its context: [`LoadOptions`] and [`Ucp`] (memory registration is in
//! `region.rs`).

use crate::request::REQUEST_FREE;
use crate::status::{check, Result, UcxError};
use crate::sys;
use crate::worker::{Local, Multi, Worker};
use std::ffi::{CStr, CString};
use std::fmt;
use std::sync::Arc;

/// The library [`Ucp::load`] opens.
pub const DEFAULT_LIBRARY: &str = "libucp.so.0";

/// The UCP API version the checked-in bindings were generated against.
pub const API_VERSION: (u32, u32) = (sys::UCP_API_MAJOR, sys::UCP_API_MINOR);

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
    pub(crate) lib: sys::UcpLib,
    pub(crate) ctx: sys::ucp_context_h,
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
}

impl Drop for Ucp {
    fn drop(&mut self) {
        // SAFETY: every worker and region holds an Arc<Ucp>, so none is left.
        unsafe { self.lib.ucp_cleanup(self.ctx) };
    }
}
