//! The shared-memory transport: every PE of the host has every other PE's segment mapped,
//! PE `p` at `base + p * stride`, so an operation is a `memcpy` or a CPU atomic on the
//! peer's mapping (the [fabric](super::Fabric) does both). No locks, no allocation, no
//! system call.

use std::mem::MaybeUninit;

use super::SymAddr;

/// Where one segment of every local PE is mapped: PE `p`'s at `base + p * stride`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegMap {
    /// Address of PE 0's slot.
    pub(crate) base: *mut u8,
    /// Distance between consecutive PEs' slots.
    pub(crate) stride: usize,
    /// Mapped bytes per slot (offsets must stay below it).
    pub(crate) len: usize,
}

impl SegMap {
    /// No segment (`len` 0).
    pub(crate) const NONE: SegMap = SegMap {
        base: std::ptr::null_mut(),
        stride: 0,
        len: 0,
    };
}

/// The shm transport over reservations holding every local PE's segments, indexed by
/// [`Seg`](super::Seg).
#[derive(Debug)]
pub(crate) struct Shm {
    segs: [SegMap; 2],
}

// SAFETY: `Shm` holds addresses of shared mappings that live as long as the runtime; the
// memory is accessed only with copies and atomics under the OpenSHMEM memory model.
unsafe impl Send for Shm {}
// SAFETY: as above; the struct itself is immutable after init.
unsafe impl Sync for Shm {}

impl Shm {
    pub(crate) fn new(heap: SegMap, data: SegMap) -> Shm {
        Shm { segs: [heap, data] }
    }

    /// Address of `addr` in `pe`'s mapping.
    #[inline(always)]
    pub(crate) fn addr(&self, pe: usize, addr: SymAddr) -> *mut u8 {
        let s = &self.segs[addr.seg as usize];
        debug_assert!(addr.off < s.len);
        s.base.wrapping_add(pe * s.stride).wrapping_add(addr.off)
    }
}

/// `memmove`, with the word sizes done in line: a put or get of one `long` whose size is
/// known only at run time (`shmem_putmem(.., 8, ..)` from C) would otherwise pay a call
/// into libc, a third of its cost.
///
/// The words are moved as `MaybeUninit` integers, never as integers: a `Remote` type with
/// padding (say `#[repr(C)] struct { a: u8, b: u32 }`) has uninitialised bytes, and
/// reading those as a `u64` would be undefined behaviour. The machine code is the same
/// load and store.
///
/// # Safety
/// As `std::ptr::copy`.
#[inline(always)]
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract; each case reads the whole source before writing, so
    // overlapping ranges behave as with memmove. `MaybeUninit<T>` may hold any bytes,
    // initialised or not, so the typed copy is valid for every source.
    unsafe {
        match len {
            8 => word::<u64>(src, dst),
            4 => word::<u32>(src, dst),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// One unaligned `size_of::<T>()`-byte move through `MaybeUninit<T>`.
///
/// # Safety
/// `src` readable and `dst` writable for `size_of::<T>()` bytes.
#[inline(always)]
unsafe fn word<T: Copy>(src: *const u8, dst: *mut u8) {
    // SAFETY: the caller's contract; `read_unaligned`/`write_unaligned` need no alignment,
    // and a `MaybeUninit` value carries uninitialised bytes through unchanged.
    unsafe {
        dst.cast::<MaybeUninit<T>>()
            .write_unaligned(src.cast::<MaybeUninit<T>>().read_unaligned())
    }
}

#[cfg(test)]
mod tests {
    use super::copy;

    /// A `Remote`-like type with 3 bytes of padding: 8 bytes, 5 of them initialised.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Padded {
        a: u8,
        b: u32,
    }

    #[test]
    fn padded_values_copy_without_reading_padding_as_integers() {
        // Under Miri, reading the padding through a `u64` is reported as undefined
        // behaviour (issue 10, item 17); through `MaybeUninit` it is not.
        let src = [Padded {
            a: 7,
            b: 0xdead_beef,
        }; 2];
        let mut dst = [Padded { a: 0, b: 0 }; 2];
        // SAFETY: both arrays hold two 8-byte values.
        unsafe {
            copy(src.as_ptr().cast(), dst.as_mut_ptr().cast(), 8);
            copy(src[1..].as_ptr().cast(), dst[1..].as_mut_ptr().cast(), 8);
        }
        assert_eq!(dst, src);
        // Half of one: the `b` field, 4 bytes at offset 4.
        let mut half = [0u32; 1];
        // SAFETY: 4 initialised bytes at offset 4 of `src[0]`; `half` holds 4 bytes.
        unsafe {
            copy(
                src.as_ptr().cast::<u8>().add(4),
                half.as_mut_ptr().cast(),
                4,
            )
        };
        assert_eq!(half[0], 0xdead_beef);
    }

    #[test]
    fn every_small_size_and_offset_moves_like_memmove() {
        for len in 0..=17 {
            for (from, to) in [(0, 3), (3, 0), (1, 2), (2, 1), (0, 20), (5, 5)] {
                let mut buf: Vec<u8> = (0..40).collect();
                let mut want = buf.clone();
                want.copy_within(from..from + len, to);
                // SAFETY: both ranges lie inside `buf`; overlap is allowed.
                unsafe { copy(buf.as_ptr().add(from), buf.as_mut_ptr().add(to), len) };
                assert_eq!(buf, want, "len {len} from {from} to {to}");
            }
        }
    }
}
