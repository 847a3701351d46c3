//! Starting UCX and connecting the peers: the settings UCX is loaded with, the segments
//! registered and published through the bootstrap's store, the peers' values read back.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};

use rshmem_boot::Bootstrap;
use rshmem_ucx::{LoadOptions, ProgressThread, Ucp, UcxError};

use super::{
    get_long, hex, put_long, unhex, CtxWorker, Peer, Raise, Segment, Ucx, HEAP, REGIONS,
    RUNTIME_AREA,
};
use crate::error::{InitError, Result};
use crate::transport::PUSH_CHUNK;

fn ucx_init_error(what: &str) -> impl FnOnce(UcxError) -> InitError + '_ {
    move |e| InitError::Transport(format!("{what}: {e}"))
}

/// UCX's TCP segment size unless the user sets one (see `Ucx::new`).
const TCP_SEGMENT: &str = "64k";

/// Whether `UCX_TLS` (unset: every transport) lets UCX use its shared-memory transports.
fn shm_transports_allowed(tls: Option<&str>) -> bool {
    transports_allowed(
        tls,
        &["sm", "shm", "mm", "posix", "sysv"],
        &["sm", "shm", "mm"],
    )
}

/// Whether the user set any of these environment variables.
fn any_set(vars: &[&str]) -> bool {
    vars.iter().any(|v| std::env::var_os(v).is_some())
}

/// Whether `UCX_TLS` lets UCX use TCP.
fn tcp_allowed(tls: Option<&str>) -> bool {
    transports_allowed(tls, &["tcp"], &["tcp"])
}

/// Whether `UCX_TLS` allows a transport it would name among `names` (listed) or
/// `excluded_by` (in a `^` list).
fn transports_allowed(tls: Option<&str>, names: &[&str], excluded_by: &[&str]) -> bool {
    let Some(tls) = tls.map(str::trim).filter(|t| !t.is_empty()) else {
        return true;
    };
    match tls.strip_prefix('^') {
        // An exclusion list: allowed unless it names them.
        Some(excluded) => !excluded.split(',').any(|t| excluded_by.contains(&t.trim())),
        None => tls
            .split(',')
            .any(|t| t.trim() == "all" || names.contains(&t.trim())),
    }
}

impl Ucx {
    /// Loads UCX, registers `segments` (indexed by [`Seg`](crate::transport::Seg); length
    /// 0: none), starts the service worker and its progress thread, and publishes what
    /// peers need. Every PE of a job that uses UCX calls it, then [`Ucx::connect`] after
    /// the store's fence.
    ///
    /// `one_host`: every PE of the job is on this host, so UCX needs no network device:
    /// it gets the loopback device alone (`UCX_NET_DEVICES=lo`) unless the user chose
    /// devices, and its unauthenticated TCP listeners are not reachable from outside.
    ///
    /// `maps_no_peer`: no other PE maps this PE's heap segment (every peer is reached through
    /// UCX). The segment (runtime area and heap, which hold nothing yet) is then allocated by
    /// UCX in place, where UCX may use its shared-memory transports: they reach memory UCX
    /// allocated one-sidedly (a put is a copy, an atomic a CPU atomic), while memory it only
    /// registered costs a system call per transfer and the target's progress per atomic.
    /// Where UCX cannot allocate it (its shared memory too small), it is registered as usual.
    pub(crate) fn start(
        boot: &dyn Bootstrap,
        library: &str,
        heap_off: usize,
        segments: [Segment; REGIONS],
        one_host: bool,
        maps_no_peer: bool,
    ) -> Result<Ucx, InitError> {
        let loopback = one_host && std::env::var_os("UCX_NET_DEVICES").is_none();
        let config: &[(&str, &str)] = if loopback {
            &[("NET_DEVICES", "lo")]
        } else {
            &[]
        };
        // Endpoints ask UCX to report a dead peer, which its shared-memory transports
        // (posix, sysv) offer only with their error handling on: without it a job
        // restricted to them (UCX_TLS=sm,self) has no route at all (UCS_ERR_UNREACHABLE).
        // Unless the user chose, turn it on where UCX_TLS lets them be used (UCX warns about
        // a setting no transport in use reads).
        let user_chose = any_set(&[
            "UCX_MM_ERROR_HANDLING",
            "UCX_POSIX_ERROR_HANDLING",
            "UCX_SYSV_ERROR_HANDLING",
        ]);
        let tls = std::env::var("UCX_TLS").ok();
        let mut if_known: Vec<(&str, &str)> = Vec::new();
        if !user_chose && shm_transports_allowed(tls.as_deref()) {
            if_known.push(("MM_ERROR_HANDLING", "y"));
        }
        // TCP sends bulk data in segments of 8 KiB by default, each one message the target's
        // progress handles: with PEs sharing cores a segment can cost a wake-up, and a 1 MiB
        // put took 1.2-3.8 ms where 64 KiB segments (the receive side's default size) take
        // 0.32-0.72, a 4-PE broadcast of 1 MiB 4.4-5.2 ms against 1.8-2.1 (`docs/results/
        // osu-ucx.md`); small messages are unchanged. UCX applies the name to each transport
        // that has it (TCP alone, in UCX 1.13) and warns where a worker opened none, so only
        // where TCP is allowed and the user chose neither the devices nor a segment size.
        let tcp_chosen = any_set(&[
            "UCX_TCP_TX_SEG_SIZE",
            "UCX_TCP_RX_SEG_SIZE",
            "UCX_NET_DEVICES",
        ]);
        if !tcp_chosen && tcp_allowed(tls.as_deref()) {
            if_known.push(("TX_SEG_SIZE", TCP_SEGMENT));
        }
        let ucp = Ucp::load_with(&LoadOptions {
            library,
            config,
            if_known: &if_known,
        })
        .map_err(|e| InitError::Transport(e.to_string()))?;
        let service = Arc::new(
            ucp.worker()
                .map_err(ucx_init_error("cannot create the UCX service worker"))?,
        );
        // Before the worker's address is published: no peer can send a raise yet.
        service
            .set_am_handler(Raise::ID, Raise::handler(&segments))
            .map_err(ucx_init_error("cannot set the UCX active-message handler"))?;
        let mut regions = Vec::new();
        let mut desc = Vec::new();
        // The heap segment in one allocation: [runtime area start, heap end).
        let allocated = if maps_no_peer && shm_transports_allowed(tls.as_deref()) {
            let (rt, heap) = (segments[RUNTIME_AREA], segments[HEAP]);
            debug_assert_eq!((rt.base, rt.end), (heap.base, heap.start));
            let (addr, len) = ((rt.base + rt.start) as *mut u8, heap.end - rt.start);
            // SAFETY: the segment is this PE's own page-aligned slot of the runtime's
            // reservation, which nobody else maps and which holds nothing yet.
            unsafe { ucp.mem_alloc_fixed(addr, len) }
                .ok()
                .and_then(|r| {
                    let key = r.pack_rkey().ok()?;
                    regions.push(r);
                    Some(hex(&key))
                })
        } else {
            None
        };
        let direct = allocated.is_some();
        for (i, seg) in segments.into_iter().enumerate() {
            let Segment {
                base,
                start,
                end,
                on_demand,
            } = seg;
            if let (Some(key), HEAP | RUNTIME_AREA) = (&allocated, i) {
                desc.push(format!("{base:x}:{key}"));
                continue;
            }
            if end <= start {
                desc.push(format!("{base:x}:"));
                continue;
            }
            let (addr, len) = ((base + start) as *mut u8, end - start);
            let r = if on_demand {
                ucp.mem_map_on_demand(addr, len)
            } else {
                ucp.mem_map(addr, len)
            }
            .map_err(ucx_init_error(
                "cannot register the symmetric memory with UCX",
            ))?;
            let key = r
                .pack_rkey()
                .map_err(ucx_init_error("cannot pack a UCX remote key"))?;
            desc.push(format!("{base:x}:{}", hex(&key)));
            regions.push(r);
        }
        let addr = service
            .address()
            .map_err(ucx_init_error("cannot read the UCX worker address"))?;
        let push_chunk = push_chunk_for(tls.as_deref(), !tcp_chosen && tcp_allowed(tls.as_deref()));
        desc.push(format!("push:{push_chunk}"));
        desc.push(format!("allocated:{}", u8::from(direct)));
        put_long(boot, "ucx-worker", &hex(&addr))?;
        put_long(boot, "ucx-segs", &desc.join(","))?;
        let progress = ProgressThread::start(Arc::clone(&service))
            .map_err(ucx_init_error("cannot start the UCX progress thread"))?;
        let driver = progress.driver();
        Ok(Ucx {
            peers: Box::new([]),
            workers: boxcar::Vec::new(),
            free: Mutex::new(Vec::new()),
            progress: Mutex::new(Some(progress)),
            _regions: regions,
            svc: CtxWorker {
                conns: Box::new([]),
                worker: service.clone(),
                issued: AtomicU64::new(0),
                flushed: AtomicU64::new(0),
            },
            _service: service,
            service: driver,
            ucp,
            heap_off,
            direct,
            cpu_atomics: atomics_are_cpu_atomics(),
            push_chunk,
            one_host,
            maps_every_pe: false,
            maps_peer: AtomicBool::new(false),
            raise_by_message: AtomicBool::new(true),
        })
    }

    /// Reads the published values of the PEs `remote` marks (after the store's fence).
    pub(crate) fn connect(
        &mut self,
        boot: &dyn Bootstrap,
        remote: &[bool],
    ) -> Result<(), InitError> {
        let mut peers = Vec::with_capacity(remote.len());
        let mut every_allocated = true;
        for (pe, &r) in remote.iter().enumerate() {
            if !r {
                peers.push(None);
                continue;
            }
            let bad = |what: &str| {
                InitError::Topology(format!("PE {pe} published a malformed UCX {what}"))
            };
            let worker =
                unhex(&get_long(boot, pe, "ucx-worker")?).ok_or_else(|| bad("worker address"))?;
            let segs = get_long(boot, pe, "ucx-segs")?;
            let mut rkeys: [Vec<u8>; REGIONS] = Default::default();
            let mut base = [0u64; REGIONS];
            let mut fields = segs.split(',');
            for (i, d) in fields.by_ref().enumerate().take(REGIONS) {
                let (b, k) = d.split_once(':').ok_or_else(|| bad("segment"))?;
                base[i] = u64::from_str_radix(b, 16).map_err(|_| bad("segment base"))?;
                rkeys[i] = unhex(k).ok_or_else(|| bad("remote key"))?;
            }
            let chunk: usize = fields
                .next()
                .and_then(|f| f.strip_prefix("push:"))
                .and_then(|v| v.parse().ok())
                .filter(|&c| c > 0)
                .ok_or_else(|| bad("chunk size"))?;
            // Receivers count the chunks: every PE takes the smallest any PE can send whole.
            self.push_chunk = self.push_chunk.min(chunk);
            let allocated = match fields.next().and_then(|f| f.strip_prefix("allocated:")) {
                Some("1") => true,
                Some("0") => false,
                _ => return Err(bad("allocation flag")),
            };
            every_allocated &= allocated;
            peers.push(Some(Peer {
                worker,
                rkeys,
                base,
                left: AtomicBool::new(false),
                finalized: AtomicBool::new(false),
            }));
        }
        // One host, and UCX allocated every PE's heap segment, which it does only where
        // its shared-memory transports may reach it (`Ucx::start`): they map it. Every PE
        // reads the same published flags to the same answer.
        self.maps_every_pe = self.one_host && every_allocated && remote.iter().all(|&r| r);
        if self.maps_every_pe {
            // Shared memory carries the messages: no TCP segment to fit.
            self.push_chunk = PUSH_CHUNK;
        }
        self.svc.conns = peers.iter().map(|_| OnceLock::new()).collect();
        self.peers = peers.into_boxed_slice();
        Ok(())
    }

    /// Whether UCX maps every PE's memory into this process (one host, every heap
    /// segment allocated by UCX where its shared-memory transports reach it): collectives
    /// then choose as for [`Span::Mapped`](crate::team::Span::Mapped).
    pub(crate) fn maps_every_pe(&self) -> bool {
        self.maps_every_pe
    }

    /// Whether UCX allocated this PE's heap segment, so that its shared-memory transports
    /// reach it one-sidedly (for `SHMEM_INFO`).
    pub(crate) fn allocated_heap(&self) -> bool {
        self.direct
    }

    /// Bytes of a chunk pushed in one active message, the same on every PE once
    /// [`Ucx::connect`] has read them all ([`push_chunk_for`]).
    pub(crate) fn push_chunk(&self) -> usize {
        self.push_chunk
    }

    /// Whether UCX's atomics are CPU atomics ([`atomics_are_cpu_atomics`]).
    pub(crate) fn cpu_atomics(&self) -> bool {
        self.cpu_atomics
    }
}

/// Room left in a TCP segment for the headers around a pushed chunk: UCX's (under 32 B)
/// and [`Raise`]'s with its riders (88 B).
const SEGMENT_HEADROOM: usize = 512;

/// The chunk this PE would push in one active message ([`Ucx::push_chunk`]). Over TCP a
/// message that fits one segment is handed to the handler from UCX's receive buffer; a
/// larger one is first reassembled, one more copy of every byte. So where TCP carries the
/// messages (no RDMA adapter here) and the segment size is known (`we_set_segment`: the
/// 64 KiB `Ucx::start` sets, else the user's `UCX_TCP_TX_SEG_SIZE`) and at least 32 KiB,
/// a chunk fills one segment. OSU broadcast at 2 PEs over TCP, 4 interleaved rounds, us
/// (OSHMEM over the same UCX): 1 MiB 204-225 -> 160-203 (147-182), 512 KiB 109-118 ->
/// 89-108 (95-114); 96 and 128 KiB chunks (two segments) measured between the two.
fn push_chunk_for(tls: Option<&str>, we_set_segment: bool) -> usize {
    if !tcp_allowed(tls) || rdma_adapter_present() {
        return PUSH_CHUNK;
    }
    let segment = if we_set_segment {
        parse_ucx_size(TCP_SEGMENT)
    } else {
        std::env::var("UCX_TCP_TX_SEG_SIZE")
            .ok()
            .and_then(|v| parse_ucx_size(&v))
    };
    match segment {
        Some(s) if s >= 32 << 10 => (s - SEGMENT_HEADROOM).min(PUSH_CHUNK),
        _ => PUSH_CHUNK,
    }
}

/// A size as UCX writes them (`65536`, `64k`, `64kb`, `1M`); `None` for `inf`, `auto` or
/// anything else.
fn parse_ucx_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let v = match v.strip_suffix(['b', 'B']) {
        Some(r) if r.ends_with(|c: char| c.is_ascii_alphabetic()) => r,
        _ => v,
    };
    rshmem_util::config::parse_size(v).ok()
}

/// Whether every atomic UCX applies is a CPU atomic, so that this process's own CPU
/// atomics on the same words are atomic with them: `UCX_ATOMIC_MODE=cpu`, or (unless the
/// user asked for `device`) no RDMA adapter on this host. Device atomics come from RDMA
/// adapters alone; without one, UCX's atomics are its shared-memory transports' CPU
/// atomics or active messages that the target applies with CPU atomics (`amo_sw.c`). An
/// adapter's own atomics are not atomic with the CPU's (UCX's `guess` mode picks them as
/// soon as an adapter offers them), so with one present every atomic keeps going through
/// UCX.
fn atomics_are_cpu_atomics() -> bool {
    match std::env::var("UCX_ATOMIC_MODE")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        Some(m) if m.eq_ignore_ascii_case("cpu") => true,
        Some(m) if m.eq_ignore_ascii_case("device") => false,
        _ => !rdma_adapter_present(),
    }
}

/// Whether the kernel lists an RDMA adapter (InfiniBand, RoCE, iWARP, EFA...): each has an
/// entry in `/sys/class/infiniband`. Unreadable for another reason than absence: assume one.
fn rdma_adapter_present() -> bool {
    match std::fs::read_dir("/sys/class/infiniband") {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

impl Drop for Ucx {
    /// Closes every endpoint, destroys the workers and stops the progress thread; the
    /// memory is deregistered and UCX released as the fields drop (after the finalize
    /// barrier, or when init fails).
    fn drop(&mut self) {
        // The thread first: it holds and drives the workers, which drop with their field.
        if let Some(t) = self
            .progress
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_ucx_size, push_chunk_for, shm_transports_allowed, tcp_allowed};
    use crate::transport::PUSH_CHUNK;

    #[test]
    fn ucx_sizes_parse_as_ucx_writes_them() {
        for (v, n) in [
            ("65536", 65536),
            ("64k", 65536),
            ("64K", 65536),
            ("64kb", 65536),
            ("1M", 1 << 20),
            (" 8kB ", 8192),
        ] {
            assert_eq!(parse_ucx_size(v), Some(n), "{v:?}");
        }
        for v in ["inf", "auto", "", "k", "64q"] {
            assert_eq!(parse_ucx_size(v), None, "{v:?}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)] // reads /sys/class/infiniband
    fn pushed_chunks_fill_one_tcp_segment_where_tcp_carries_them() {
        let rdma = super::rdma_adapter_present();
        let ours = push_chunk_for(Some("tcp"), true);
        if rdma {
            assert_eq!(ours, PUSH_CHUNK, "an RDMA adapter's segments are not TCP's");
        } else {
            assert_eq!(ours, (64 << 10) - super::SEGMENT_HEADROOM);
        }
        assert_eq!(push_chunk_for(Some("sm,self"), false), PUSH_CHUNK);
        assert_eq!(push_chunk_for(Some("^tcp"), true), PUSH_CHUNK);
    }

    #[test]
    fn which_ucx_tls_lists_allow_tcp() {
        for tls in [
            None,
            Some("all"),
            Some("tcp"),
            Some("sm,self,tcp"),
            Some("^sm"),
        ] {
            assert!(tcp_allowed(tls), "{tls:?}");
        }
        for tls in [
            Some("sm,self"),
            Some("^tcp"),
            Some("rc,ud"),
            Some("tcp_sockcm"),
        ] {
            assert!(!tcp_allowed(tls), "{tls:?}");
        }
    }

    #[test]
    fn which_ucx_tls_lists_allow_shared_memory() {
        for tls in [
            None,
            Some(""),
            Some("all"),
            Some("sm,self"),
            Some("tcp,posix"),
            Some("^tcp"),
        ] {
            assert!(shm_transports_allowed(tls), "{tls:?}");
        }
        for tls in [Some("tcp"), Some("self,tcp"), Some("^sm"), Some("rc,ud")] {
            assert!(!shm_transports_allowed(tls), "{tls:?}");
        }
    }
}
