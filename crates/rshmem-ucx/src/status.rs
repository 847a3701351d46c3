//! UCX status codes, this crate's errors, and the checks that turn UCX's returns into them.

use crate::sys;
use std::ffi::c_void;
use std::fmt;

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

pub(crate) fn check(routine: &'static str, st: sys::ucs_status_t) -> Result<()> {
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
pub(crate) fn ptr_is_err(p: *mut c_void) -> bool {
    (p as usize) >= (sys::UCS_ERR_LAST as isize as usize)
}

pub(crate) fn ptr_status(p: *mut c_void) -> Status {
    Status(p as isize as i8)
}
