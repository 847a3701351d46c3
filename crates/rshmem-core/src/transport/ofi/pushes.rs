//! Pushes longer than a message by writes that carry their count (`Ofi::put_raise` where
//! the provider has remote completion-queue data, `rshmem_ofi::Ofi::writes_with_data`):
//! the data goes straight to its place and its 8 bytes of completion data name the runtime
//! word to raise and the push's number on it, so the count travels with the data, one way,
//! where a put, a wait for its delivery and a message went before (1.5 round trips).
//! Shorter pushes stay messages (`Raise`), which cost less than such a write at 8 bytes
//! (a 2-PE reduction + barrier loop: 36-47 us against 42-54).
//!
//! A channel's arrival word is read as "the first n pushes have landed" (`coll::msg`), and
//! no provider promises that the completions of two writes, or of a write and a later
//! message, reach the target in the order sent (`tcp;ofi_rxm` grants neither
//! `FI_ORDER_WAW` nor `FI_ORDER_SAW`). So every push to a word, message or write, is
//! numbered (the sender's count on its channel, which equals the receiver's count of
//! arrivals: `coll::msg`) and only the word's next number raises it; one that comes early
//! waits in a short list until those before it have landed (a message's data is copied at
//! once: its buffer is the sender's by the channel's credit). Over `tcp;ofi_rxm` they
//! arrive in order (a probe of 20,000 in docs/results/osu-ofi.md), so the list stays empty
//! and unallocated.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::super::ucx::Segment;
use super::super::{Seg, SymAddr};
use super::{HEAP, REGIONS, RUNTIME_AREA};

/// The completion data of push number `seq` on the runtime word `sig` (`None` if `sig` is
/// no runtime word this encoding reaches): the word's index in the heap segment (8-byte
/// words) above, the number's low 32 bits below.
pub(super) fn data(sig: SymAddr, seq: u64) -> Option<u64> {
    let index = u32::try_from(sig.off / 8).ok();
    match sig.seg {
        Seg::Heap if sig.off.is_multiple_of(8) => {
            index.map(|i| (i as u64) << 32 | seq as u32 as u64)
        }
        _ => None,
    }
}

/// Marks the count of a message that carries a push's number (`Raise::header`'s third
/// word: the number below): counts raised otherwise are small.
pub(super) const NUMBERED: u64 = 1 << 63;

/// A numbered message's header (`Raise::header` of the push's data, `sig` and
/// [`NUMBERED`] | number) as one that raises nothing, and its completion data ([`data`]);
/// `None` for any other header.
pub(super) fn numbered(header: &[u8]) -> Option<([u8; 24], u64)> {
    let h: [u8; 24] = header.try_into().ok()?;
    let word = |i: usize| u64::from_ne_bytes(h[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let by = word(2);
    if by & NUMBERED == 0 {
        return None;
    }
    let Some(d) = data(SymAddr::from_word(word(1)), by & !NUMBERED) else {
        malformed("a numbered count outside the runtime area");
        return None;
    };
    let mut plain = h;
    plain[16..].copy_from_slice(&0u64.to_ne_bytes());
    Some((plain, d))
}

/// The target's side: applies each push's count in number order.
pub(super) struct Counts {
    /// Where the heap segment is mapped, and the bounds of its runtime area (byte
    /// offsets from that base).
    base: usize,
    start: usize,
    end: usize,
    /// Pushes that landed before an earlier one on the same word: (word index, number).
    early: Mutex<Vec<(u32, u32)>>,
    /// Whether `early` holds any, so that a push in order takes no lock.
    any_early: AtomicBool,
}

impl Counts {
    /// Over this PE's `segments` (the runtime area lies in the heap segment).
    pub(super) fn new(segments: &[Segment; REGIONS]) -> Counts {
        Counts {
            base: segments[HEAP].base,
            start: segments[RUNTIME_AREA].start,
            end: segments[HEAP].end,
            early: Mutex::new(Vec::new()),
            any_early: AtomicBool::new(false),
        }
    }

    /// The push whose completion data is `d` has landed: raises its word if it is the
    /// word's next, then any early ones it was holding back.
    pub(super) fn landed(&self, d: u64) {
        let (index, seq) = ((d >> 32) as u32, d as u32);
        let off = index as usize * 8;
        if off < self.start || off + 8 > self.end {
            return malformed("a count outside the runtime area");
        }
        // SAFETY: an aligned word of the runtime area of this PE's mapped heap segment,
        // which every writer updates atomically (one sender raises it; its owner reads
        // and resets it).
        let word = unsafe { AtomicU64::from_ptr((self.base + off) as *mut u64) };
        let next = word.load(Ordering::Relaxed) as u32;
        match seq.wrapping_sub(next) as i32 {
            0 => {}
            ahead if ahead > 0 => {
                let mut early = self.early.lock().unwrap_or_else(|p| p.into_inner());
                early.push((index, seq));
                return self.any_early.store(true, Ordering::Relaxed);
            }
            _ => return malformed("a push counted twice"),
        }
        word.fetch_add(1, Ordering::Release);
        // Handlers run one at a time (the queue's reader lock), so the flag is exact here.
        if !self.any_early.load(Ordering::Relaxed) {
            return;
        }
        let mut early = self.early.lock().unwrap_or_else(|p| p.into_inner());
        let mut want = seq.wrapping_add(1);
        while let Some(i) = early.iter().position(|&e| e == (index, want)) {
            early.swap_remove(i);
            word.fetch_add(1, Ordering::Release);
            want = want.wrapping_add(1);
        }
        self.any_early.store(!early.is_empty(), Ordering::Relaxed);
    }
}

/// A push no rshmem PE of this job sends: the job's PEs disagree on the layout or on a
/// channel's count.
#[cold]
fn malformed(what: &str) {
    eprintln!("rshmem: a peer's push through libfabric carried {what}; aborting");
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts_over(words: &mut [u64]) -> Counts {
        Counts {
            base: words.as_mut_ptr() as usize,
            start: 0,
            end: words.len() * 8,
            early: Mutex::new(Vec::new()),
            any_early: AtomicBool::new(false),
        }
    }

    /// Runtime word `w` of the heap segment.
    fn word(w: usize) -> SymAddr {
        SymAddr {
            seg: Seg::Heap,
            off: w * 8,
        }
    }

    /// The value of word `w` under `c`.
    fn read(c: &Counts, w: usize) -> u64 {
        assert!(w * 8 + 8 <= c.end);
        // SAFETY: inside the words `c` was made over, which outlive it; read on the
        // thread that updates them.
        unsafe { std::ptr::read_volatile((c.base + w * 8) as *const u64) }
    }

    #[test]
    fn a_word_rises_only_when_every_earlier_push_has_landed() {
        let mut words = [0u64; 4];
        let c = counts_over(&mut words);
        let on = |w: usize, seq: u64| data(word(w), seq).unwrap();
        c.landed(on(1, 0));
        c.landed(on(1, 2));
        c.landed(on(1, 3));
        c.landed(on(2, 0));
        assert_eq!(read(&c, 1), 1, "2 and 3 wait for 1");
        assert_eq!(read(&c, 2), 1, "another word is apart");
        c.landed(on(1, 1));
        assert_eq!(read(&c, 1), 4, "1 lets 2 and 3 count");
        assert!(c.early.lock().unwrap().is_empty());
    }

    #[test]
    fn a_numbered_message_raises_nothing_itself_and_names_its_push() {
        let (sig, dst) = (word(512), word(1 << 17));
        let mut h = [0u8; 24];
        for (c, w) in h
            .chunks_exact_mut(8)
            .zip([dst.to_word(), sig.to_word(), NUMBERED | 7])
        {
            c.copy_from_slice(&w.to_ne_bytes());
        }
        let (plain, d) = numbered(&h).expect("numbered");
        assert_eq!(plain[..16], h[..16], "where the data and the count go");
        assert_eq!(plain[16..], [0; 8], "by nothing");
        assert_eq!(d, data(sig, 7).unwrap());
        h[16..].copy_from_slice(&1u64.to_ne_bytes());
        assert_eq!(numbered(&h), None, "a plain raise");
        assert_eq!(numbered(&h[..16]), None, "a short header");
    }

    #[test]
    fn numbers_wrap_at_32_bits() {
        let mut words = [0u64, u32::MAX as u64];
        let c = counts_over(&mut words);
        c.landed(data(word(1), 1 << 32).unwrap());
        c.landed(data(word(1), u32::MAX as u64).unwrap());
        assert_eq!(read(&c, 1), u32::MAX as u64 + 2);
    }
}
