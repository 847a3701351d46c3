//! Leaf utilities shared by every rshmem crate: the typed table of `SHMEM_*` environment
//! variables, size parsing, CPU lists, and the spin-then-yield waiting policy.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod cpus;
pub mod wait;

pub use config::{parse_size, Config, ConfigError};
pub use crossbeam_utils::CachePadded;
pub use wait::Waiter;
