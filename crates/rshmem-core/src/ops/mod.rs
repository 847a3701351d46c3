//! The one-sided routine families: remote memory access, atomics, signals, point-to-point
//! waits, ordering and distributed locks, and the pairwise synchronization and events that
//! Coarray Fortran's image control is made of. Each checks its arguments (symmetric addresses,
//! PE numbers, alignment), then hands the movement to the [fabric](crate::transport).

pub mod amo;
pub mod events;
pub mod lock;
pub mod order;
pub mod p2p;
pub mod pair_sync;
pub mod rma;
pub mod signal;
pub(crate) mod user_wait;
