//! rshmem-core: the runtime under every face of rshmem (safe Rust API, C ABI, coarrays).
//!
//! It implements each OpenSHMEM routine once, on raw addresses: symmetric addresses are
//! checked and translated to (segment, offset) pairs, then carried by a transport. The
//! layers, bottom up: [`runtime`] (bootstrap, segments, routes), [`transport`] (shm),
//! then the routine families ([`rma`], [`amo`], [`signal`], [`p2p`], [`order`],
//! [`sync`], [`lock`], [`memory`], [`setup`]).
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

pub mod algo;
pub mod amo;
pub mod coll;
mod conc;
pub mod ctx;
mod engine;
pub mod error;
mod heap;
pub mod lock;
#[cfg(all(test, loom))]
mod loom_tests;
pub mod memory;
pub mod order;
pub mod p2p;
pub mod request;
pub mod rma;
pub mod runtime;
pub mod setup;
pub mod signal;
pub mod sync;
mod sys;
pub mod team;
pub mod transport;
pub mod word;

pub use ctx::{Ctx, CtxHandle};
pub use engine::{pause_for_tests, Completion};
pub use error::{Error, InitError, Result};
pub use heap::MIN_ALIGN;
pub use request::{ReqHandle, RequestParams};
pub use runtime::{fatal, finalize, init, initialized, ThreadLevel};
pub use signal::SignalOp;
pub use word::{AmoOp, Cmp, Word};
