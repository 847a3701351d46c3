//! rshmem-core: the runtime under every face of rshmem (safe Rust API, C ABI, coarrays).
//!
//! It implements each OpenSHMEM routine once, on raw addresses: symmetric addresses are
//! checked and translated to (segment, offset) pairs, then carried by a transport. The
//! layers, bottom up, one folder each: [`transport`] (the fabric: routes, shared memory,
//! the copy engine, UCX, libfabric), [`runtime`] (configuration, bootstrap, memory layout,
//! segments, the heap, setup queries), [`ctx`] (contexts, requests, the collective worker),
//! [`team`] (teams, the predefined ones, the debug call check), [`ops`] (the one-sided
//! routine families: [`rma`], [`amo`], [`signal`], [`p2p`], [`order`], [`lock`]), [`coll`]
//! (team synchronization and collectives) and [`world`] (init in phases, finalize, the
//! symmetric allocation collectives). Each layer keeps its own state
//! (`runtime::published`). `docs/architecture.md` draws them; `tests/layers.rs`
//! checks that a layer uses only those below it, and lists the imports that still run up.
//!
//! Errors name the routine and argument at fault ([`Error`]); faces decide whether to
//! return them (Rust) or end the job with them (C).
//!
//! **Internal crate** (`publish = false`): use `rshmem` (Rust) or `librshmem` (C). Its
//! API is raw and trusts its callers, the faces in this workspace: for instance
//! [`finalize`] is safe to call but unmaps the memory that live `rshmem::SymVec`s point
//! to, and [`runtime::try_runtime`] returns a `&'static` that ends at finalize. The faces
//! uphold those contracts (the Rust face's objects borrow its `Shmem` guard, which alone
//! finalizes), so the crate is kept out of reach instead of marking them `unsafe`.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The layers, bottom up; `unsafe` is allowed per folder, where raw memory is the job.
#[allow(unsafe_code)]
pub mod coll;
#[allow(unsafe_code)]
pub mod ctx;
#[allow(unsafe_code)]
pub mod ops;
#[allow(unsafe_code)]
pub mod runtime;
pub mod team;
#[allow(unsafe_code)]
pub mod transport;
#[allow(unsafe_code)]
pub mod world;

mod conc;
pub mod error;
pub mod ft;
#[cfg(all(test, loom))]
#[allow(unsafe_code)]
mod loom_tests;
#[allow(unsafe_code)]
pub mod profile;
#[allow(unsafe_code)]
pub mod word;

// The routine families under their short names, as the faces call them.
pub use coll::{algo, sync};
pub use ctx::request;
pub use ops::{amo, lock, order, p2p, rma, signal};
pub(crate) use runtime::heap;
pub use runtime::setup;
pub(crate) use transport::engine;
pub use world::memory;

pub use ctx::{Ctx, CtxHandle};
pub use engine::{pause_for_tests, Completion};
pub use error::{Departure, Error, InitError, Result};
pub use heap::{Exhausted, Heap, MIN_ALIGN};
pub use request::{ReqHandle, RequestParams};
pub use runtime::{fatal, initialized, ThreadLevel};
pub use signal::SignalOp;
pub use word::{AmoOp, Cmp, Word};
pub use world::{finalize, init};
