//! `oshrun`, rshmem's launcher: starts N PEs of a program on this node, serves them PMI-1,
//! merges their output and ends the whole job when one PE fails.

#![warn(missing_docs)]
#![deny(unsafe_code)]

#[allow(unsafe_code)]
pub mod bind;
pub mod cli;
pub mod job;
pub mod output;
pub mod pmi;
pub mod shm;
#[allow(unsafe_code)]
pub mod sys;
