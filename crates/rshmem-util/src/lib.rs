//! Leaf utilities shared by every rshmem crate: the typed table of `SHMEM_*` environment
//! variables, size parsing, CPU lists, the spin-then-yield waiting policy, and the
//! handoff of a network's event fd between a progress thread and waiting threads.

// Unsafe code lives in `handoff` only (system calls on fds the networks own).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod cpus;
#[allow(unsafe_code)]
pub mod handoff;
pub mod wait;

pub use config::{parse_size, Config, ConfigError};
pub use crossbeam_utils::CachePadded;
pub use wait::Waiter;
