//! Point-to-point message channels between team members, the building block of the
//! message-passing collective algorithms (recursive doubling, ring, trees).
//!
//! Each team slot has [`Layout::CHANNELS`] channels; within one algorithm a channel has one
//! fixed sender and one fixed receiver per PE (e.g. channel k = round k's partner), so a
//! PE's count of messages sent on a channel always equals its peer's count of messages
//! received on it, and neither needs to travel. A message is a put into one of the
//! receiver's two buffers (alternating), then an atomic increment of its arrival counter;
//! the receiver acknowledges by incrementing the sender's consumption counter, and a
//! sender never runs more than two messages ahead of those acknowledgements. Both counters
//! have one writer (the fixed sender, the fixed receiver), so they are raised with
//! `Fabric::raise`: a CPU atomic for a node-local peer, UCX for a remote one.
//!
//! A team's channels below [`EXCHANGE_CHANNELS`] carry exchanges only (recursive doubling
//! and Rabenseifner's rounds, `coll::allreduce`): in every use both partners send one message
//! and then receive one, so a PE that sends its message n has received its partner's n-1,
//! which the partner sent after consuming our n-2. The credit is implied and no
//! acknowledgement travels: over TCP each one was a message of its own, on the receiver's
//! way out of every round. On the other channels an acknowledgement through the network
//! waits for the receiver's next wait (`transport::deferred`): the sender needs it only
//! when it runs two messages ahead, and then it waits for the receiver's next call anyway.

use std::sync::atomic::Ordering::Relaxed;

use crate::error::{At, Result};
use crate::runtime::{Layout, Runtime};
use crate::team::{Scratch, Team};
use crate::transport::{Dir, SourceHeld, SymAddr, Xfer};

/// Where one direction of a channel lives: the receiver's arrival counter and buffers,
/// the sender's consumption counter, and both sides' message counts.
struct Channel<'a> {
    arrivals: SymAddr,
    acks: SymAddr,
    buf: [SymAddr; 2],
    count: &'a std::sync::atomic::AtomicU64,
    /// Whether the receiver acknowledges (not on exchange channels).
    acked: bool,
}

/// Team channels `0..EXCHANGE_CHANNELS` carry only exchanges: both partners send one
/// message, then receive one (see the module doc). An active set's pair channels carry
/// every algorithm's messages, so they are always acknowledged.
pub(crate) const EXCHANGE_CHANNELS: usize = 16;

impl Runtime {
    /// Channel `ch` of `team` from world PE `from` to world PE `to` (one of them is this
    /// PE): a slot's channel, or on an active set the pair's own (`team::group`).
    fn channel<'a>(&'a self, team: &'a Team, ch: usize, from: usize, to: usize) -> Channel<'a> {
        let sending = from == self.me;
        match team.scratch {
            Scratch::Slot(s) => Channel {
                arrivals: self.layout.msg_flag(s, ch),
                acks: self.layout.ack_flag(s, ch),
                buf: [self.layout.msg_buf(s, ch, 0), self.layout.msg_buf(s, ch, 1)],
                count: if sending {
                    &team.sent[ch]
                } else {
                    &team.recvd[ch]
                },
                acked: ch >= EXCHANGE_CHANNELS,
            },
            Scratch::Pairs => Channel {
                arrivals: self.layout.pair_msg(from),
                acks: self.layout.pair_ack(to),
                buf: [self.layout.pair_buf(from, 0), self.layout.pair_buf(from, 1)],
                count: if sending {
                    &self.teams().pairs.sent[to]
                } else {
                    &self.teams().pairs.recvd[from]
                },
                acked: true,
            },
        }
    }
}

/// Largest message a channel carries; algorithms cut larger data into chunks.
pub(crate) const MAX_MSG: usize = Layout::MSG_BYTES;

impl Runtime {
    /// Sends `data` (≤ [`MAX_MSG`] bytes) to team rank `to` on channel `ch`.
    pub(crate) fn msg_send(
        &self,
        routine: &'static str,
        team: &Team,
        ch: usize,
        to: usize,
        data: &[u8],
    ) -> Result<()> {
        debug_assert!(data.len() <= MAX_MSG);
        let pe = team.members().pe(to);
        let c = self.channel(team, ch, self.me, pe);
        let n = c.count.load(Relaxed);
        // Credit: the buffer we are about to fill held message n - 2, which must be consumed
        // (on an exchange channel it is: see the module doc).
        if c.acked && n >= 2 {
            self.wait_peer_in(routine, team, pe, || {
                self.load_local::<u64>(c.acks) >= n - 1
            })?;
        }
        // SAFETY: the buffer is a runtime area of the receiver's segment, MAX_MSG bytes,
        // not read until the arrival counter is raised (after the data, by put_raise).
        unsafe {
            self.fabric
                .put_raise(
                    Xfer {
                        ctx: crate::ctx::runtime_ctx(),
                        dir: Dir::Put,
                        pe,
                        remote: c.buf[(n % 2) as usize],
                        local: data.as_ptr() as *mut u8,
                        len: data.len(),
                    },
                    c.arrivals,
                    n,
                    SourceHeld::UntilReturn,
                )
                .at(routine)?
        };
        c.count.store(n + 1, Relaxed);
        Ok(())
    }

    /// Waits for the next message on channel `ch` (from team rank `from`), hands its
    /// first `len` bytes to `consume`, then acknowledges it.
    pub(crate) fn msg_recv<R>(
        &self,
        routine: &'static str,
        team: &Team,
        ch: usize,
        from: usize,
        len: usize,
        consume: impl FnOnce(&[u8]) -> R,
    ) -> Result<R> {
        debug_assert!(len <= MAX_MSG);
        let pe = team.members().pe(from);
        let c = self.channel(team, ch, pe, self.me);
        let n = c.count.load(Relaxed);
        self.wait_peer_in(routine, team, pe, || self.load_local::<u64>(c.arrivals) > n)?;
        let p = self.fabric.local(c.buf[(n % 2) as usize]);
        // SAFETY: our own receive buffer holds MAX_MSG bytes; the sender filled it before
        // raising the counter (acquire above) and does not touch it again before our ack.
        let out = consume(unsafe { std::slice::from_raw_parts(p, len) });
        c.count.store(n + 1, Relaxed);
        if c.acked {
            self.ack(routine, pe, c.acks)?;
        }
        Ok(out)
    }
}

impl Runtime {
    /// A message on channel `ch` to team rank `to` whose data goes straight to `dst` on
    /// the receiver (a buffer it has made free for us) instead of into the channel's
    /// buffers: a put, then the arrival count. It fills no buffer, so it waits for no
    /// credit; it counts as a message, so later buffered ones keep their credit right.
    ///
    /// `held`: until when `src` may still be read ([`SourceHeld::UntilSettled`]: until
    /// [`Runtime::msg_settle`]).
    ///
    /// # Safety
    /// `src` is readable for `len` bytes and unchanged as long as `held` says; `dst` is a
    /// checked range of `len` bytes on the receiver that nobody else writes or reads until
    /// the receiver has seen the arrival.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msg_push(
        &self,
        routine: &'static str,
        team: &Team,
        ch: usize,
        to: usize,
        dst: SymAddr,
        src: *const u8,
        len: usize,
        held: SourceHeld,
    ) -> Result<()> {
        let pe = team.members().pe(to);
        let c = self.channel(team, ch, self.me, pe);
        let n = c.count.load(Relaxed);
        // SAFETY: the caller's contract; the arrival count is raised after the data.
        unsafe {
            self.fabric
                .put_raise(
                    Xfer {
                        ctx: crate::ctx::runtime_ctx(),
                        dir: Dir::Put,
                        pe,
                        remote: dst,
                        local: src as *mut u8,
                        len,
                    },
                    c.arrivals,
                    n,
                    held,
                )
                .at(routine)?
        };
        c.count.store(n + 1, Relaxed);
        Ok(())
    }

    /// Waits until no [`Runtime::msg_push`] made with [`SourceHeld::UntilSettled`] reads
    /// its source any more.
    pub(crate) fn msg_settle(&self, routine: &'static str) -> Result<()> {
        self.fabric.settle_pushes().at(routine)
    }

    /// Waits for the next [`Runtime::msg_push`] on channel `ch` from team rank `from`
    /// (its data has then landed), and acknowledges it.
    pub(crate) fn msg_arrived(
        &self,
        routine: &'static str,
        team: &Team,
        ch: usize,
        from: usize,
    ) -> Result<()> {
        let pe = team.members().pe(from);
        let c = self.channel(team, ch, pe, self.me);
        let n = c.count.load(Relaxed);
        self.wait_peer_in(routine, team, pe, || self.load_local::<u64>(c.arrivals) > n)?;
        c.count.store(n + 1, Relaxed);
        self.ack(routine, pe, c.acks)
    }

    /// Acknowledges a message from `pe`: at once on shared memory, at this PE's next wait
    /// through the network (`transport::deferred`; `team_destroy` sends what its team owes
    /// before the slot's counts are reset).
    #[inline]
    fn ack(&self, routine: &'static str, pe: usize, acks: SymAddr) -> Result<()> {
        self.fabric
            .raise_later(crate::ctx::runtime_ctx(), pe, acks, 1)
            .at(routine)
    }
}
