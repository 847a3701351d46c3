//! The one-sided routine families: remote memory access, atomics, signals, point-to-point
//! waits, ordering and distributed locks. Each checks its arguments (symmetric addresses,
//! PE numbers, alignment), then hands the movement to the [fabric](crate::transport).

pub mod amo;
pub mod lock;
pub mod order;
pub mod p2p;
pub mod rma;
pub mod signal;
pub(crate) mod user_wait;
