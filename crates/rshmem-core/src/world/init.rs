//! `init` in named phases, each a function of what the phases before it found:
//! [`connect`], [`publish_segment`], [`locate`], [`map_peers`], [`wait_policy`],
//! [`start_network`], then [`assemble`] builds the runtime and publishes every layer.

use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rshmem_boot::Bootstrap;
use rshmem_util::config::{show_size, BindTo};
use rshmem_util::{wait, Config};

use super::topology::{
    choose_network, choose_routes, host_numbers, host_teams, same_network, shm_groups,
    world_is_hierarchical,
};
use super::{exit, ENDED, INIT_DEPTH, INIT_LOCK, INIT_PE, LAUNCHED, SYMMETRIC_DATA};
use crate::algo::Algorithms;
use crate::ctx::{Contexts, Ctx};
use crate::engine::Engine;
use crate::error::{At, InitError};
use crate::heap::Heap;
use crate::runtime::lock_mode::{self, LockModes};
use crate::runtime::{
    self, sys, try_runtime, GlobalsOff, Layout, Runtime, ThreadLevel, SLOT_ALIGN, SPEC_VERSION,
    VENDOR_STRING,
};
use crate::team::registry::{Placement, Teams};
use crate::team::Members;
use crate::transport::ofi::Ofi;
use crate::transport::shm::{SegMap, Shm};
use crate::transport::ucx::{self, Ucx};
use crate::transport::{Fabric, Network, Route};

type InitResult<T> = std::result::Result<T, InitError>;

fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> InitError {
    let what = what.into();
    move |err| InitError::Os { what, err }
}

/// `shmem_init_thread`: starts the runtime (collective over all PEs) and returns the thread
/// level provided. Nested calls only count (OpenSHMEM 1.6): the runtime ends with the
/// last of as many `finalize` calls, or at exit (see [`super::finalize`]). Starting again
/// after that works for a single PE started without a launcher and without shared globals;
/// otherwise it is refused with [`InitError::Reinit`] (the launcher has released the PE).
pub fn init(requested: ThreadLevel) -> InitResult<ThreadLevel> {
    let _g = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    crate::error::set_fatal_hook(runtime::fatal);
    if let Some(rt) = try_runtime() {
        INIT_DEPTH.fetch_add(1, Ordering::Relaxed);
        return Ok(rt.thread_level);
    }
    if ENDED.load(Ordering::Relaxed) {
        return Err(InitError::Reinit);
    }
    let job = connect()?;
    let (seg, files) = publish_segment(&job)?;
    let found = locate(&job)?;
    let mapped = map_peers(&job, &seg, &files, &found)?;
    // Before a barrier, which waits for the slowest PE anyway.
    sys::prefault_own_code(PREFAULT_MAX);
    // Nobody may drop its files before every peer has mapped them.
    job.boot.barrier()?;
    drop(files);
    let (machine_rank, machine_pes) = machine_rank(&job, &found);
    let oversubscribed = wait_policy(&job, machine_pes);
    let spread = !oversubscribed && machine_pes > 1 && job.cfg.bind_to != BindTo::None;
    let net = start_network(&job, &seg, &found, &mapped)?;
    let level = requested.min(ThreadLevel::Multiple);
    assemble(job, seg, found, mapped, net, oversubscribed, level)?;
    if spread {
        // Last, after the launcher's and the network's wake-ups, which pull threads together.
        sys::start_on_cpu(machine_rank);
    }
    INIT_DEPTH.store(1, Ordering::Relaxed);
    exit::register_at_exit();
    Ok(level)
}

/// The most read-only bytes of the object holding the library's code that init maps
/// ([`sys::prefault_own_code`]): the C library's are 11 MiB; a program the Rust API is
/// linked into may be much larger, and then keeps its pages to first use.
const PREFAULT_MAX: usize = 64 << 20;

/// What [`connect`] found: the configuration and the launcher's connection.
struct Job {
    cfg: Config,
    algs: Algorithms,
    boot: Box<dyn Bootstrap>,
    me: usize,
    npes: usize,
    /// Whether the executable's globals are to be made symmetric, and the program's
    /// threads at init (counted before the bootstrap starts its own).
    want_data: bool,
    threads: usize,
}

/// Phase 1: reads the configuration and connects to the launcher.
fn connect() -> InitResult<Job> {
    let cfg = Config::from_env()?;
    let algs = Algorithms::from_config(&cfg).map_err(InitError::Algorithm)?;
    LAUNCHED.store(rshmem_boot::launched(), Ordering::Relaxed);
    // The program's threads, counted before the bootstrap starts its own (the PMIx library's
    // progress thread, which never touches the executable's globals).
    let want_data = SYMMETRIC_DATA.load(Ordering::Relaxed) && cfg.symmetric_data;
    let threads = if want_data {
        sys::thread_count().unwrap_or(1)
    } else {
        1
    };
    let boot = rshmem_boot::from_env()?;
    let (me, npes) = (boot.rank(), boot.size());
    INIT_PE.store(me, Ordering::Relaxed);
    // One PE is one host whatever the variable says: a setting for multi-PE runs (the
    // test suite's simulated hosts) leaves single-PE programs alone.
    if npes > 1 && cfg.virtual_hosts > npes {
        return Err(InitError::Config(rshmem_util::ConfigError {
            var: "SHMEM_VIRTUAL_HOSTS".into(),
            value: cfg.virtual_hosts.to_string(),
            reason: format!("must be at most the number of PEs ({npes}): every virtual host holds at least one PE"),
        }));
    }
    Ok(Job {
        cfg,
        algs,
        boot,
        me,
        npes,
        want_data,
        threads,
    })
}

/// What [`publish_segment`] made: this PE's segment and shared globals.
struct OwnSegment {
    layout: Layout,
    heap_len: usize,
    /// The segment's length, and the distance between two PEs' segments in the
    /// reservation.
    slot_len: usize,
    stride: usize,
    /// The executable's globals (start, length, offset in the executable), if found,
    /// and those actually moved onto a shared file.
    exe_data: Option<(usize, usize, usize)>,
    data: Option<(usize, usize, usize)>,
}

/// The shared files of [`OwnSegment`], kept open until every peer has mapped them.
struct SegmentFiles {
    heap: OwnedFd,
    _data: Option<OwnedFd>,
}

/// Phase 2: creates this PE's segment (runtime words, then the heap, in one sparse shared
/// file), moves the executable's globals onto a shared file where asked, and publishes
/// both (and this host's key) through the launcher.
fn publish_segment(job: &Job) -> InitResult<(OwnSegment, SegmentFiles)> {
    let (cfg, boot, me) = (&job.cfg, job.boot.as_ref(), job.me);
    let max_teams = cfg.teams_max;
    let layout = Layout::new(max_teams, job.npes);
    // The table bounds the size; checked all the same, as a wrapped size maps nothing.
    let too_large = || {
        InitError::Topology(format!(
            "SHMEM_SYMMETRIC_SIZE={} plus the runtime area of {} (sized by SHMEM_TEAMS_MAX={max_teams}) overflows the address space",
            cfg.symmetric_size,
            show_size(layout.size),
        ))
    };
    let heap_len = cfg
        .symmetric_size
        .checked_next_multiple_of(4096)
        .ok_or_else(too_large)?;
    let slot_len = layout.size.checked_add(heap_len).ok_or_else(too_large)?;
    let stride = slot_len
        .checked_next_multiple_of(SLOT_ALIGN)
        .ok_or_else(too_large)?;
    let file = sys::shared_file(&format!("rshmem-{}-{me}", boot.job_id()), slot_len).map_err(
        os(format!(
            "cannot create the symmetric heap of SHMEM_SYMMETRIC_SIZE={} (plus a runtime area of {} for SHMEM_TEAMS_MAX={max_teams})",
            show_size(cfg.symmetric_size),
            show_size(layout.size),
        )),
    )?;
    boot.put(
        "seg",
        &format!("{}:{}:{slot_len}", std::process::id(), file.as_raw_fd()),
    )?;
    boot.put("host", &sys::host_key())?;
    lock_mode::offer(boot, cfg)?;
    // The executable's globals and statics, moved onto a shared file (C programs).
    // The move below copies, then remaps: a write another thread made in between would be
    // lost without a trace. So with other threads running (a Python interpreter's, an
    // OpenMP pool started early) nothing is moved; the PEs then agree in `map_peers` to go
    // without symmetric globals, and a global used in RMA fails naming the routine.
    let exe_data = if job.want_data {
        sys::executable_data()
    } else {
        None
    };
    let data = exe_data.filter(|_| job.threads == 1);
    let data_file = match data {
        Some((start, len, rel)) => {
            let f = sys::share_in_place(&format!("rshmem-data-{}-{me}", boot.job_id()), start, len)
                .map_err(os("cannot share the executable's global variables (set SHMEM_SYMMETRIC_DATA=0 to go without)"))?;
            boot.put(
                "data",
                &format!("{}:{}:{len}:{rel}", std::process::id(), f.as_raw_fd()),
            )?;
            Some(f)
        }
        None if job.threads > 1 => {
            boot.put("data", &format!("threads:{}", job.threads))?;
            None
        }
        None => {
            boot.put("data", "none")?;
            None
        }
    };
    boot.fence()?;
    let segment = OwnSegment {
        layout,
        heap_len,
        slot_len,
        stride,
        exe_data,
        data,
    };
    let files = SegmentFiles {
        heap: file,
        _data: data_file,
    };
    Ok((segment, files))
}

/// What [`locate`] found: where every PE is and how this PE reaches it.
struct Found {
    /// Every PE's host key, its real host and its (possibly virtual) host.
    keys: Vec<String>,
    real_host: Vec<usize>,
    host_of: Vec<usize>,
    routes: Vec<Route>,
    world_hier: bool,
    /// Whether the locks steal (every PE's wish, agreed).
    lock_modes: LockModes,
}

/// Phase 3: every PE's host, its shared-memory group and the route to it.
fn locate(job: &Job) -> InitResult<Found> {
    let (cfg, boot, me, npes) = (&job.cfg, job.boot.as_ref(), job.me, job.npes);
    // Two PEs share a host when the launcher placed them on one node (where it says) and
    // their host keys match: the key alone would take two nodes with one hostname for
    // one, and the node alone would take containers that share no /dev/shm for one.
    let nodes = boot.nodes().filter(|n| n.len() == npes);
    let keys = (0..npes)
        .map(|pe| boot.get(pe, "host"))
        .collect::<std::result::Result<Vec<_>, rshmem_boot::BootError>>()?;
    let lock_modes = lock_mode::agree(boot, &keys)?;
    let hosts: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(pe, key)| match nodes {
            Some(n) => format!("{}#{key}", n[pe]),
            None => key.clone(),
        })
        .collect();
    let real_host = host_numbers(&hosts, 0);
    let host_of = host_numbers(&hosts, cfg.virtual_hosts);
    let group = shm_groups(cfg.transport, &real_host, &host_of);
    let routes = choose_routes(cfg.transport, &group, me)?;
    let world_hier = world_is_hierarchical(&group, &host_of);
    if cfg.fault_tolerant && routes.iter().any(|r| *r != Route::Shm) {
        return Err(InitError::Transport(format!(
            "SHMEM_FAULT_TOLERANT=1: PE {me} reaches some PEs through the network (UCX or libfabric), where a dead PE is not detected yet; fault-tolerant mode needs every PE on one host over shared memory (unset SHMEM_FAULT_TOLERANT, or use SHMEM_TRANSPORT=shm)"
        )));
    }
    Ok(Found {
        keys,
        real_host,
        host_of,
        routes,
        world_hier,
        lock_modes,
    })
}

/// What [`map_peers`] mapped.
struct Mapped {
    /// Every PE's segment at `base + pe * stride` (the network's peers' left unmapped).
    resv: sys::Reservation,
    /// The pids of the PEs on shared memory, probed for failures (`ft`); 0 = not probed.
    pids: Vec<u32>,
    /// Every local peer's globals, and the reservation that holds them with this PE's
    /// own (start, length).
    data_map: SegMap,
    data_resv: Option<(sys::Reservation, usize, usize)>,
    globals_off: Option<GlobalsOff>,
}

/// Phase 4: reserves the address space of every PE's segment and maps those of the PEs
/// on shared memory, and their globals.
fn map_peers(
    job: &Job,
    seg: &OwnSegment,
    files: &SegmentFiles,
    found: &Found,
) -> InitResult<Mapped> {
    let (cfg, boot, me, npes) = (&job.cfg, job.boot.as_ref(), job.me, job.npes);
    let (slot_len, stride, routes) = (seg.slot_len, seg.stride, &found.routes);
    let max_teams = cfg.teams_max;
    let total = stride.checked_mul(npes).ok_or_else(|| {
        InitError::Topology(format!(
            "{npes} PEs x {stride} bytes (SHMEM_SYMMETRIC_SIZE plus the runtime area sized by SHMEM_TEAMS_MAX={max_teams}) overflows the address space"
        ))
    })?;
    let resv = sys::Reservation::new(total, SLOT_ALIGN).map_err(os(format!(
        "cannot reserve {} of address space for {npes} symmetric heaps of SHMEM_SYMMETRIC_SIZE={} and {npes} runtime areas of {} (sized by SHMEM_TEAMS_MAX={max_teams}; lower either variable)",
        show_size(total),
        show_size(cfg.symmetric_size),
        show_size(seg.layout.size),
    )))?;
    let mut pids = vec![0u32; npes];
    pids[me] = std::process::id();
    for (pe, route) in routes.iter().enumerate() {
        if pe != me && *route != Route::Shm {
            continue;
        }
        if pe == me {
            resv.map_shared(pe * stride, slot_len, &files.heap)
                .map_err(os("cannot map the symmetric heap"))?;
        } else {
            let published = boot.get(pe, "seg")?;
            let bad = || {
                InitError::Topology(format!(
                    "PE {pe} published a malformed segment {published:?}"
                ))
            };
            let mut it = published.split(':').map(str::parse::<u64>);
            let (Some(Ok(pid)), Some(Ok(fd)), Some(Ok(len))) = (it.next(), it.next(), it.next())
            else {
                return Err(bad());
            };
            if len as usize != slot_len {
                return Err(InitError::Topology(format!(
                    "PE {pe} has a symmetric heap of {len} bytes but PE {me} has {slot_len}: every PE must see the same SHMEM_SYMMETRIC_SIZE"
                )));
            }
            let peer = sys::open_peer_file(pid as u32, fd as i32).map_err(os(format!(
                "cannot open the symmetric heap of PE {pe} (pid {pid})"
            )))?;
            pids[pe] = pid as u32;
            resv.map_shared(pe * stride, slot_len, &peer)
                .map_err(os(format!("cannot map the symmetric heap of PE {pe}")))?;
        }
    }
    // Each local PE's published globals, read once: globals are symmetric only if every
    // local PE could move its own.
    let peer_data = if job.want_data {
        (0..npes)
            .filter(|&p| p == me || routes[p] == Route::Shm)
            .map(|pe| Ok((pe, boot.get(pe, "data")?)))
            .collect::<std::result::Result<Vec<_>, rshmem_boot::BootError>>()?
    } else {
        Vec::new()
    };
    let busy = peer_data
        .iter()
        .find_map(|(pe, d)| Some((pe, d.strip_prefix("threads:")?)));
    // Said when a global is used in communication (`Runtime::not_symmetric`), not here:
    // many programs start threads early (NumPy's import does) and never need globals.
    let globals_off = busy.and_then(|(pe, count)| {
        let (start, len, _) = seg.exe_data?;
        Some(GlobalsOff {
            why: format!("PE {pe} had {count} threads running at shmem_init"),
            start,
            len,
            told: AtomicBool::new(false),
        })
    });
    let mut data_map = SegMap::NONE;
    let mut data_resv = None;
    let data = if busy.is_some() { None } else { seg.data };
    if let Some((start, len, rel)) = data {
        let dstride = len.next_multiple_of(4096);
        let r = sys::Reservation::new(dstride * npes, 4096).map_err(os(
            "cannot reserve address space for the PEs' global variables",
        ))?;
        for (pe, d) in &peer_data {
            let pe = *pe;
            let parts: Vec<u64> = d.split(':').filter_map(|x| x.parse().ok()).collect();
            if d.as_str() == "none" {
                return Err(InitError::Topology(format!(
                    "PE {pe} found no global variables to share but PE {me} shares {len} bytes: every PE must run the same program with the same SHMEM_SYMMETRIC_DATA"
                )));
            }
            if parts.len() != 4 || parts[2] as usize != len || parts[3] as usize != rel {
                return Err(InitError::Topology(format!(
                    "PE {pe} runs a different executable (its global data is {d:?}; PE {me} has {len} bytes at +{rel:#x}): every PE must run the same program"
                )));
            }
            let peer = sys::open_peer_file(parts[0] as u32, parts[1] as i32)
                .map_err(os(format!("cannot open the global data of PE {pe}")))?;
            r.map_shared(pe * dstride, len, &peer)
                .map_err(os(format!("cannot map the global data of PE {pe}")))?;
        }
        data_map = SegMap {
            base: r.base(),
            stride: dstride,
            len,
        };
        data_resv = Some((r, start, len));
    }
    Ok(Mapped {
        resv,
        pids,
        data_map,
        data_resv,
        globals_off,
    })
}

/// Phase 5: the wait policy, from how many PEs share this machine's cores (simulated
/// hosts included: they compete for the cores whatever host they say they are). Returns
/// whether the machine is oversubscribed.
fn wait_policy(job: &Job, machine_pes: usize) -> bool {
    // The job's CPUs, not this PE's: oshrun may have bound it to one core.
    let oversubscribed = machine_pes > wait::job_cpus();
    let mut policy = if oversubscribed {
        wait::Policy::OVERSUBSCRIBED
    } else {
        wait::Policy::DEDICATED
    };
    policy.spin = job.cfg.wait_spin.unwrap_or(policy.spin);
    policy.yield_for = job.cfg.wait_yield.unwrap_or(policy.yield_for);
    wait::set_policy(policy);
    oversubscribed
}

/// This PE's rank among the job's PEs on this machine (simulated hosts included), and
/// their count.
fn machine_rank(job: &Job, found: &Found) -> (usize, usize) {
    let keys = &found.keys;
    let mine = sys::machine_of(&keys[job.me]);
    let here = |p: &usize| sys::machine_of(&keys[*p]) == mine;
    (
        (0..job.me).filter(here).count(),
        (0..job.npes).filter(here).count(),
    )
}

/// What [`start_network`] started, and the descriptors open before it (closed on exec
/// after, so a program's children do not inherit the network's).
struct Net {
    network: Option<Network>,
    fds_before: Option<Vec<i32>>,
}

/// Phase 6: the network, when a peer needs it: every PE of such a job starts it (each has
/// a peer on another host, or SHMEM_TRANSPORT=ucx|ofi), publishes, and reads back.
fn start_network(job: &Job, seg: &OwnSegment, found: &Found, mapped: &Mapped) -> InitResult<Net> {
    let (cfg, boot, me, npes) = (&job.cfg, job.boot.as_ref(), job.me, job.npes);
    let routes = &found.routes;
    if !routes.contains(&Route::Net) {
        return Ok(Net {
            network: None,
            fds_before: None,
        });
    }
    let fds_before = Some(sys::open_fds());
    let use_ofi = choose_network(cfg)?;
    boot.put("net", if use_ofi { "ofi" } else { "ucx" })?;
    let slot = mapped.resv.base() as usize + me * seg.stride;
    let (dstart, dlen) = mapped.data_resv.as_ref().map_or((0, 0), |d| (d.1, d.2));
    let region = |base, start, end, on_demand| ucx::Segment {
        base,
        start,
        end,
        on_demand,
    };
    let size = seg.layout.size;
    let regions = [
        region(slot, size, seg.slot_len, false),
        region(dstart, 0, dlen, false),
        region(slot, 0, size, true),
    ];
    let one_host = found.real_host.iter().all(|&h| h == 0);
    let maps_no_peer = routes
        .iter()
        .enumerate()
        .all(|(p, r)| p == me || *r != Route::Shm);
    // Every PE, those on shared memory and this one included: atomics to all of them
    // go through the network where its atomics are not CPU atomics (one atomicity domain).
    let remote = vec![true; npes];
    let network = if use_ofi {
        let mut o = Ofi::start(boot, &cfg.ofi_library, size, regions)?;
        boot.fence()?;
        same_network(boot, me, "ofi")?;
        o.connect(boot, &remote)?;
        Network::Ofi(o)
    } else {
        let mut u = Ucx::start(
            boot,
            &cfg.ucx_library,
            size,
            regions,
            one_host,
            maps_no_peer,
        )?;
        boot.fence()?;
        same_network(boot, me, "ucx")?;
        u.connect(boot, &remote)?;
        Network::Ucx(u)
    };
    Ok(Net {
        network: Some(network),
        fds_before,
    })
}

/// Phase 7: builds the runtime, wires the default context, and publishes every layer's
/// state, the runtime last (see `runtime::published`).
fn assemble(
    job: Job,
    seg: OwnSegment,
    found: Found,
    mapped: Mapped,
    net: Net,
    oversubscribed: bool,
    thread_level: ThreadLevel,
) -> InitResult<()> {
    let (me, npes, cfg) = (job.me, job.npes, job.cfg);
    let base = mapped.resv.base();
    let local: Vec<usize> = (0..npes)
        .filter(|&p| p == me || found.routes[p] == Route::Shm)
        .collect();
    let shared = if local.len() == npes {
        Members::Strided {
            start: 0,
            stride: 1,
            size: npes,
        }
    } else {
        Members::List(local.into())
    };
    let (host, leaders) = host_teams(&found.host_of, me);
    let placement = Placement {
        me,
        npes,
        shared,
        host,
        leaders,
        world_hier: found.world_hier,
        max_teams: cfg.teams_max,
    };
    let engine = Engine::new(
        cfg.copy_engine_lanes,
        cfg.copy_engine_threshold,
        cfg.copy_engine_piece,
    );
    let segments = SegMap {
        base,
        stride: seg.stride,
        len: seg.slot_len,
    };
    let fabric = Fabric::new(
        me,
        found.routes.into_boxed_slice(),
        Shm::new(segments, mapped.data_map),
        engine,
        net.network,
    );
    let data = mapped.data_resv.as_ref().map_or((0, 0), |d| (d.1, d.2));
    let rt = Box::new(Runtime {
        me,
        npes,
        oversubscribed,
        lock_modes: found.lock_modes,
        thread_level,
        my_base: base as usize + me * seg.stride,
        heap_off: seg.layout.size,
        heap_len: seg.heap_len,
        layout: seg.layout,
        fabric,
        data_start: data.0,
        data_len: data.1,
        globals_off: mapped.globals_off,
        _data_resv: mapped.data_resv.map(|d| d.0),
        heap: Mutex::new(Heap::new(seg.heap_len)),
        live: crate::ft::Liveness::new(mapped.pids),
        _resv: mapped.resv,
        cfg,
        boot: job.boot,
    });
    let default = Ctx::default_ctx().state();
    if let Err(e) = rt.fabric.wire_up(default).at("shmem_init") {
        rt.fabric.release_ctx(default);
        return Err(InitError::Transport(e.to_string()));
    }
    if let Some(before) = net.fds_before {
        sys::close_on_exec_since(&before);
    }
    job.algs.publish();
    Contexts::publish();
    Teams::new(placement).publish();
    if me == 0 {
        print_banner(&rt);
    }
    crate::profile::start(rt.cfg.profile);
    runtime::publish(rt);
    Ok(())
}

/// `SHMEM_VERSION` / `SHMEM_INFO`'s lines, and warnings for unknown `SHMEM_*` variables.
fn print_banner(rt: &Runtime) {
    let mut err = std::io::stderr().lock();
    if rt.cfg.version || rt.cfg.info {
        let _ = writeln!(
            err,
            "{VENDOR_STRING} {} (OpenSHMEM {}.{}), {} PEs",
            env!("CARGO_PKG_VERSION"),
            SPEC_VERSION.0,
            SPEC_VERSION.1,
            rt.npes
        );
    }
    if rt.cfg.info {
        let mapped = rt.fabric.mapped_count();
        let teams = rt.teams();
        let _ = writeln!(
            err,
            "topology: PE {} reaches {mapped} PE(s) through shared memory and {} through {}; HOST has {} PE(s); WORLD collectives {}",
            rt.me,
            rt.npes - mapped,
            rt.fabric.network_name().unwrap_or("the network"),
            teams.host.n_pes(),
            if teams.world_hier {
                "compose HOST and LEADERS"
            } else {
                "are flat"
            }
        );
        match rt.fabric.ucx_allocated_heap() {
            Some(true) => {
                let _ = writeln!(err, "UCX: PE {} has its heap allocated by UCX (reached one-sidedly by UCX's shared-memory transports)", rt.me);
                if rt.fabric.network_maps_every_pe() {
                    let _ = writeln!(err, "UCX: every PE's heap is allocated by UCX on this one host: collectives choose for memory the network maps");
                }
            }
            Some(false) => {
                let _ = writeln!(err, "UCX: PE {} has its heap registered with UCX", rt.me);
            }
            None => {}
        }
        if rt.fabric.has_network() {
            let _ = if rt.fabric.atomics_through_network() {
                writeln!(err, "atomics: PE {} sends every atomic through {}, to PEs it maps too (one atomicity domain: the network's atomics are not known to be CPU atomics)", rt.me, rt.fabric.network_name().unwrap_or("the network"))
            } else {
                writeln!(err, "atomics: PE {} applies atomics to memory it maps with CPU atomics (UCX's atomics are CPU atomics here: no RDMA adapter, or UCX_ATOMIC_MODE=cpu)", rt.me)
            };
        }
        if let Some(d) = rt.fabric.ofi_description() {
            let _ = writeln!(err, "{d}");
        }
        let _ = writeln!(err, "rshmem configuration:\n{}", rt.cfg.describe());
    }
    let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    for w in Config::unknown_vars(vars.iter().map(String::as_str)) {
        let _ = writeln!(err, "rshmem: warning: {w}");
    }
}
