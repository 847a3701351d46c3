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
#![deny(unsafe_code)]

#[allow(clippy::all, unsafe_code)]
mod bindings;

use bindings as sys;

#[allow(unsafe_code)]
mod atomics;
#[allow(unsafe_code)]
mod context;
#[allow(unsafe_code)]
mod endpoint;
mod progress;
#[allow(unsafe_code)]
mod region;
#[allow(unsafe_code)]
mod request;
mod status;
#[allow(unsafe_code)]
mod worker;

pub use atomics::{AmoBuffer, AtomicOp, FetchOp};
pub use context::{LoadOptions, Ucp, API_VERSION, DEFAULT_LIBRARY};
pub use endpoint::{Endpoint, RemoteKey};
pub use progress::{Driver, Driving, ProgressThread};
pub use region::Region;
pub use request::Issued;
pub use status::{Result, Status, UcxError};
pub use worker::{AmHandler, Local, Multi, ThreadMode, Worker};

#[cfg(test)]
#[allow(unsafe_code)]
mod tests;
