//! gfortran's array descriptor (GCC 8 and later) and the shapes read from it.
//!
//! A descriptor is a 40-byte header followed by one 24-byte triplet per dimension; the
//! compiler allocates only `rank` triplets (a scalar's descriptor is the header alone), so
//! dimensions are read through raw pointers, never through a fixed-size struct.

/// Most dimensions of a Fortran array (`GFC_MAX_DIMENSIONS`).
pub(crate) const MAX_DIMS: usize = 15;

/// `BT_INTEGER`.
pub(crate) const BT_INTEGER: i8 = 1;
/// `BT_LOGICAL`.
pub(crate) const BT_LOGICAL: i8 = 2;
/// `BT_REAL`.
pub(crate) const BT_REAL: i8 = 3;
/// `BT_COMPLEX`.
pub(crate) const BT_COMPLEX: i8 = 4;
/// `BT_DERIVED`.
pub(crate) const BT_DERIVED: i8 = 5;
/// `BT_CHARACTER`.
pub(crate) const BT_CHARACTER: i8 = 6;

/// The descriptor header (`gfc_descriptor_t` without its dimensions).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Header {
    /// Address of the first element (of the section).
    pub base_addr: *mut u8,
    /// Offset that makes `base_addr + offset` the address of index 0 (unused here).
    pub offset: isize,
    /// Bytes of one element (characters: length times kind).
    pub elem_len: usize,
    /// Descriptor version (0).
    pub version: i32,
    /// Rank (0 for a scalar).
    pub rank: i8,
    /// `BT_*` type code.
    pub ty: i8,
    /// Attribute bits.
    pub attribute: i16,
    /// Bytes between consecutive elements of stride 1.
    pub span: isize,
}

/// One dimension's triplet.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dim {
    /// Stride in elements (times `span` bytes).
    pub stride: isize,
    /// Lower bound.
    pub lbound: isize,
    /// Upper bound.
    pub ubound: isize,
}

/// A raw descriptor pointer, as the compiler passes it.
pub(crate) type DescPtr = *mut Header;

/// Element count and byte stride of each dimension of an array section, first dimension
/// first (Fortran order).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// Number of dimensions in use.
    pub rank: usize,
    /// Extent of each dimension.
    pub extent: [usize; MAX_DIMS],
    /// Distance in bytes between consecutive elements of each dimension.
    pub stride: [isize; MAX_DIMS],
}

impl Shape {
    /// A single element.
    pub(crate) const SCALAR: Shape = Shape {
        rank: 0,
        extent: [1; MAX_DIMS],
        stride: [0; MAX_DIMS],
    };

    /// `n` elements of `elem` bytes one after another.
    pub(crate) fn dense(n: usize, elem: usize) -> Shape {
        let mut s = Shape::SCALAR;
        s.rank = 1;
        s.extent[0] = n;
        s.stride[0] = elem as isize;
        s
    }

    /// The shape a descriptor describes.
    ///
    /// # Safety
    /// `d` points at a descriptor with `rank` dimensions.
    pub(crate) unsafe fn of(d: *const Header) -> Shape {
        // SAFETY: the header is always present (contract).
        let h = unsafe { &*d };
        let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
        let span = if h.span != 0 {
            h.span
        } else {
            h.elem_len as isize
        };
        let mut s = Shape::SCALAR;
        s.rank = rank;
        let dims = (d as *const u8).wrapping_add(std::mem::size_of::<Header>()) as *const Dim;
        for k in 0..rank {
            // SAFETY: the compiler allocated `rank` triplets after the header (contract).
            let dim = unsafe { dims.add(k).read_unaligned() };
            s.extent[k] = (dim.ubound - dim.lbound + 1).max(0) as usize;
            s.stride[k] = dim.stride * span;
        }
        s
    }

    /// Number of elements.
    pub(crate) fn count(&self) -> usize {
        self.extent[..self.rank].iter().product()
    }

    /// Whether the elements lie one after another, `elem` bytes apart, in element order.
    pub(crate) fn is_dense(&self, elem: usize) -> bool {
        let mut want = elem as isize;
        for k in 0..self.rank {
            if self.extent[k] > 1 && self.stride[k] != want {
                return false;
            }
            want *= self.extent[k] as isize;
        }
        true
    }

    /// The same elements in the same order, with dimensions of extent 1 dropped and
    /// neighbours merged where the next one continues the previous one's run.
    pub(crate) fn normalized(&self) -> Shape {
        let mut s = Shape::SCALAR;
        for k in 0..self.rank {
            let (e, st) = (self.extent[k], self.stride[k]);
            if e == 1 {
                continue;
            }
            if e == 0 {
                s.rank = 1;
                s.extent[0] = 0;
                return s;
            }
            if s.rank > 0 {
                let j = s.rank - 1;
                if st == s.stride[j] * s.extent[j] as isize {
                    s.extent[j] *= e;
                    continue;
                }
            }
            s.extent[s.rank] = e;
            s.stride[s.rank] = st;
            s.rank += 1;
        }
        s
    }

    /// Calls `f(i, off)` for every element in element order: its index and its byte
    /// offset from the first element.
    #[allow(clippy::needless_range_loop)] // parallel arrays indexed by dimension
    pub(crate) fn for_each(&self, mut f: impl FnMut(usize, isize)) {
        let n = self.count();
        let mut idx = [0usize; MAX_DIMS];
        let mut off = 0isize;
        for i in 0..n {
            f(i, off);
            for k in 0..self.rank {
                idx[k] += 1;
                off += self.stride[k];
                if idx[k] < self.extent[k] {
                    break;
                }
                off -= self.stride[k] * self.extent[k] as isize;
                idx[k] = 0;
            }
        }
    }
}

/// The type of an element as a transfer sees it: `BT_*` code, Fortran kind, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ty {
    /// `BT_*` code.
    pub bt: i8,
    /// Fortran kind (characters: bytes per character).
    pub kind: i32,
    /// Bytes of one element.
    pub len: usize,
}

impl Ty {
    /// The element type of descriptor `d` with Fortran kind `kind`.
    ///
    /// # Safety
    /// `d` points at a descriptor header.
    pub(crate) unsafe fn of(d: *const Header, kind: i32) -> Ty {
        // SAFETY: contract.
        let h = unsafe { &*d };
        Ty {
            bt: h.ty,
            kind,
            len: h.elem_len,
        }
    }
}

/// A copy of a descriptor whose `span` is trusted only when its `offset` agrees with its
/// bounds. gfortran 12 passes co_broadcast of a derived type's allocatable components as
/// descriptors it builds without setting `span` or `offset` (stack garbage: a crash or
/// silent corruption if believed); every descriptor it sets up properly has
/// `offset = -sum(lbound * stride)` and a span of at least `elem_len`. An untrusted span
/// becomes `elem_len`: those component descriptors describe contiguous elements.
#[repr(C)]
pub(crate) struct Sane {
    h: Header,
    dims: [Dim; MAX_DIMS],
}

impl Sane {
    /// The sane copy of `d`.
    ///
    /// # Safety
    /// `d` points at a descriptor with `rank` dimensions.
    pub(crate) unsafe fn of(d: *const Header) -> Sane {
        // SAFETY: the header is always present (contract).
        let h = unsafe { d.read_unaligned() };
        let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
        let mut dims = [Dim {
            stride: 0,
            lbound: 0,
            ubound: 0,
        }; MAX_DIMS];
        let src = (d as *const u8).wrapping_add(std::mem::size_of::<Header>()) as *const Dim;
        for (k, dim) in dims.iter_mut().enumerate().take(rank) {
            // SAFETY: the compiler allocated `rank` triplets after the header (contract).
            *dim = unsafe { src.add(k).read_unaligned() };
        }
        let mut sane = Sane { h, dims };
        if rank > 0 && sane.h.span != 0 && !sane.span_vouched_for(rank) {
            sane.h.span = sane.h.elem_len as isize;
        }
        sane
    }

    fn span_vouched_for(&self, rank: usize) -> bool {
        let offset = self.dims[..rank].iter().try_fold(0isize, |acc, d| {
            acc.checked_sub(d.lbound.checked_mul(d.stride)?)
        });
        offset == Some(self.h.offset) && self.h.span >= self.h.elem_len as isize
    }

    /// The copy, as a descriptor pointer for the routines that read one.
    pub(crate) fn ptr(&mut self) -> DescPtr {
        &mut self.h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank-1 descriptor of 4-byte elements `1..=n` with `span` and `offset` given.
    fn rank1(n: isize, span: isize, offset: isize) -> (Header, Dim) {
        let h = Header {
            base_addr: std::ptr::null_mut(),
            offset,
            elem_len: 4,
            version: 0,
            rank: 1,
            ty: BT_INTEGER,
            attribute: 0,
            span,
        };
        (
            h,
            Dim {
                stride: 1,
                lbound: 1,
                ubound: n,
            },
        )
    }

    #[test]
    fn span_trusted_only_with_a_consistent_offset() {
        #[repr(C)]
        struct D(Header, Dim);
        for (span, offset, want) in [
            (8, -1, 8),           // a pointer to a component: span kept
            (4, -1, 4),           // plain
            (0x7ffd_1234, 77, 4), // garbage in both: elem_len
            (3, -1, 4),           // shorter than an element: elem_len
        ] {
            let (h, d) = rank1(5, span, offset);
            let desc = D(h, d);
            // SAFETY: a rank-1 descriptor with its triplet (a pointer to the whole).
            let mut sane = unsafe { Sane::of((&desc as *const D).cast()) };
            // SAFETY: the copy is a valid rank-1 descriptor.
            let got = unsafe { (*sane.ptr()).span };
            assert_eq!(got, want, "span {span} offset {offset}");
        }
    }

    fn shape(dims: &[(usize, isize)]) -> Shape {
        let mut s = Shape::SCALAR;
        s.rank = dims.len();
        for (k, &(e, st)) in dims.iter().enumerate() {
            s.extent[k] = e;
            s.stride[k] = st;
        }
        s
    }

    #[test]
    fn normalizing_merges_runs_and_drops_unit_dims() {
        // a(1:10, 1:3) of 4-byte elements, whole: one run of 30.
        let n = shape(&[(10, 4), (1, 400), (3, 40)]).normalized();
        assert_eq!((n.rank, n.extent[0], n.stride[0]), (1, 30, 4));
        // a(1:10:2, :) of a(10, 3): every other element throughout, one strided run.
        let n = shape(&[(5, 8), (3, 40)]).normalized();
        assert_eq!((n.rank, n.extent[0], n.stride[0]), (1, 15, 8));
        // a(1:10:2, :) of a(12, 3): not mergeable.
        let n = shape(&[(5, 8), (3, 48)]).normalized();
        assert_eq!(n.rank, 2);
        assert!(shape(&[(5, 4), (3, 20)]).is_dense(4));
        assert!(!shape(&[(5, 4), (3, 24)]).is_dense(4));
    }

    #[test]
    fn for_each_walks_in_element_order() {
        let s = shape(&[(2, 8), (3, -100)]);
        let mut offs = Vec::new();
        s.for_each(|i, o| offs.push((i, o)));
        assert_eq!(
            offs,
            vec![(0, 0), (1, 8), (2, -100), (3, -92), (4, -200), (5, -192)]
        );
    }
}
