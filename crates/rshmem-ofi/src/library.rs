//! Opening `libfabric.so.1` and looking up its exported functions.

use crate::bindings as sys;
use crate::{OfiError, Result};
use std::ffi::{c_int, CStr, CString};

/// The exported functions of a loaded libfabric (kept loaded: opened with `RTLD_NODELETE`).
pub(crate) struct Lib {
    _lib: libloading::os::unix::Library,
    pub(crate) getinfo: sys::FiGetinfo,
    pub(crate) freeinfo: sys::FiFreeinfo,
    pub(crate) dupinfo: sys::FiDupinfo,
    pub(crate) fabric: sys::FiFabric,
    strerror: sys::FiStrerror,
    version: sys::FiVersion,
}

/// ofi_rxm's bounce-buffer size (`FI_OFI_RXM_BUFFER_SIZE`), set when the user has not: rxm
/// carries only this crate's single-element atomics and its control messages in them (RMA
/// goes to the core endpoint), and every endpoint zeroes two pools of 1024 such buffers
/// when enabled and more as it connects. At rxm's default of 16 KiB that is 34 MB and 18 ms
/// per endpoint, 70 ms of a 2-PE job's first barrier and 80 ms of its finalize; at 1 KiB,
/// 12 and 12 ms, with put and AMO figures unchanged (docs/results/osu-ofi.md).
const RXM_BUFFER_SIZE: (&str, &str) = ("FI_OFI_RXM_BUFFER_SIZE", "1024");

impl Lib {
    pub(crate) fn open(library: &str) -> Result<Lib> {
        // Before the library reads its variables (its first fi_getinfo). A user's own value
        // wins. Setting it in-process is the only way libfabric takes parameters; it happens
        // once per process, in shmem_init, before the network threads exist.
        if std::env::var_os(RXM_BUFFER_SIZE.0).is_none() {
            std::env::set_var(RXM_BUFFER_SIZE.0, RXM_BUFFER_SIZE.1);
        }
        let load_err = |reason: String| OfiError::Load {
            library: library.to_string(),
            reason,
        };
        let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
        // SAFETY: opening libfabric runs its constructors, which only initialise libfabric.
        let lib = unsafe { libloading::os::unix::Library::open(Some(library), flags) }
            .map_err(|e| load_err(e.to_string()))?;
        let handle = lib.into_raw();
        // SAFETY: `handle` came from `into_raw` just above; the Library owns it again.
        let lib = unsafe { libloading::os::unix::Library::from_raw(handle) };
        let mut ptrs = [std::ptr::null_mut::<libc::c_void>(); sys::SYMBOLS.len()];
        for (p, (name, version)) in ptrs.iter_mut().zip(sys::SYMBOLS) {
            let n = CString::new(name).expect("symbol names have no NUL");
            let v = CString::new(version).expect("versions have no NUL");
            // SAFETY: `handle` is a live dlopen handle; both names are C strings. The
            // version pins the ABI of the structs these functions take to the one the
            // bindings describe, whatever newer default a later libfabric exports.
            *p = unsafe { libc::dlvsym(handle, n.as_ptr(), v.as_ptr()) };
            if p.is_null() {
                // A libfabric without symbol versions (not built with GNU ld).
                // SAFETY: as above.
                *p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            }
            if p.is_null() {
                return Err(load_err(format!("it lacks the function {name}")));
            }
        }
        // SAFETY: each pointer is the named function, whose C signature (at the looked-up
        // symbol version) is the one the bindings declare.
        unsafe {
            Ok(Lib {
                _lib: lib,
                getinfo: std::mem::transmute::<*mut libc::c_void, sys::FiGetinfo>(ptrs[0]),
                freeinfo: std::mem::transmute::<*mut libc::c_void, sys::FiFreeinfo>(ptrs[1]),
                dupinfo: std::mem::transmute::<*mut libc::c_void, sys::FiDupinfo>(ptrs[2]),
                fabric: std::mem::transmute::<*mut libc::c_void, sys::FiFabric>(ptrs[3]),
                strerror: std::mem::transmute::<*mut libc::c_void, sys::FiStrerror>(ptrs[4]),
                version: std::mem::transmute::<*mut libc::c_void, sys::FiVersion>(ptrs[5]),
            })
        }
    }

    /// The library's API version, `(major, minor)`.
    pub(crate) fn version(&self) -> (u32, u32) {
        // SAFETY: no arguments; returns a number.
        let v = unsafe { (self.version)() };
        (v >> 16, v & 0xffff)
    }

    /// libfabric's text for an error number (positive or negative).
    pub(crate) fn strerror(&self, code: c_int) -> String {
        // SAFETY: fi_strerror returns a static NUL-terminated string for any number.
        let p = unsafe { (self.strerror)(code.abs()) };
        if p.is_null() {
            return format!("error {code}");
        }
        // SAFETY: non-null static C string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// An error for `routine` having returned `code` (a negative libfabric error number).
    pub(crate) fn error(&self, routine: &'static str, code: isize) -> OfiError {
        let code = code.unsigned_abs() as c_int;
        OfiError::Call {
            routine,
            code,
            message: self.strerror(code),
        }
    }

    /// `Ok` for 0, else the error of `routine`.
    pub(crate) fn check(&self, routine: &'static str, ret: c_int) -> Result<()> {
        if ret == 0 {
            Ok(())
        } else {
            Err(self.error(routine, ret as isize))
        }
    }
}
