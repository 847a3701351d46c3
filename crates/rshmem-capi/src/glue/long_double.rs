//! C `long double`, which Rust has no type for: moved as bytes, reduced in C.

use core::ffi::c_int;

use rshmem_core::coll::{Elem, ReduceOp};

/// C `long double` on x86-64 (80-bit x87 value in 16 bytes): moved as bytes, combined
/// by reductions in C (`csrc/longdouble.c`). All-zero bytes are 0.0, hence `Default`.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
pub struct LongDouble([u8; 16]);

unsafe extern "C" {
    /// `acc[i] = acc[i] op src[i]` for `i < n`; op 0 min, 1 max, 2 sum, 3 prod.
    fn rshmem_longdouble_fold(op: c_int, acc: *mut LongDouble, src: *const LongDouble, n: usize);
}

impl Elem for LongDouble {
    fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
        let code = match op {
            ReduceOp::Min => 0,
            ReduceOp::Max => 1,
            ReduceOp::Sum => 2,
            ReduceOp::Prod => 3,
            _ => return Err("bitwise operators do not apply to long double"),
        };
        // SAFETY: both slices are valid for the shorter length, which is what is passed;
        // the C function touches nothing else.
        unsafe {
            rshmem_longdouble_fold(
                code,
                acc.as_mut_ptr(),
                src.as_ptr(),
                acc.len().min(src.len()),
            )
        };
        Ok(())
    }
}
