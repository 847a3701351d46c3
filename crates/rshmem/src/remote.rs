//! [`Remote`]: the element types that symmetric memory may hold.
#![allow(unsafe_code)]

/// A type whose values may live in symmetric memory and travel between PEs as bytes.
///
/// Implemented for the integer and floating-point primitives and for arrays of `Remote`
/// types. Implement it for your own plain-old-data types:
///
/// ```
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Particle {
///     pos: [f64; 3],
///     id: u64,
/// }
/// // SAFETY: `repr(C)`, every field is `Remote`, so every bit pattern is a valid value.
/// unsafe impl rshmem::Remote for Particle {}
///
/// let shmem = rshmem::Shmem::init()?;
/// let v = shmem.alloc(4, Particle { pos: [0.0; 3], id: 0 })?;
/// shmem.p(&v, 2, Particle { pos: [1.0, 2.0, 3.0], id: 7 }, shmem.my_pe())?;
/// assert_eq!(v.load(2).id, 7);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// # Safety
///
/// Implement it only for `Copy` types (no drop glue, no ownership) for which **every bit
/// pattern of `size_of::<Self>()` bytes is a valid value**: remote PEs write raw bytes
/// into symmetric memory and [`Shmem::alloc_zeroed`](crate::Shmem::alloc_zeroed) hands
/// out all-zero values. So no `bool`, `char`, enums, references, `NonZero*` or
/// `Option<&T>` inside. Use `#[repr(C)]` (or `transparent`) so that the layout is the
/// same in every PE's executable. Padding is allowed: rshmem moves values as bytes that may
/// be uninitialised (through `MaybeUninit`), never reading padding as an integer. Pointers
/// are valid values but mean nothing on another PE.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot live in symmetric memory (it does not implement `rshmem::Remote`)",
    note = "`Remote` types are numbers, arrays of them, and `#[repr(C)]` plain-old-data types that implement it; not bool, char, references or enums"
)]
pub unsafe trait Remote: Copy + 'static {}

macro_rules! remote {
    ($($t:ty),* $(,)?) => {$(
        // SAFETY: a primitive number: every bit pattern is a valid value.
        unsafe impl Remote for $t {}
    )*};
}

remote!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

// SAFETY: an array of `Remote` values has no padding between elements and every bit
// pattern of each element is valid.
unsafe impl<T: Remote, const N: usize> Remote for [T; N] {}
