//! The symmetric heap allocator. It deals in offsets, never addresses, and is
//! deterministic: the same sequence of calls gives the same offsets on every PE, which is
//! what makes the heap symmetric.

use std::collections::BTreeMap;

/// Smallest alignment handed out: a cache line, so that separately allocated objects
/// never share a line (no false sharing between, say, two flags).
pub const MIN_ALIGN: usize = 64;

/// Why an allocation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    /// Bytes asked for (rounded up to [`MIN_ALIGN`]).
    pub requested: usize,
    /// Bytes free in all.
    pub free: usize,
    /// The largest free range.
    pub largest: usize,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    /// First byte of the block (before alignment padding).
    start: usize,
    /// End of the block (exclusive).
    end: usize,
}

/// A first-fit allocator with coalescing over `[0, size)`. Public for faces that carve
/// symmetric sub-heaps of their own out of a block (the coarray runtime's teams).
#[derive(Debug)]
pub struct Heap {
    size: usize,
    /// Free ranges: start -> end.
    free: BTreeMap<usize, usize>,
    /// Live allocations: offset handed out -> its block.
    used: BTreeMap<usize, Block>,
}

fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

impl Heap {
    /// An empty heap over offsets `[0, size)`.
    pub fn new(size: usize) -> Heap {
        let mut free = BTreeMap::new();
        if size > 0 {
            free.insert(0, size);
        }
        Heap {
            size,
            free,
            used: BTreeMap::new(),
        }
    }

    /// Bytes not allocated.
    pub fn free_bytes(&self) -> usize {
        self.free.iter().map(|(s, e)| e - s).sum()
    }

    fn largest(&self) -> usize {
        self.free.iter().map(|(s, e)| e - s).max().unwrap_or(0)
    }

    fn exhausted(&self, requested: usize) -> Exhausted {
        Exhausted {
            requested,
            free: self.free_bytes(),
            largest: self.largest(),
        }
    }

    /// Allocates `size` bytes aligned to `align` (a power of two). Returns the offset.
    pub fn alloc(&mut self, size: usize, align: usize) -> Result<usize, Exhausted> {
        debug_assert!(align.is_power_of_two());
        let align = align.max(MIN_ALIGN);
        let size = align_up(size.max(1), MIN_ALIGN).ok_or(self.exhausted(size))?;
        let found = self.free.iter().find_map(|(&s, &e)| {
            let off = align_up(s, align)?;
            let end = off.checked_add(size)?;
            (end <= e).then_some((s, e, off, end))
        });
        let Some((s, e, off, end)) = found else {
            return Err(self.exhausted(size));
        };
        self.free.remove(&s);
        // Padding before the aligned offset stays free when it is worth keeping.
        let start = if off - s >= MIN_ALIGN {
            self.free.insert(s, off);
            off
        } else {
            s
        };
        if e > end {
            self.free.insert(end, e);
        }
        self.used.insert(off, Block { start, end });
        Ok(off)
    }

    /// Size usable at `off` (from the offset to the block's end), if `off` is live.
    pub(crate) fn usable_size(&self, off: usize) -> Option<usize> {
        self.used.get(&off).map(|b| b.end - off)
    }

    /// Frees the allocation at `off`; `None` if it is not live.
    pub fn free(&mut self, off: usize) -> Option<()> {
        let b = self.used.remove(&off)?;
        self.insert_free(b.start, b.end);
        Some(())
    }

    fn insert_free(&mut self, mut start: usize, mut end: usize) {
        // Coalesce with the free range just before and just after.
        if let Some((&ps, &pe)) = self.free.range(..start).next_back() {
            if pe == start {
                self.free.remove(&ps);
                start = ps;
            }
        }
        if let Some(&ne) = self.free.get(&end) {
            self.free.remove(&end);
            end = ne;
        }
        self.free.insert(start, end);
    }

    /// Tries to resize the allocation at `off` in place to `size` bytes.
    pub(crate) fn resize_in_place(&mut self, off: usize, size: usize) -> bool {
        let Some(&b) = self.used.get(&off) else {
            return false;
        };
        let Some(size) = align_up(size.max(1), MIN_ALIGN) else {
            return false;
        };
        let Some(want_end) = off.checked_add(size) else {
            return false;
        };
        if want_end <= b.end {
            // Shrink: give the tail back.
            if b.end - want_end >= MIN_ALIGN {
                self.used.insert(
                    off,
                    Block {
                        start: b.start,
                        end: want_end,
                    },
                );
                self.insert_free(want_end, b.end);
            }
            return true;
        }
        // Grow into the free range that starts right at our end.
        match self.free.get(&b.end) {
            Some(&fe) if fe >= want_end => {
                self.free.remove(&b.end);
                if fe > want_end {
                    self.free.insert(want_end, fe);
                }
                self.used.insert(
                    off,
                    Block {
                        start: b.start,
                        end: want_end,
                    },
                );
                true
            }
            _ => false,
        }
    }

    /// Total size managed.
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_coalesces_to_one_block() {
        let mut h = Heap::new(1 << 20);
        let a = h.alloc(100, 8).unwrap();
        let b = h.alloc(1000, 4096).unwrap();
        let c = h.alloc(10, 8).unwrap();
        assert_eq!(a % MIN_ALIGN, 0);
        assert_eq!(b % 4096, 0);
        // First fit may put `c` into the padding before `b`; the blocks must not overlap.
        let mut r = [(a, a + 100), (b, b + 1000), (c, c + 10)];
        r.sort();
        assert!(r.windows(2).all(|w| w[0].1 <= w[1].0), "{r:?}");
        h.free(b).unwrap();
        h.free(a).unwrap();
        h.free(c).unwrap();
        assert_eq!(h.free_bytes(), 1 << 20);
        assert_eq!(h.free.len(), 1);
        assert!(h.free(c).is_none());
    }

    #[test]
    fn deterministic_sequence() {
        let run = || {
            let mut h = Heap::new(1 << 16);
            let mut v = Vec::new();
            for i in 1..40 {
                v.push(h.alloc(i * 37, 1 << (i % 7)).unwrap());
                if i % 3 == 0 {
                    h.free(v[i / 2]).ok_or(()).ok();
                }
            }
            v
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn exhaustion_reports_sizes() {
        let mut h = Heap::new(4096);
        let e = h.alloc(8192, 8).unwrap_err();
        assert_eq!(e.free, 4096);
        assert_eq!(e.largest, 4096);
        assert_eq!(e.requested, 8192);
    }

    #[test]
    fn resize_in_place_grows_and_shrinks() {
        let mut h = Heap::new(1 << 16);
        let a = h.alloc(128, 8).unwrap();
        assert!(h.resize_in_place(a, 4096));
        assert_eq!(h.usable_size(a), Some(4096));
        let b = h.alloc(64, 8).unwrap();
        assert!(!h.resize_in_place(a, 8192));
        assert!(h.resize_in_place(a, 64));
        h.free(a).unwrap();
        h.free(b).unwrap();
        assert_eq!(h.free_bytes(), 1 << 16);
    }
}
