//! Where the PEs are: hosts, shared-memory groups, routes and the network, from what the
//! launcher and each PE published at init. Decided from job-wide facts only, so every PE
//! decides alike.

use rshmem_util::config::{NetworkChoice, TransportMode};
use rshmem_util::Config;

use crate::error::InitError;
use crate::runtime::sys;
use crate::team::Members;
use crate::transport::Route;

/// Each PE's host as a number, from the PEs' host names, or from `virtual_hosts`
/// contiguous blocks of PEs when it is non-zero.
pub(crate) fn host_numbers(hosts: &[String], virtual_hosts: usize) -> Vec<usize> {
    let n = hosts.len();
    if virtual_hosts > 0 {
        let k = virtual_hosts.min(n);
        return (0..n).map(|p| p * k / n).collect();
    }
    let mut names: Vec<&str> = Vec::new();
    hosts
        .iter()
        .map(|h| match names.iter().position(|x| x == h) {
            Some(i) => i,
            None => {
                names.push(h);
                names.len() - 1
            }
        })
        .collect()
}

/// The HOST team of `me` and the LEADERS team (first PE of each host).
pub(crate) fn host_teams(host_of: &[usize], me: usize) -> (Members, Members) {
    let n = host_of.len();
    let mine: Vec<usize> = (0..n).filter(|&p| host_of[p] == host_of[me]).collect();
    let leaders: Vec<usize> = (0..n)
        .filter(|&p| p == 0 || !host_of[..p].contains(&host_of[p]))
        .collect();
    (Members::List(mine.into()), Members::List(leaders.into()))
}

/// Which PEs share memory under `mode`: PEs with equal numbers map each other, from each
/// PE's real host and its (possibly virtual) host. Under `ucx` and `ofi` no two PEs do.
pub(crate) fn shm_groups(
    mode: TransportMode,
    real_host: &[usize],
    host_of: &[usize],
) -> Vec<usize> {
    let n = real_host.len();
    match mode {
        TransportMode::Ucx | TransportMode::Ofi => (0..n).collect(),
        TransportMode::Mixed => {
            // A (real host, virtual host) pair per PE, numbered in order of appearance.
            let pairs: Vec<(usize, usize)> = (0..n).map(|p| (real_host[p], host_of[p])).collect();
            (0..n)
                .map(|p| pairs.iter().position(|x| *x == pairs[p]).expect("present"))
                .collect()
        }
        TransportMode::Auto | TransportMode::Shm => real_host.to_vec(),
    }
}

/// The route to every PE from the PEs' shared-memory groups. This PE is always reached
/// through its own mapping; its atomics still go through the network when the job uses
/// one (see `Fabric::amo`).
pub(crate) fn choose_routes(
    mode: TransportMode,
    group: &[usize],
    me: usize,
) -> std::result::Result<Vec<Route>, InitError> {
    (0..group.len())
        .map(|pe| {
            // This PE's own memory is always a copy away (the network would only add latency).
            if pe == me || group[pe] == group[me] {
                Ok(Route::Shm)
            } else if mode == TransportMode::Shm {
                Err(InitError::Topology(format!(
                    "PE {pe} runs on another host than PE {me}, and SHMEM_TRANSPORT=shm allows shared memory only (unset it to reach other hosts through the network)"
                )))
            } else {
                Ok(Route::Net)
            }
        })
        .collect()
}

/// Whether this PE reaches the network through libfabric (else UCX): `SHMEM_TRANSPORT=ofi`
/// or `ucx` decides, else `SHMEM_NETWORK`, whose `auto` takes UCX when its library loads.
pub(crate) fn choose_network(cfg: &Config) -> std::result::Result<bool, InitError> {
    match (cfg.transport, cfg.network) {
        (TransportMode::Ucx, NetworkChoice::Ofi) | (TransportMode::Ofi, NetworkChoice::Ucx) => {
            Err(InitError::Transport(format!(
                "SHMEM_TRANSPORT={} and SHMEM_NETWORK={} disagree (SHMEM_NETWORK applies to auto and mixed: unset one)",
                format!("{:?}", cfg.transport).to_lowercase(),
                format!("{:?}", cfg.network).to_lowercase(),
            )))
        }
        (TransportMode::Ofi, _) | (_, NetworkChoice::Ofi) => Ok(true),
        (TransportMode::Ucx, _) | (_, NetworkChoice::Ucx) => Ok(false),
        (_, NetworkChoice::Auto) => Ok(!sys::library_loads(&cfg.ucx_library)),
    }
}

/// Checks that every PE chose the network this PE did (after the store's fence): a job
/// where some hosts lack UCX must say `SHMEM_NETWORK=ofi` everywhere.
pub(crate) fn same_network(
    boot: &dyn rshmem_boot::Bootstrap,
    me: usize,
    mine: &str,
) -> std::result::Result<(), InitError> {
    for pe in 0..boot.size() {
        let theirs = boot.get(pe, "net")?;
        if theirs != mine {
            return Err(InitError::Transport(format!(
                "PE {me} reaches other PEs through {mine} but PE {pe} through {theirs} (SHMEM_NETWORK=auto chooses UCX where its library loads): set SHMEM_NETWORK=ucx or ofi for every PE"
            )));
        }
    }
    Ok(())
}

/// Whether WORLD's collectives should compose HOST and LEADERS: the PEs do not all share
/// memory, every host's PEs do (so the host phases are single-copy), and some host has
/// more than one PE (else the composition is the flat algorithm plus overhead). Computed
/// from job-wide facts only, so every PE decides alike.
pub(crate) fn world_is_hierarchical(group: &[usize], host_of: &[usize]) -> bool {
    let n = group.len();
    let spans = (1..n).any(|p| group[p] != group[0]);
    let hosts_share =
        (0..n).all(|p| (0..p).all(|q| host_of[p] != host_of[q] || group[p] == group[q]));
    let crowded = (1..n).any(|p| host_of[..p].contains(&host_of[p]));
    spans && hosts_share && crowded
}
