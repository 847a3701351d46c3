//! Allocatable and pointer components of derived-type coarrays, reached through a
//! coindexed object (`obj[img]%p(2:5)`, `allocated(obj[img]%p)`): registration kinds 7
//! and 8 and the `_by_ref` entry points, which walk gfortran's `caf_reference_t` chain.
//!
//! Each image allocates its own components (kind 8 is not collective), so their memory
//! cannot come from the collective symmetric heap allocator. At start-up every image
//! allocates one *component heap* collectively (a slice of the symmetric heap, sparse until
//! used) and then carves it up alone. A remote image finds a component the way the owner
//! does: it reads the owner's descriptor (or scalar pointer) inside the parent object,
//! which is symmetric, and translates the owner's address to the same symmetric offset
//! here, using the owner's heap start published in the first word of its component heap.
//! So the remote shape (bounds, strides) always comes from the owner, and a pointer
//! component works too when it points into symmetric memory.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use rshmem_core::{memory, rma, Ctx};

use crate::desc::{DescPtr, Dim, Header, Shape, Ty, MAX_DIMS};
use crate::image::{pe_of, state};
use crate::stat_errmsg::{unsupported, CafError, CafResult, STAT_ERROR};
use crate::token::Token;
use crate::vector::{self, indices, triplet, Remote, Section};
use crate::xfer::View;

/// Alignment of component blocks (a cache line, as the symmetric heap does).
const ALIGN: usize = 64;
/// Bytes before the first block: this image's heap start, for the translation.
const HEADER: usize = ALIGN;
/// The variable that sets the component heap's size (for messages).
const SIZE_VAR: &str = "RSHMEM_CAF_COMPONENT_HEAP";

/// This image's component heap: a symmetric block carved up by this image alone.
#[derive(Debug)]
struct Heap {
    /// Local (symmetric) address of the block.
    base: usize,
    /// Free ranges (offset, bytes), sorted, coalesced.
    free: Vec<(usize, usize)>,
    /// Heap start address of every image (0: not read yet).
    starts: Vec<usize>,
}

static HEAP: Mutex<Option<Heap>> = Mutex::new(None);

fn heap() -> std::sync::MutexGuard<'static, Option<Heap>> {
    HEAP.lock().unwrap_or_else(|e| e.into_inner())
}

/// The component heap's size: `RSHMEM_CAF_COMPONENT_HEAP` (a row of the environment
/// table), else an eighth of the symmetric heap.
fn heap_size() -> rshmem_core::Result<usize> {
    let rt = rshmem_core::runtime::try_runtime().ok_or(rshmem_core::Error::NotInitialized {
        routine: "_gfortran_caf_init",
    })?;
    if let Some(n) = rt.config().caf_component_heap {
        return Ok(n.max(HEADER + ALIGN));
    }
    Ok((memory::heap_size()? / 8).max(HEADER + ALIGN) / ALIGN * ALIGN)
}

/// Allocates the component heap (collective, from `image::init`, same size everywhere).
pub(crate) fn init(n: usize) -> rshmem_core::Result<()> {
    let size = heap_size()?;
    let base = memory::malloc("_gfortran_caf_init", size)? as usize;
    let start = heap_start();
    // SAFETY: the first word of the block we just allocated.
    unsafe { (base as *mut usize).write(start) };
    *heap() = Some(Heap {
        base,
        free: vec![(HEADER, size - HEADER)],
        starts: vec![0; n],
    });
    // Every image's start word must be written before another image reads it.
    rshmem_core::sync::barrier_all()?;
    Ok(())
}

fn heap_start() -> usize {
    rshmem_core::runtime::try_runtime()
        .map(|r| r.heap_range().0)
        .unwrap_or(0)
}

/// `_gfortran_caf_register` kind 8 (`CAF_REGTYPE_COARRAY_ALLOC_ALLOCATE_ONLY`): memory for
/// an allocatable component, from this image's component heap (not collective).
///
/// # Safety
/// `token` is writable (null or a kind 7 token); `desc` points at a descriptor header.
pub(crate) unsafe fn allocate(
    routine: &'static str,
    size: usize,
    token: *mut *mut c_void,
    desc: DescPtr,
) -> CafResult {
    // SAFETY: contract.
    let mut raw = unsafe { token.read() };
    if !crate::token::is_live(raw) {
        raw = crate::token::new_token(Token {
            base: 0,
            size: 0,
            block: 0,
            desc: 0,
            comp: true,
        });
        // SAFETY: contract.
        unsafe { token.write(raw) };
    }
    // SAFETY: a token of ours (contract).
    let t = unsafe { &mut *(raw as *mut Token) };
    if !t.comp {
        return Err(CafError::new(
            STAT_ERROR,
            format!("{routine}: allocating a component with the token of a coarray"),
        ));
    }
    if t.base != 0 {
        return Err(CafError::new(
            STAT_ERROR,
            format!("{routine}: the allocatable component is already allocated"),
        ));
    }
    let want = size.max(1).div_ceil(ALIGN) * ALIGN;
    let mut g = heap();
    let h = g
        .as_mut()
        .ok_or_else(|| CafError::new(STAT_ERROR, format!("{routine}: no component heap")))?;
    let Some(i) = h.free.iter().position(|&(_, len)| len >= want) else {
        let free: usize = h.free.iter().map(|f| f.1).sum();
        return Err(CafError::new(
            STAT_ERROR,
            format!(
                "{routine}: the component heap cannot hold {size} more bytes ({free} free \
                 in pieces; set {SIZE_VAR} or SHMEM_SYMMETRIC_SIZE higher)"
            ),
        ));
    };
    let (off, len) = h.free[i];
    if len == want {
        h.free.remove(i);
    } else {
        h.free[i] = (off + want, len - want);
    }
    let p = h.base + off;
    // SAFETY: the block lies in our component heap and is ours alone now.
    unsafe {
        std::ptr::write_bytes(p as *mut u8, 0, want);
        (*desc).base_addr = p as *mut u8;
    }
    t.base = p;
    t.size = want;
    Ok(())
}

/// Returns a component's memory to this image's heap (deregistration, not collective).
pub(crate) fn free(t: &mut Token) {
    if t.base == 0 {
        return;
    }
    let mut g = heap();
    if let Some(h) = g.as_mut() {
        let (off, len) = (t.base - h.base, t.size);
        let i = h.free.partition_point(|&(o, _)| o < off);
        h.free.insert(i, (off, len));
        // Coalesce with the next range, then with the previous one.
        if i + 1 < h.free.len() && h.free[i].0 + h.free[i].1 == h.free[i + 1].0 {
            h.free[i].1 += h.free[i + 1].1;
            h.free.remove(i + 1);
        }
        if i > 0 && h.free[i - 1].0 + h.free[i - 1].1 == h.free[i].0 {
            h.free[i - 1].1 += h.free[i].1;
            h.free.remove(i);
        }
    }
    t.base = 0;
    t.size = 0;
}

/// Reads `n` bytes at symmetric address `remote` on `pe` into `dst`.
///
/// # Safety
/// `dst` is writable for `n` bytes.
unsafe fn read(
    routine: &'static str,
    pe: usize,
    remote: usize,
    dst: *mut u8,
    n: usize,
) -> CafResult {
    // SAFETY: forwarded contract; the core checks that `remote` is symmetric.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            routine,
            dst,
            remote as *const u8,
            n,
            pe as i64,
        )?
    };
    Ok(())
}

/// The local symmetric address of the object image `pe` (0-based) knows as `addr`.
fn translate(routine: &'static str, pe: usize, addr: usize) -> CafResult<usize> {
    let s = state(routine);
    let (mine, len) = match rshmem_core::runtime::try_runtime() {
        Some(r) => {
            let (a, b) = r.heap_range();
            (a, b - a)
        }
        None => return Err(CafError::new(STAT_ERROR, format!("{routine}: no runtime"))),
    };
    let (known, word) = {
        let g = heap();
        let h = g
            .as_ref()
            .ok_or_else(|| CafError::new(STAT_ERROR, format!("{routine}: no component heap")))?;
        (h.starts[pe], h.base)
    };
    let theirs = if pe == s.me {
        mine
    } else if known != 0 {
        known
    } else {
        let mut v = 0usize;
        // SAFETY: one word into `v`.
        unsafe { read(routine, pe, word, (&mut v as *mut usize).cast(), 8)? };
        if let Some(h) = heap().as_mut() {
            h.starts[pe] = v;
        }
        v
    };
    let off = addr.wrapping_sub(theirs);
    if off >= len {
        unsupported(
            routine,
            &format!(
                "a pointer component of a coarray on image {} that points outside the \
                 image's symmetric memory (only allocated components and coarrays can be \
                 reached from another image)",
                pe + 1
            ),
        );
    }
    Ok(mine + off)
}

/// `caf_reference_t` (libcaf.h), 408 bytes.
#[repr(C)]
struct CafRef {
    next: *const CafRef,
    ty: c_int,
    item_size: usize,
    u: RefUnion,
}

#[repr(C)]
union RefUnion {
    c: CompRef,
    a: ArrRef,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CompRef {
    offset: isize,
    caf_token_offset: isize,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct ArrRef {
    mode: [u8; MAX_DIMS],
    static_array_type: c_int,
    dim: [ArrDim; MAX_DIMS],
}

#[repr(C)]
#[derive(Clone, Copy)]
union ArrDim {
    s: [isize; 3],
    v: VecDim,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct VecDim {
    vector: *const u8,
    nvec: usize,
    kind: c_int,
}

/// `caf_ref_type_t`.
const REF_COMPONENT: c_int = 0;
const REF_ARRAY: c_int = 1;
const REF_STATIC_ARRAY: c_int = 2;

/// `caf_array_ref_t`.
const ARR_NONE: u8 = 0;
const ARR_VECTOR: u8 = 1;
const ARR_FULL: u8 = 2;
const ARR_RANGE: u8 = 3;
const ARR_SINGLE: u8 = 4;
const ARR_OPEN_END: u8 = 5;
const ARR_OPEN_START: u8 = 6;

/// Where a reference chain ends on the remote image.
#[derive(Debug)]
struct Target {
    /// Local symmetric address of the first selected element.
    base: usize,
    /// The selected elements.
    sec: Section,
    /// Bytes per element.
    elem: usize,
    /// Bounds a reallocated destination takes, per dimension of the result.
    bounds: Vec<(isize, isize)>,
}

/// The header and dimensions of the allocatable coarray `t` (the same on every image).
///
/// # Safety
/// `t.desc` is 0 or the live descriptor of the coarray.
unsafe fn local_desc(t: &Token) -> Option<(Header, Vec<Dim>)> {
    if t.desc == 0 {
        return None;
    }
    let p = t.desc as *const Header;
    // SAFETY: contract; plain data.
    let h = unsafe { std::ptr::read(p) };
    let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
    // SAFETY: the dimensions follow the header (desc.rs).
    let dims = unsafe { std::slice::from_raw_parts(p.add(1).cast::<Dim>(), rank) }.to_vec();
    Some((h, dims))
}

/// Walks `refs` from the coarray of `t` on `pe`; `None` when an allocatable or pointer
/// component on the way is not allocated.
///
/// # Safety
/// `refs` is a chain as gfortran builds it.
unsafe fn resolve(
    routine: &'static str,
    t: &Token,
    pe: usize,
    refs: *const CafRef,
) -> CafResult<Option<Target>> {
    let mut cur = t.base;
    let mut sec = Section::default();
    let mut elem = 0usize;
    let mut bounds = Vec::new();
    // The remote descriptor of the allocatable array component just passed.
    let mut desc: Option<(Header, Vec<Dim>)> = None;
    let mut r = refs;
    let ranked = |sec: &Section| !sec.dims.is_empty();
    while !r.is_null() {
        // SAFETY: contract.
        let rf = unsafe { &*r };
        elem = rf.item_size;
        match rf.ty {
            REF_COMPONENT => {
                // SAFETY: a component ref.
                let c = unsafe { rf.u.c };
                let at = (cur as isize + c.offset) as usize;
                if c.caf_token_offset <= 0 {
                    cur = at;
                } else {
                    if ranked(&sec) {
                        unsupported(
                            routine,
                            "an allocatable or pointer component to the right of an array \
                             section of a coindexed object",
                        );
                    }
                    // SAFETY: `rf.next` is null or a ref (contract).
                    let array_next = !rf.next.is_null() && unsafe { (*rf.next).ty } == REF_ARRAY;
                    let addr = if array_next {
                        // The component is a descriptor: its header, then its dimensions.
                        let mut h = std::mem::MaybeUninit::<Header>::uninit();
                        // SAFETY: a header's worth of bytes into `h`.
                        unsafe {
                            read(
                                routine,
                                pe,
                                at,
                                h.as_mut_ptr().cast(),
                                std::mem::size_of::<Header>(),
                            )?
                        };
                        // SAFETY: filled by the read (plain data).
                        let h = unsafe { h.assume_init() };
                        let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
                        let mut dims = vec![
                            Dim {
                                stride: 0,
                                lbound: 0,
                                ubound: 0
                            };
                            rank
                        ];
                        if rank > 0 {
                            // SAFETY: `rank` dimensions into `dims`.
                            unsafe {
                                read(
                                    routine,
                                    pe,
                                    at + std::mem::size_of::<Header>(),
                                    dims.as_mut_ptr().cast(),
                                    rank * std::mem::size_of::<Dim>(),
                                )?
                            };
                        }
                        let a = h.base_addr as usize;
                        desc = Some((h, dims));
                        a
                    } else {
                        let mut a = 0usize;
                        // SAFETY: one pointer into `a`.
                        unsafe { read(routine, pe, at, (&mut a as *mut usize).cast(), 8)? };
                        a
                    };
                    if addr == 0 {
                        return Ok(None);
                    }
                    cur = translate(routine, pe, addr)?;
                }
            }
            REF_ARRAY => {
                let first = std::ptr::eq(r, refs);
                let Some((h, dims)) = desc.take().or_else(|| {
                    // SAFETY: an allocatable coarray's token keeps its variable's
                    // descriptor, live while the coarray is allocated.
                    first.then(|| unsafe { local_desc(t) }).flatten()
                }) else {
                    unsupported(
                        routine,
                        "a coindexed reference that starts with an array section of a \
                         coarray that is not allocatable",
                    );
                };
                // SAFETY: an array ref.
                let a = unsafe { rf.u.a };
                let span = if h.span != 0 {
                    h.span
                } else {
                    h.elem_len as isize
                };
                for (k, d) in dims.iter().enumerate() {
                    let mode = a.mode[k];
                    if mode == ARR_NONE {
                        break;
                    }
                    // SAFETY: the member `mode` selects.
                    let (s, v) = unsafe { (a.dim[k].s, a.dim[k].v) };
                    let idx = match mode {
                        // `(::2)` arrives as FULL with its stride.
                        ARR_FULL => triplet(routine, d.lbound, d.ubound, nonzero(s[2]))?,
                        ARR_RANGE => triplet(routine, s[0], s[1], s[2])?,
                        ARR_SINGLE => vec![s[0]],
                        ARR_OPEN_END => triplet(routine, s[0], d.ubound, nonzero(s[2]))?,
                        ARR_OPEN_START => triplet(routine, d.lbound, s[1], nonzero(s[2]))?,
                        // SAFETY: the vector member; `nvec` integers (contract).
                        ARR_VECTOR => unsafe { indices(routine, v.vector, v.nvec, v.kind)? },
                        m => unsupported(routine, &format!("array reference mode {m}")),
                    };
                    if let Some(&i) = idx.iter().find(|&&i| i < d.lbound || i > d.ubound) {
                        return Err(CafError::new(
                            STAT_ERROR,
                            format!(
                                "{routine}: index {i} is outside the bounds {}:{} of \
                                 dimension {} of the component on image {}",
                                d.lbound,
                                d.ubound,
                                k + 1,
                                pe + 1
                            ),
                        ));
                    }
                    let offs: Vec<isize> = idx
                        .iter()
                        .map(|&i| (i - d.lbound) * d.stride * span)
                        .collect();
                    if mode == ARR_SINGLE {
                        cur = (cur as isize + offs[0]) as usize;
                    } else {
                        if mode == ARR_FULL && nonzero(s[2]) == 1 {
                            bounds.push((d.lbound, d.ubound));
                        } else {
                            bounds.push((1, offs.len() as isize));
                        }
                        sec.dims.push(offs);
                    }
                }
            }
            REF_STATIC_ARRAY => {
                // SAFETY: an array ref.
                let a = unsafe { rf.u.a };
                let had = ranked(&sec);
                let mut new = Vec::new();
                for k in 0..MAX_DIMS {
                    let mode = a.mode[k];
                    if mode == ARR_NONE {
                        break;
                    }
                    // SAFETY: the member the mode selects (subscripts).
                    let s = unsafe { a.dim[k].s };
                    // Indices of arrays without a descriptor come 0-based and already
                    // scaled by the extents of the dimensions before them.
                    match mode {
                        ARR_SINGLE => cur = (cur as isize + s[0] * rf.item_size as isize) as usize,
                        ARR_RANGE | ARR_FULL => {
                            // FULL: from 0 to `end` (both 0-based and scaled, as RANGE's).
                            let (from, stride) = if mode == ARR_FULL {
                                (0, nonzero(s[2]))
                            } else {
                                (s[0], s[2])
                            };
                            let idx = triplet(routine, from, s[1], stride)?;
                            bounds.push((1, idx.len() as isize));
                            new.push(idx.iter().map(|&i| i * rf.item_size as isize).collect());
                        }
                        _ => unsupported(
                            routine,
                            &format!(
                                "array reference mode {mode} on an array component without \
                                 a descriptor"
                            ),
                        ),
                    }
                }
                if had && !new.is_empty() {
                    unsupported(routine, "two array sections in one coindexed reference");
                }
                sec.dims.extend(new);
            }
            other => unsupported(routine, &format!("coarray reference of type {other}")),
        }
        r = rf.next;
    }
    Ok(Some(Target {
        base: cur,
        sec,
        elem,
        bounds,
    }))
}

/// An open section's stride (unset means 1).
fn nonzero(stride: isize) -> isize {
    if stride == 0 {
        1
    } else {
        stride
    }
}

fn not_allocated(routine: &str, image: i32) -> CafError {
    CafError::new(
        STAT_ERROR,
        format!(
            "{routine}: the allocatable or pointer component is not allocated on image {image}"
        ),
    )
}

/// Reallocates the allocatable `d` (a realloc-on-assignment destination) to `bounds`
/// unless it already has that shape.
///
/// # Safety
/// `d` is an allocatable's descriptor whose memory came from `malloc` (libgfortran's).
unsafe fn realloc_dest(d: DescPtr, bounds: &[(isize, isize)]) -> CafResult {
    // SAFETY: contract.
    let h = unsafe { &mut *d };
    let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
    if rank != bounds.len() && !(rank > 0 && bounds.is_empty()) {
        return Ok(());
    }
    let want: Vec<usize> = bounds
        .iter()
        .map(|&(l, u)| (u - l + 1).max(0) as usize)
        .collect();
    if !h.base_addr.is_null() {
        // SAFETY: an allocated array's descriptor is complete (contract).
        let have = unsafe { Shape::of(d) };
        if rank == 0 || (0..rank).all(|k| have.extent[k] == want.get(k).copied().unwrap_or(0)) {
            return Ok(());
        }
    }
    if rank == 0 {
        // SAFETY: a scalar allocatable's memory is malloc'ed by libgfortran.
        unsafe { h.base_addr = libc::malloc(h.elem_len.max(1)).cast() };
        return Ok(());
    }
    if bounds.is_empty() {
        // A scalar source into an unallocated array: no shape to take.
        if h.base_addr.is_null() {
            return Err(CafError::new(
                STAT_ERROR,
                "assignment of a scalar to an unallocated allocatable array",
            ));
        }
        return Ok(());
    }
    let n: usize = want.iter().product();
    // SAFETY: the old memory came from malloc (contract); the new block is ours.
    unsafe {
        if !h.base_addr.is_null() {
            libc::free(h.base_addr.cast());
        }
        h.base_addr = libc::malloc((n * h.elem_len).max(1)).cast();
    }
    if h.base_addr.is_null() {
        return Err(CafError::new(
            STAT_ERROR,
            "out of memory reallocating the destination",
        ));
    }
    let dims = (d as *mut u8).wrapping_add(std::mem::size_of::<Header>()) as *mut Dim;
    let (mut stride, mut offset) = (1isize, 0isize);
    for (k, &(l, u)) in bounds.iter().enumerate() {
        // SAFETY: the descriptor has `rank` dimensions (contract).
        unsafe {
            dims.add(k).write_unaligned(Dim {
                stride,
                lbound: l,
                ubound: u,
            })
        };
        offset -= l * stride;
        stride *= (u - l + 1).max(0);
    }
    h.offset = offset;
    h.span = h.elem_len as isize;
    Ok(())
}

/// `_gfortran_caf_get_by_ref`.
///
/// # Safety
/// As gfortran calls it.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn get_by_ref(
    routine: &'static str,
    token: *mut c_void,
    image_index: c_int,
    dst: DescPtr,
    refs: *const c_void,
    dst_kind: c_int,
    src_kind: c_int,
    dst_reallocatable: bool,
    src_type: c_int,
) -> CafResult {
    let pe = pe_of(state(routine), image_index)?;
    // SAFETY: forwarded contract.
    unsafe {
        let t = crate::token::token(routine, token);
        let tg = resolve(routine, t, pe, refs.cast())?
            .ok_or_else(|| not_allocated(routine, image_index))?;
        if dst_reallocatable {
            realloc_dest(dst, &tg.bounds)?;
        }
        let sty = Ty {
            bt: src_type as i8,
            kind: src_kind,
            len: tg.elem,
        };
        let view = View {
            base: (*dst).base_addr,
            shape: Shape::of(dst),
            ty: Ty::of(dst, dst_kind),
        };
        vector::get_list(routine, pe, tg.base, &tg.sec, sty, &view)
    }
}

/// `_gfortran_caf_send_by_ref`: a coindexed object is never reallocated, so the remote
/// component must be allocated with the source's shape.
///
/// # Safety
/// As gfortran calls it.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send_by_ref(
    routine: &'static str,
    token: *mut c_void,
    image_index: c_int,
    src: DescPtr,
    refs: *const c_void,
    dst_kind: c_int,
    src_kind: c_int,
    dst_type: c_int,
) -> CafResult {
    let pe = pe_of(state(routine), image_index)?;
    // SAFETY: forwarded contract.
    unsafe {
        let t = crate::token::token(routine, token);
        let tg = resolve(routine, t, pe, refs.cast())?
            .ok_or_else(|| not_allocated(routine, image_index))?;
        let dty = Ty {
            bt: dst_type as i8,
            kind: dst_kind,
            len: tg.elem,
        };
        let view = View {
            base: (*src).base_addr,
            shape: Shape::of(src),
            ty: Ty::of(src, src_kind),
        };
        vector::put_list(routine, pe, tg.base, &tg.sec, dty, &view)
    }
}

/// `_gfortran_caf_sendget_by_ref`.
///
/// # Safety
/// As gfortran calls it.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendget_by_ref(
    routine: &'static str,
    (dst_token, dst_image, dst_refs, dst_kind, dst_type): (
        *mut c_void,
        c_int,
        *const c_void,
        c_int,
        c_int,
    ),
    (src_token, src_image, src_refs, src_kind, src_type): (
        *mut c_void,
        c_int,
        *const c_void,
        c_int,
        c_int,
    ),
) -> CafResult {
    let s = state(routine);
    let (dpe, spe) = (pe_of(s, dst_image)?, pe_of(s, src_image)?);
    // SAFETY: forwarded contract.
    unsafe {
        let dt = crate::token::token(routine, dst_token);
        let st = crate::token::token(routine, src_token);
        let src = resolve(routine, st, spe, src_refs.cast())?
            .ok_or_else(|| not_allocated(routine, src_image))?;
        let dst = resolve(routine, dt, dpe, dst_refs.cast())?
            .ok_or_else(|| not_allocated(routine, dst_image))?;
        let sty = Ty {
            bt: src_type as i8,
            kind: src_kind,
            len: src.elem,
        };
        let dty = Ty {
            bt: dst_type as i8,
            kind: dst_kind,
            len: dst.elem,
        };
        vector::copy_remote(
            routine,
            dpe,
            dst.base,
            &Remote::List(dst.sec),
            dty,
            spe,
            src.base,
            &Remote::List(src.sec),
            sty,
        )
    }
}

/// `_gfortran_caf_is_present`: whether the allocatable or pointer component the chain
/// ends at is allocated on the image.
///
/// # Safety
/// As gfortran calls it.
pub(crate) unsafe fn is_present(
    routine: &'static str,
    token: *mut c_void,
    image_index: c_int,
    refs: *const c_void,
) -> CafResult<bool> {
    let pe = pe_of(state(routine), image_index)?;
    // SAFETY: forwarded contract.
    unsafe {
        let t = crate::token::token(routine, token);
        Ok(resolve(routine, t, pe, refs.cast())?.is_some())
    }
}
