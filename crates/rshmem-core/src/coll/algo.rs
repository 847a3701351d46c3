//! Which algorithm each collective uses, chosen once at init from
//! `SHMEM_<COLL>_ALGORITHM` (`auto` picks per team and message size).

use rshmem_util::Config;

use crate::runtime::published::Published;
use crate::runtime::Runtime;

/// Algorithms of team synchronization (`shmem_team_sync`, `shmem_barrier_all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncAlg {
    /// Dissemination: log2(n) rounds of one flag each, no root.
    Dissemination,
    /// Linear gather-release through rank 0: n-1 arrivals counted at the root, which then
    /// releases every member.
    Linear,
    /// WORLD only: a dissemination within each host (shared memory), one across the
    /// LEADERS (the network), then one within each host again; other teams use
    /// dissemination.
    Hierarchical,
}

/// Algorithms of data collectives (broadcast, collect, fcollect, alltoall, reduce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataAlg {
    /// Shared-memory single copy: every PE pulls what it needs straight from its peers'
    /// buffers; reductions are a reduce-scatter in which each PE folds one chunk.
    Shm,
    /// Linear: one PE (the root, or rank 0 for reductions) does all the work and pushes
    /// results to every member. Simple, and the reference the others are checked against.
    Linear,
    /// Reductions only: recursive doubling over message channels (non-powers of two fold
    /// the extra ranks in first); log2(n) full-vector exchanges.
    RecursiveDoubling,
    /// Reductions only: ring reduce-scatter then ring allgather over message channels;
    /// 2(n-1) steps of 1/n of the vector each.
    Ring,
    /// Reductions only: Rabenseifner's reduce-scatter by recursive halving and allgather
    /// by recursive doubling over message channels; about 2x the data of one vector moves
    /// per PE, in log2(n) rounds each way.
    Rabenseifner,
    /// Broadcast only: a k-ary tree rooted at the root (radix [`TREE_RADIX`]); each PE
    /// copies chunks from its parent's destination as they are announced and announces
    /// them to its children, so large messages pipeline down the tree. No team sync.
    Tree,
    /// Broadcast only, built for the network (`coll::net`): a binomial tree of pushes;
    /// up to one message-channel message no team sync, above it one sync and chunks put
    /// straight into the children's destinations, pipelined down the tree.
    Binomial,
    /// Reductions only, built for the network (`coll::net`): a bulk reduce-scatter and
    /// allgather after one team sync; each PE fetches its chunk of every source at once,
    /// folds it, puts it into every destination at once and raises a count there.
    Direct,
    /// Low latency, small messages on teams whose members all map each other
    /// (`coll::ll`): every 8-byte word stored into a peer carries 4 data bytes and the
    /// call's sequence, so a step costs one one-way transfer and no sync. Reductions run
    /// one-shot (every member stores its vector into every other) up to
    /// [`crate::coll::ll::ONE_SHOT_MAX`] members, recursive doubling above; broadcasts
    /// store from the root into every member. Larger messages and other teams fall back
    /// to what `auto` picks.
    Ll,
    /// Reductions only: [`DataAlg::Ll`] forced to recursive doubling at any team size.
    LlRd,
    /// Broadcast only, on teams whose members all map each other (`coll::staged`): the
    /// root copies the data into staging chunks of its own and returns; members copy out
    /// of them as each chunk is published. No team sync. Other teams and active sets
    /// without a slot fall back to [`DataAlg::Shm`].
    Staged,
    /// WORLD across hosts (other teams take `Shm`). Reductions: within each host
    /// (single-copy), across the LEADERS team (recursive doubling; [`DataAlg::Direct`]
    /// above [`NET_RD_MAX`]), then a broadcast within
    /// each host (seed 000, Algorithm 2). Broadcast: each host's leader fetches from the
    /// root, its host-mates copy from it.
    Hierarchical,
}

pub use crate::team::Span;

/// Bytes up to which `auto` takes the low-latency algorithms on node-local teams
/// (measured: see docs/decisions/0021-low-latency-ll-collectives.md).
pub const LL_MAX: usize = crate::coll::ll::MAX_BYTES;

/// Bytes up to which `auto` broadcasts on node-local teams of more than 2 through the
/// root's staging chunks ([`DataAlg::Staged`]) above [`LL_MAX`] (or on teams too large for
/// LL): no team sync, where single-copy's two wait for every member to be scheduled (OSU
/// broadcast, 3 PEs on 2 cores, 1-16 KiB 6.7-7.7 -> 0.4-2.7 us; at 2 PEs single-copy
/// stays ahead; docs/decisions/0044-staged-broadcasts.md).
pub const STAGED_MAX: usize = 32 << 10;

/// Bytes up to which `auto` reduces across hosts by recursive doubling (one message of
/// the channels a round), [`DataAlg::Direct`] above.
pub const NET_RD_MAX: usize = crate::coll::msg::MAX_MSG;

/// Bytes up to which `auto` reduces across hosts on teams of more than 2 by Rabenseifner's
/// algorithm ([`DataAlg::Rabenseifner`], 2 log n messages of the channels) above
/// [`NET_RD_MAX`], rather than [`DataAlg::Direct`]'s ring of 2 (n - 1) steps, each of which
/// waits for a neighbour to be scheduled: OSU reduce of 32 KiB over UCX's TCP, 4 PEs on 2
/// cores, 184-227 -> 67-82 us (OSHMEM 107-125), 3 PEs 110-133 -> 62 (OSHMEM 84-90); 64 KiB
/// (two passes) at 4 PEs 200-230 -> 136-169, a tie at 3
/// (docs/decisions/0023-network-collectives-push.md).
pub const NET_RABENSEIFNER_MAX: usize = 4 * NET_RD_MAX;

/// Bytes up to which `auto` reduces and broadcasts through the channels on 2 PEs that the
/// network maps ([`Span::Mapped`]: [`mapped_reduce`], [`Algorithms::bcast_for`]),
/// single-copy above; below, the two are level, or the channels a little ahead (broadcast
/// of 32 B: 0.48-0.52 against 0.60-0.68 us).
pub const MAPPED_PAIR_MSG_MAX: usize = 512;

/// Fan-out of the broadcast tree.
pub const TREE_RADIX: usize = 4;

/// `auto`'s reduction of `bytes` on a team of `npes` whose members reach each other through
/// the network (another team across hosts, or the LEADERS step of WORLD's).
pub fn net_reduce(bytes: usize, npes: usize) -> DataAlg {
    if bytes <= NET_RD_MAX {
        DataAlg::RecursiveDoubling
    } else if npes > 2 && bytes <= NET_RABENSEIFNER_MAX {
        DataAlg::Rabenseifner
    } else {
        DataAlg::Direct
    }
}

/// `auto`'s reduction of `bytes` on a team of `npes` that the network library maps
/// ([`Span::Mapped`]): recursive doubling over the channels for small vectors (up to
/// [`MAPPED_PAIR_MSG_MAX`] on 2 PEs, [`NET_RD_MAX`] on more), single-copy above. There
/// every transfer is a copy through the mapping, so reading the peers' sources between two
/// team syncs beats the channels' two copies a round and the pushed ring (OSU reduce over
/// `UCX_TLS=sm,self`, 3-4 interleaved rounds, us: 2 PEs 1 KiB 0.78-0.89 -> 0.70-0.73,
/// 64 KiB 9.3-11.0 -> 4.7-5.4, 1 MiB 104-124 -> 76-81; 4 PEs on 2 cores 64 KiB 32.5-39.4
/// -> 18.6-19.5, 1 MiB 303-502 -> 244-355; docs/decisions/0023-network-collectives-push.md).
pub fn mapped_reduce(bytes: usize, npes: usize) -> DataAlg {
    if bytes <= mapped_msg_max(npes) {
        DataAlg::RecursiveDoubling
    } else {
        DataAlg::Shm
    }
}

/// Bytes up to which `auto` takes the message channels on a team of `npes` that the network
/// maps, single-copy above ([`mapped_reduce`], [`Algorithms::bcast_for`]).
fn mapped_msg_max(npes: usize) -> usize {
    if npes <= 2 {
        MAPPED_PAIR_MSG_MAX
    } else {
        NET_RD_MAX
    }
}

/// The chosen algorithm of every collective.
#[derive(Debug, Clone, Copy)]
pub struct Algorithms {
    /// Team sync and barrier.
    pub barrier: SyncAlg,
    /// `SHMEM_BARRIER_ALGORITHM=auto`: hierarchical on WORLD where it spans hosts whose
    /// PEs share memory, dissemination elsewhere.
    pub barrier_auto: bool,
    /// Broadcast.
    pub bcast: DataAlg,
    /// `SHMEM_BCAST_ALGORITHM=auto`: across hosts the binomial tree (on WORLD up to 16 KiB,
    /// hierarchical above); on one host LL, staged (3+ PEs, up to [`STAGED_MAX`]) or
    /// `bcast`.
    pub bcast_auto: bool,
    /// Reductions and scans.
    pub reduce: DataAlg,
    /// `SHMEM_REDUCE_ALGORITHM=auto`: recursive doubling up to `reduce_crossover` bytes,
    /// single-copy above (measured: RD is about 0.6x single-copy's latency for small
    /// vectors at 4 PEs, single-copy 3-5x faster for large ones).
    pub reduce_auto: bool,
    /// Bytes up to which `auto` reductions use recursive doubling.
    pub reduce_crossover: usize,
    /// Bytes up to which `auto` reductions and broadcasts on node-local teams take the
    /// low-latency algorithms ([`DataAlg::Ll`]).
    pub ll_max: usize,
    /// Collect.
    pub collect: DataAlg,
    /// Fcollect.
    pub fcollect: DataAlg,
    /// `SHMEM_FCOLLECT_ALGORITHM=auto`: LL (`coll::ll::fcollect`) for contributions up to
    /// 512 B on node-local teams of up to 8, single-copy elsewhere.
    pub fcollect_auto: bool,
    /// Alltoall(s).
    pub alltoall: DataAlg,
}

/// Names the issue tracker plans for; refused with a clear message until they exist.
const PLANNED: &[&str] = &[
    "tree",
    "recursive_doubling",
    "ring",
    "rabenseifner",
    "hierarchical",
];

fn parse_data(var: &str, v: &str) -> Result<DataAlg, String> {
    match v {
        "" | "auto" | "shm" => Ok(DataAlg::Shm),
        "linear" => Ok(DataAlg::Linear),
        other => Err(unknown(var, other, "auto, shm, linear")),
    }
}

fn parse_reduce(var: &str, v: &str) -> Result<DataAlg, String> {
    match v {
        "ll" => Ok(DataAlg::Ll),
        "ll_rd" => Ok(DataAlg::LlRd),
        "recursive_doubling" => Ok(DataAlg::RecursiveDoubling),
        "ring" => Ok(DataAlg::Ring),
        "direct" => Ok(DataAlg::Direct),
        "rabenseifner" => Ok(DataAlg::Rabenseifner),
        "hierarchical" => Ok(DataAlg::Hierarchical),
        "" | "auto" | "shm" | "linear" => parse_data(var, v),
        other => Err(unknown(
            var,
            other,
            "auto, shm, linear, ll, ll_rd, recursive_doubling, ring, rabenseifner, direct, \
             hierarchical",
        )),
    }
}

fn unknown(var: &str, v: &str, available: &str) -> String {
    if PLANNED.contains(&v) {
        format!("{var}={v}: this algorithm is not implemented yet (available: {available})")
    } else {
        format!("{var}={v}: unknown algorithm (available: {available})")
    }
}

impl Algorithms {
    /// The reduction algorithm for a vector of `bytes` on a team of `npes`, given where
    /// the team lies: `Span::Host` (every member maps every other), `Span::World` (WORLD
    /// across hosts whose PEs share memory: the HOST / LEADERS composition applies),
    /// `Span::Hosts` (another team across hosts) or `Span::Mapped` (through a network
    /// library that maps every member).
    pub fn reduce_for(&self, bytes: usize, npes: usize, span: Span) -> DataAlg {
        let ll = span == Span::Host && bytes <= crate::coll::ll::MAX_BYTES;
        let forced_ll = matches!(self.reduce, DataAlg::Ll | DataAlg::LlRd);
        // A forced LL choice that cannot serve this call falls back to `auto`'s.
        if !self.reduce_auto && (ll || !forced_ll) {
            return self.reduce;
        }
        match span {
            Span::Host if bytes <= self.ll_max => DataAlg::Ll,
            Span::World => DataAlg::Hierarchical,
            // Single copy only among PEs that map each other; across hosts, one message
            // a round up to a message's size, bulk transfers above (`coll::net`).
            Span::Hosts => net_reduce(bytes, npes),
            Span::Mapped => mapped_reduce(bytes, npes),
            Span::Host if npes > 2 && bytes <= self.reduce_crossover => DataAlg::RecursiveDoubling,
            Span::Host => DataAlg::Shm,
        }
    }

    /// The fcollect algorithm for `bytes` per member on a team of `npes` lying as `span`
    /// says: `auto` takes LL's one-shot exchange on node-local teams of up to
    /// [`crate::coll::ll::ONE_SHOT_MAX`] for up to [`LL_MAX`] bytes, half of it on 2 PEs,
    /// where single-copy's syncs are one cache-line round trip each and LL's doubled bytes
    /// cost more from 512 B (OSU fcollect, 2 PEs: 512 B 0.79-0.85 against 0.57-0.63 us;
    /// docs/decisions/0021-low-latency-ll-collectives.md).
    pub fn fcollect_for(&self, bytes: usize, npes: usize, span: Span) -> DataAlg {
        let max = if npes == 2 { LL_MAX / 2 } else { LL_MAX };
        if self.fcollect_auto
            && span == Span::Host
            && npes <= crate::coll::ll::ONE_SHOT_MAX
            && bytes <= max
        {
            DataAlg::Ll
        } else {
            self.fcollect
        }
    }

    /// The broadcast algorithm for `bytes` on a team of `npes` lying as `span` says.
    pub fn bcast_for(&self, bytes: usize, npes: usize, span: Span) -> DataAlg {
        let ll = span == Span::Host
            && npes <= crate::coll::ll::ONE_SHOT_MAX
            && bytes <= crate::coll::ll::MAX_BYTES;
        match self.bcast {
            // Small data down the binomial tree: with ranks numbered host by host, only
            // its top levels cross the network (no leader get, no syncs).
            _ if self.bcast_auto && span == Span::World && bytes <= NET_RD_MAX => DataAlg::Binomial,
            _ if self.bcast_auto && span == Span::World => DataAlg::Hierarchical,
            // Pushes down a tree.
            _ if self.bcast_auto && span == Span::Hosts => DataAlg::Binomial,
            // Where the network maps the members, each gets the data from the root (a copy
            // through the mapping, between two team syncs), but small data, whose syncs
            // cost more than the channels' messages down the tree (OSU broadcast over
            // `UCX_TLS=sm,self`, 3 interleaved rounds, us: 2 PEs 8 KiB 1.85-1.94 ->
            // 0.56-0.64, 1 MiB 47-56 -> 41-47; 4 PEs on 2 cores 64 KiB 11.6-16.5 -> 8.3-9.6,
            // and 8 B 1.5-1.8 against 5.1-7.2 by gets).
            _ if self.bcast_auto && span == Span::Mapped => {
                if bytes <= mapped_msg_max(npes) {
                    DataAlg::Binomial
                } else {
                    DataAlg::Shm
                }
            }
            _ if self.bcast_auto && ll && bytes <= self.ll_max => DataAlg::Ll,
            _ if self.bcast_auto && span == Span::Host && npes > 2 && bytes <= STAGED_MAX => {
                DataAlg::Staged
            }
            DataAlg::Ll if !ll => DataAlg::Shm,
            DataAlg::Staged if span != Span::Host => DataAlg::Shm,
            alg => alg,
        }
    }

    /// The sync algorithm of a team lying as `span` says (see [`Algorithms::reduce_for`]).
    pub fn sync_for(&self, span: Span) -> SyncAlg {
        match (self.barrier_auto, span) {
            (true, Span::World) => SyncAlg::Hierarchical,
            (true, _) => SyncAlg::Dissemination,
            (false, Span::World) => self.barrier,
            // The composition exists for WORLD only.
            (false, _) if self.barrier == SyncAlg::Hierarchical => SyncAlg::Dissemination,
            (false, _) => self.barrier,
        }
    }

    /// Reads the choices from the configuration; an unknown name is an error naming the
    /// variable and the available algorithms.
    pub fn from_config(cfg: &Config) -> Result<Algorithms, String> {
        Ok(Algorithms {
            barrier: match cfg.barrier_algorithm.as_str() {
                "" | "auto" | "dissemination" => SyncAlg::Dissemination,
                "linear" => SyncAlg::Linear,
                "hierarchical" => SyncAlg::Hierarchical,
                other => {
                    return Err(unknown(
                        "SHMEM_BARRIER_ALGORITHM",
                        other,
                        "auto, dissemination, linear, hierarchical",
                    ))
                }
            },
            barrier_auto: matches!(cfg.barrier_algorithm.as_str(), "" | "auto"),
            bcast: match cfg.bcast_algorithm.as_str() {
                "tree" => DataAlg::Tree,
                "binomial" => DataAlg::Binomial,
                "ll" => DataAlg::Ll,
                "staged" => DataAlg::Staged,
                "hierarchical" => DataAlg::Hierarchical,
                "" | "auto" | "shm" | "linear" => {
                    parse_data("SHMEM_BCAST_ALGORITHM", &cfg.bcast_algorithm)?
                }
                other => {
                    return Err(unknown(
                        "SHMEM_BCAST_ALGORITHM",
                        other,
                        "auto, shm, linear, ll, staged, tree, binomial, hierarchical",
                    ))
                }
            },
            bcast_auto: matches!(cfg.bcast_algorithm.as_str(), "" | "auto"),
            reduce: parse_reduce("SHMEM_REDUCE_ALGORITHM", &cfg.reduce_algorithm)?,
            reduce_auto: matches!(cfg.reduce_algorithm.as_str(), "" | "auto"),
            reduce_crossover: cfg.reduce_crossover,
            ll_max: LL_MAX,
            collect: parse_data("SHMEM_COLLECT_ALGORITHM", &cfg.collect_algorithm)?,
            fcollect: parse_data("SHMEM_FCOLLECT_ALGORITHM", &cfg.fcollect_algorithm)?,
            fcollect_auto: matches!(cfg.fcollect_algorithm.as_str(), "" | "auto"),
            alltoall: parse_data("SHMEM_ALLTOALL_ALGORITHM", &cfg.alltoall_algorithm)?,
        })
    }
}

/// The algorithms in force on this PE, published by `world::init`.
static IN_FORCE: Published<Algorithms> = Published::new();

impl Algorithms {
    /// Publishes the algorithms in force (init, before the runtime).
    pub(crate) fn publish(self) {
        IN_FORCE.publish(Box::new(self));
    }

    /// Takes them back (the last finalize, after the runtime).
    pub(crate) fn unpublish() {
        drop(IN_FORCE.take());
    }
}

impl Runtime {
    /// The collective algorithms in force.
    #[inline(always)]
    pub(crate) fn algs(&self) -> &'static Algorithms {
        IN_FORCE.expect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_or_explain() {
        let cfg = |k: &str, v: &str| {
            let (k, v) = (k.to_string(), v.to_string());
            Config::from_lookup(move |q| (q == k).then(|| v.clone())).unwrap()
        };
        let a = Algorithms::from_config(&cfg("SHMEM_REDUCE_ALGORITHM", "linear")).unwrap();
        assert_eq!(a.reduce, DataAlg::Linear);
        assert_eq!(a.bcast, DataAlg::Shm);
        let a = Algorithms::from_config(&cfg("SHMEM_REDUCE_ALGORITHM", "ring")).unwrap();
        assert_eq!(a.reduce, DataAlg::Ring);
        let auto = Algorithms::from_config(&cfg("SHMEM_REDUCE_CROSSOVER", "4K")).unwrap();
        let h = Span::Host;
        assert_eq!(auto.reduce_for(4096, 4, h), DataAlg::RecursiveDoubling);
        assert_eq!(auto.reduce_for(4097, 4, h), DataAlg::Shm);
        assert_eq!(auto.reduce_for(8, 2, h), DataAlg::Ll);
        assert_eq!(auto.reduce_for(LL_MAX, 4, h), DataAlg::Ll);
        assert_eq!(auto.reduce_for(LL_MAX + 1, 2, h), DataAlg::Shm);
        assert_eq!(auto.bcast_for(8, 4, h), DataAlg::Ll);
        assert_eq!(auto.fcollect_for(LL_MAX, 3, h), DataAlg::Ll);
        assert_eq!(auto.fcollect_for(LL_MAX / 2, 2, h), DataAlg::Ll);
        assert_eq!(auto.fcollect_for(LL_MAX / 2 + 1, 2, h), DataAlg::Shm);
        assert_eq!(auto.fcollect_for(8, 9, h), DataAlg::Shm);
        assert_eq!(auto.fcollect_for(8, 4, Span::Hosts), DataAlg::Shm);
        let fc = Algorithms::from_config(&cfg("SHMEM_FCOLLECT_ALGORITHM", "linear")).unwrap();
        assert_eq!(fc.fcollect_for(8, 4, h), DataAlg::Linear);
        // Staged above LL's limits on more than 2 PEs, up to STAGED_MAX.
        assert_eq!(auto.bcast_for(8, 9, h), DataAlg::Staged);
        assert_eq!(auto.bcast_for(LL_MAX + 1, 2, h), DataAlg::Shm);
        assert_eq!(auto.bcast_for(LL_MAX + 1, 3, h), DataAlg::Staged);
        assert_eq!(auto.bcast_for(STAGED_MAX, 4, h), DataAlg::Staged);
        assert_eq!(auto.bcast_for(STAGED_MAX + 1, 4, h), DataAlg::Shm);
        let st = Algorithms::from_config(&cfg("SHMEM_BCAST_ALGORITHM", "staged")).unwrap();
        assert_eq!(st.bcast_for(1 << 20, 2, h), DataAlg::Staged);
        assert_eq!(st.bcast_for(8, 3, Span::Hosts), DataAlg::Shm);
        assert_eq!(auto.bcast_for(8, 4, Span::Hosts), DataAlg::Binomial);
        assert_eq!(auto.bcast_for(1 << 20, 2, Span::Hosts), DataAlg::Binomial);
        assert_eq!(auto.bcast_for(1 << 20, 3, Span::Hosts), DataAlg::Binomial);
        // Where the network maps the members, gets from the root but for small data on 3+.
        let m = Span::Mapped;
        assert_eq!(auto.bcast_for(8, 4, m), DataAlg::Binomial);
        assert_eq!(auto.bcast_for(NET_RD_MAX, 3, m), DataAlg::Binomial);
        assert_eq!(auto.bcast_for(NET_RD_MAX + 1, 3, m), DataAlg::Shm);
        assert_eq!(auto.bcast_for(MAPPED_PAIR_MSG_MAX, 2, m), DataAlg::Binomial);
        assert_eq!(auto.bcast_for(MAPPED_PAIR_MSG_MAX + 1, 2, m), DataAlg::Shm);
        assert_eq!(auto.bcast_for(1 << 20, 2, m), DataAlg::Shm);
        assert_eq!(auto.fcollect_for(8, 4, m), DataAlg::Shm);
        assert_eq!(auto.sync_for(m), SyncAlg::Dissemination);
        let ll = Algorithms::from_config(&cfg("SHMEM_REDUCE_ALGORITHM", "ll_rd")).unwrap();
        assert_eq!(ll.reduce_for(8, 3, h), DataAlg::LlRd);
        assert_eq!(ll.reduce_for(1 << 20, 3, h), DataAlg::Shm);
        assert_eq!(ll.reduce_for(8, 3, Span::Hosts), DataAlg::RecursiveDoubling);
        let llb = Algorithms::from_config(&cfg("SHMEM_BCAST_ALGORITHM", "ll")).unwrap();
        assert_eq!(llb.bcast_for(8, 3, h), DataAlg::Ll);
        assert_eq!(llb.bcast_for(8, 3, Span::Hosts), DataAlg::Shm);
        assert_eq!(a.reduce_for(8, 4, h), DataAlg::Ring);
        assert_eq!(a.reduce_for(8, 4, Span::World), DataAlg::Ring);
        assert_eq!(auto.reduce_for(8, 4, Span::World), DataAlg::Hierarchical);
        assert_eq!(auto.bcast_for(8, 4, Span::World), DataAlg::Binomial);
        assert_eq!(
            auto.bcast_for(1 << 20, 4, Span::World),
            DataAlg::Hierarchical
        );
        // Across hosts: one message a round, then on more than 2 PEs Rabenseifner's
        // log-depth rounds rather than the ring, then bulk; where the network maps the
        // members, single-copy above one message (above 512 B on 2).
        use DataAlg::{Direct, Rabenseifner, RecursiveDoubling, Shm};
        for (bytes, npes, hosts, on_mapped) in [
            (8, 4, RecursiveDoubling, RecursiveDoubling),
            (MAPPED_PAIR_MSG_MAX, 2, RecursiveDoubling, RecursiveDoubling),
            (MAPPED_PAIR_MSG_MAX + 1, 2, RecursiveDoubling, Shm),
            (NET_RD_MAX, 2, RecursiveDoubling, Shm),
            (NET_RD_MAX, 3, RecursiveDoubling, RecursiveDoubling),
            (NET_RD_MAX + 1, 2, Direct, Shm),
            (NET_RD_MAX + 1, 3, Rabenseifner, Shm),
            (NET_RABENSEIFNER_MAX, 4, Rabenseifner, Shm),
            (NET_RABENSEIFNER_MAX + 1, 4, Direct, Shm),
            (1 << 20, 4, Direct, Shm),
        ] {
            assert_eq!(
                auto.reduce_for(bytes, npes, Span::Hosts),
                hosts,
                "{bytes} B at {npes}"
            );
            assert_eq!(
                auto.reduce_for(bytes, npes, m),
                on_mapped,
                "{bytes} B at {npes}, mapped"
            );
        }
        assert_eq!(auto.sync_for(Span::World), SyncAlg::Hierarchical);
        assert_eq!(auto.sync_for(Span::Hosts), SyncAlg::Dissemination);
        let hier =
            Algorithms::from_config(&cfg("SHMEM_BARRIER_ALGORITHM", "hierarchical")).unwrap();
        assert_eq!(hier.sync_for(Span::Host), SyncAlg::Dissemination);
        assert_eq!(hier.sync_for(Span::World), SyncAlg::Hierarchical);
        let e = Algorithms::from_config(&cfg("SHMEM_BCAST_ALGORITHM", "ring")).unwrap_err();
        assert!(e.contains("not implemented yet"), "{e}");
        let e = Algorithms::from_config(&cfg("SHMEM_BARRIER_ALGORITHM", "magic")).unwrap_err();
        assert!(
            e.contains("SHMEM_BARRIER_ALGORITHM=magic: unknown algorithm"),
            "{e}"
        );
    }
}
