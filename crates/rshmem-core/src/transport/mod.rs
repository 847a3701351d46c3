//! Transports: how one-sided operations reach a PE's symmetric memory.
//!
//! Operations are addressed by (PE, [`SymAddr`]): a segment and an offset inside it, never a
//! raw virtual address, because each process maps the segments at its own addresses. The
//! runtime picks a transport per PE at init (a [`Route`]) and dispatches with a `match`,
//! so the hot path has no dynamic call. `shm` serves every PE on this host; a network
//! transport (UCX, with one worker per context and software progress) plugs in as a
//! second implementation of [`Transport`] and a second `Route` variant.

pub(crate) mod engine;

pub(crate) mod shm;

use crate::word::{AmoOp, Word};

/// Which symmetric segment of a PE an address lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Seg {
    /// The symmetric heap (runtime area followed by the user heap).
    Heap = 0,
    /// The executable's global and static variables (`.data`, `.bss`), when shared.
    Data = 1,
}

/// A location in a PE's symmetric memory, valid on every PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymAddr {
    /// The segment.
    pub seg: Seg,
    /// Byte offset inside the segment.
    pub off: usize,
}

impl SymAddr {
    /// Bit of [`SymAddr::to_word`] that says [`Seg::Data`].
    const DATA_BIT: u64 = 1 << 63;

    /// The location as one word, for a peer to read from symmetric scratch.
    pub(crate) fn to_word(self) -> u64 {
        let seg = match self.seg {
            Seg::Heap => 0,
            Seg::Data => Self::DATA_BIT,
        };
        seg | self.off as u64
    }

    /// The location [`SymAddr::to_word`] made `w` from.
    pub(crate) fn from_word(w: u64) -> SymAddr {
        SymAddr {
            seg: if w & Self::DATA_BIT == 0 {
                Seg::Heap
            } else {
                Seg::Data
            },
            off: (w & !Self::DATA_BIT) as usize,
        }
    }
}

/// One-sided operations on remote symmetric memory.
///
/// Blocking `put` returns when `src` may be reused; `get` when the data is in `dst`.
/// `_nbi` operations complete at `quiet`. `fence` orders puts and AMOs to each PE.
/// Atomics are atomic with respect to other atomics through the same transport.
pub trait Transport {
    /// Copies `len` bytes from `src` to `dst` on `pe`.
    ///
    /// # Safety
    /// `src` is readable for `len` bytes; `dst` lies inside `pe`'s segment (checked by
    /// the runtime).
    unsafe fn put(&self, pe: usize, dst: SymAddr, src: *const u8, len: usize);

    /// Copies `len` bytes from `src` on `pe` to local `dst`.
    ///
    /// # Safety
    /// `dst` is writable for `len` bytes; `src` lies inside `pe`'s segment.
    unsafe fn get(&self, pe: usize, dst: *mut u8, src: SymAddr, len: usize);

    /// Non-blocking put: completes at the next `quiet`.
    ///
    /// # Safety
    /// As [`Transport::put`], and `src` stays unmodified until `quiet`.
    unsafe fn put_nbi(&self, pe: usize, dst: SymAddr, src: *const u8, len: usize) {
        // SAFETY: same contract, and completing early is allowed.
        unsafe { self.put(pe, dst, src, len) }
    }

    /// Non-blocking get: completes at the next `quiet`.
    ///
    /// # Safety
    /// As [`Transport::get`], and `dst` stays alive until `quiet`.
    unsafe fn get_nbi(&self, pe: usize, dst: *mut u8, src: SymAddr, len: usize) {
        // SAFETY: same contract, and completing early is allowed.
        unsafe { self.get(pe, dst, src, len) }
    }

    /// Applies `op` to the word at `addr` on `pe`, returning the previous value.
    ///
    /// # Safety
    /// `addr` lies inside `pe`'s segment and is aligned for `W`.
    unsafe fn atomic<W: Word>(&self, pe: usize, addr: SymAddr, op: AmoOp<W>) -> W;

    /// Orders earlier puts and AMOs to each PE before later ones.
    fn fence(&self);

    /// Completes every earlier operation.
    fn quiet(&self);

    /// A load/store pointer to `addr` on `pe`, if this transport maps it.
    fn ptr(&self, pe: usize, addr: SymAddr) -> Option<*mut u8>;
}

/// How the runtime reaches one PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Shared memory on this host.
    Shm,
    /// No transport reaches it (another host, no network transport built).
    None,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sym_addr_round_trips_through_a_word() {
        for a in [
            SymAddr {
                seg: Seg::Heap,
                off: 0,
            },
            SymAddr {
                seg: Seg::Data,
                off: 0x1234_5678,
            },
            SymAddr {
                seg: Seg::Heap,
                off: (1 << 62) + 8,
            },
        ] {
            assert_eq!(SymAddr::from_word(a.to_word()), a);
        }
    }
}
