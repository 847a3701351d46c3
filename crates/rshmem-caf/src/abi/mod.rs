//! The `_gfortran_caf_*` entry points of gfortran's library ABI, one module per statement
//! family (team statements and image status are in `team` and `image_status`). Each turns
//! gfortran's arguments into a call of the runtime's modules and reports the result to
//! STAT=/ERRMSG= or ends the job.

mod atomics;
mod collectives;
mod image_control;
mod memory;
mod random;
mod start;
mod transfers;
