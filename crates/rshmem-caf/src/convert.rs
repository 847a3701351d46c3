//! Type and kind conversion of one element, as intrinsic assignment does it
//! (`i8 = i2[2]`, `r8(:)[2] = i4(:)`, character padding and truncation).

use crate::desc::{Ty, BT_CHARACTER, BT_COMPLEX, BT_DERIVED, BT_INTEGER, BT_LOGICAL, BT_REAL};

/// A numeric value on its way between kinds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Real(f64),
    Cplx(f64, f64),
}

/// Why a conversion cannot be done (names the feature for the "not supported" message).
pub(crate) type Unsupported = String;

/// Whether an element of `src` can be copied byte for byte into one of `dst`.
pub(crate) fn same_repr(dst: Ty, src: Ty) -> bool {
    dst.len == src.len && (dst.bt == src.bt && dst.kind == src.kind)
}

/// Checks once per transfer that every element can be converted from `src` to `dst`.
pub(crate) fn check(dst: Ty, src: Ty) -> Result<(), Unsupported> {
    if same_repr(dst, src) {
        return Ok(());
    }
    let numeric = |t: Ty| matches!(t.bt, BT_INTEGER | BT_LOGICAL | BT_REAL | BT_COMPLEX);
    match (src.bt, dst.bt) {
        (BT_CHARACTER, BT_CHARACTER) if matches!((src.kind, dst.kind), (1 | 4, 1 | 4)) => Ok(()),
        (BT_DERIVED, BT_DERIVED) => Err(format!(
            "assignment between derived types of different sizes ({} and {} bytes)",
            src.len, dst.len
        )),
        _ if numeric(src) && numeric(dst) => {
            for t in [src, dst] {
                let ok = match t.bt {
                    BT_INTEGER | BT_LOGICAL => matches!(t.len, 1 | 2 | 4 | 8 | 16),
                    BT_REAL => matches!(t.len, 4 | 8),
                    _ => matches!(t.len, 8 | 16),
                };
                if !ok {
                    return Err(format!(
                        "conversion involving {}(kind={})",
                        type_name(t.bt),
                        t.kind
                    ));
                }
            }
            Ok(())
        }
        _ => Err(format!(
            "assignment from {}(kind={}) to {}(kind={})",
            type_name(src.bt),
            src.kind,
            type_name(dst.bt),
            dst.kind
        )),
    }
}

fn type_name(bt: i8) -> &'static str {
    match bt {
        BT_INTEGER => "integer",
        BT_LOGICAL => "logical",
        BT_REAL => "real",
        BT_COMPLEX => "complex",
        BT_DERIVED => "type",
        BT_CHARACTER => "character",
        _ => "an unknown type",
    }
}

/// Converts one element; [`check`] has accepted the pair.
///
/// # Safety
/// `dst` is writable for `dt.len` bytes, `src` readable for `st.len` bytes; they do not
/// overlap.
pub(crate) unsafe fn convert(dst: *mut u8, dt: Ty, src: *const u8, st: Ty) {
    // SAFETY: the pointers cover the element lengths (contract); reads and writes are
    // unaligned because packed temporaries need not be aligned.
    unsafe {
        if same_repr(dt, st) {
            std::ptr::copy_nonoverlapping(src, dst, dt.len);
            return;
        }
        if dt.bt == BT_CHARACTER {
            convert_chars(dst, dt, src, st);
            return;
        }
        let v = match st.bt {
            BT_INTEGER | BT_LOGICAL => Num::Int(match st.len {
                1 => src.cast::<i8>().read_unaligned() as i128,
                2 => src.cast::<i16>().read_unaligned() as i128,
                4 => src.cast::<i32>().read_unaligned() as i128,
                8 => src.cast::<i64>().read_unaligned() as i128,
                _ => src.cast::<i128>().read_unaligned(),
            }),
            BT_REAL => Num::Real(match st.len {
                4 => src.cast::<f32>().read_unaligned() as f64,
                _ => src.cast::<f64>().read_unaligned(),
            }),
            _ => match st.len {
                8 => Num::Cplx(
                    src.cast::<f32>().read_unaligned() as f64,
                    src.add(4).cast::<f32>().read_unaligned() as f64,
                ),
                _ => Num::Cplx(
                    src.cast::<f64>().read_unaligned(),
                    src.add(8).cast::<f64>().read_unaligned(),
                ),
            },
        };
        match dt.bt {
            BT_INTEGER | BT_LOGICAL => {
                let mut i = match v {
                    Num::Int(i) => i,
                    // Fortran's INT: truncation toward zero.
                    Num::Real(r) | Num::Cplx(r, _) => r as i128,
                };
                if dt.bt == BT_LOGICAL {
                    i = (i != 0) as i128;
                }
                match dt.len {
                    1 => dst.cast::<i8>().write_unaligned(i as i8),
                    2 => dst.cast::<i16>().write_unaligned(i as i16),
                    4 => dst.cast::<i32>().write_unaligned(i as i32),
                    8 => dst.cast::<i64>().write_unaligned(i as i64),
                    _ => dst.cast::<i128>().write_unaligned(i),
                }
            }
            BT_REAL => {
                let r = match v {
                    Num::Int(i) => i as f64,
                    Num::Real(r) | Num::Cplx(r, _) => r,
                };
                match dt.len {
                    4 => dst.cast::<f32>().write_unaligned(r as f32),
                    _ => dst.cast::<f64>().write_unaligned(r),
                }
            }
            _ => {
                let (re, im) = match v {
                    Num::Int(i) => (i as f64, 0.0),
                    Num::Real(r) => (r, 0.0),
                    Num::Cplx(re, im) => (re, im),
                };
                match dt.len {
                    8 => {
                        dst.cast::<f32>().write_unaligned(re as f32);
                        dst.add(4).cast::<f32>().write_unaligned(im as f32);
                    }
                    _ => {
                        dst.cast::<f64>().write_unaligned(re);
                        dst.add(8).cast::<f64>().write_unaligned(im);
                    }
                }
            }
        }
    }
}

/// Character assignment: copy, blank-pad or truncate, converting kind 1 <-> 4.
///
/// # Safety
/// As [`convert`].
unsafe fn convert_chars(dst: *mut u8, dt: Ty, src: *const u8, st: Ty) {
    let (dk, sk) = (dt.kind.max(1) as usize, st.kind.max(1) as usize);
    let (dn, sn) = (dt.len / dk, st.len / sk);
    for i in 0..dn {
        // SAFETY: `i < dn` and `i < sn` keep both sides inside their elements.
        unsafe {
            let c: u32 = if i < sn {
                if sk == 4 {
                    src.add(4 * i).cast::<u32>().read_unaligned()
                } else {
                    *src.add(i) as u32
                }
            } else {
                b' ' as u32
            };
            if dk == 4 {
                dst.add(4 * i).cast::<u32>().write_unaligned(c);
            } else {
                // Not representable in kind 1: '?', as libgfortran does.
                *dst.add(i) = if c > 255 { b'?' } else { c as u8 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(bt: i8, kind: i32, len: usize) -> Ty {
        Ty { bt, kind, len }
    }

    #[test]
    fn integers_reals_and_complex_convert() {
        let mut out = [0u8; 16];
        let src: i16 = -7;
        // SAFETY: buffers of the element sizes.
        unsafe {
            convert(
                out.as_mut_ptr(),
                ty(BT_INTEGER, 8, 8),
                (&src as *const i16).cast(),
                ty(BT_INTEGER, 2, 2),
            );
        }
        assert_eq!(i64::from_ne_bytes(out[..8].try_into().unwrap()), -7);
        let r: f64 = 2.75;
        // SAFETY: as above.
        unsafe {
            convert(
                out.as_mut_ptr(),
                ty(BT_INTEGER, 4, 4),
                (&r as *const f64).cast(),
                ty(BT_REAL, 8, 8),
            );
        }
        assert_eq!(i32::from_ne_bytes(out[..4].try_into().unwrap()), 2);
        // SAFETY: as above.
        unsafe {
            convert(
                out.as_mut_ptr(),
                ty(BT_COMPLEX, 4, 8),
                (&r as *const f64).cast(),
                ty(BT_REAL, 8, 8),
            );
        }
        assert_eq!(f32::from_ne_bytes(out[..4].try_into().unwrap()), 2.75);
        assert_eq!(f32::from_ne_bytes(out[4..8].try_into().unwrap()), 0.0);
    }

    #[test]
    fn characters_pad_and_truncate() {
        let mut out = [0u8; 6];
        // SAFETY: buffers of the element sizes.
        unsafe {
            convert(
                out.as_mut_ptr(),
                ty(BT_CHARACTER, 1, 6),
                b"abc".as_ptr(),
                ty(BT_CHARACTER, 1, 3),
            );
        }
        assert_eq!(&out, b"abc   ");
        // SAFETY: as above.
        unsafe {
            convert(
                out.as_mut_ptr(),
                ty(BT_CHARACTER, 1, 2),
                b"xyz".as_ptr(),
                ty(BT_CHARACTER, 1, 3),
            );
        }
        assert_eq!(&out[..2], b"xy");
        assert!(check(ty(BT_REAL, 10, 16), ty(BT_REAL, 8, 8)).is_err());
        assert!(check(ty(BT_REAL, 4, 4), ty(BT_INTEGER, 8, 8)).is_ok());
    }
}
