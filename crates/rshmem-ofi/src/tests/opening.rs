//! Opening a provider: a missing library, an unknown provider, what a provider offers.

use super::*;

#[test]
fn load_bogus_library_says_what_to_install() {
    let _w = watchdog("load_bogus_library_says_what_to_install", 30);
    let err = Ofi::open_with(&OpenOptions {
        library: "libfabric-does-not-exist.so.1",
        ..Default::default()
    })
    .expect_err("must fail");
    let msg = err.to_string();
    assert!(msg.contains("libfabric-does-not-exist.so.1"), "{msg}");
    assert!(msg.contains("apt-get install libfabric1"), "{msg}");
    assert!(msg.contains("cannot open shared object file"), "{msg}");
}

#[test]
fn unknown_provider_is_named() {
    let _w = watchdog("unknown_provider_is_named", 30);
    if open(PROVIDERS[0]).is_none() {
        return;
    }
    let err = Ofi::open_with(&OpenOptions {
        provider: Some("no-such-provider"),
        ..Default::default()
    })
    .expect_err("must fail");
    let msg = err.to_string();
    assert!(matches!(err, OfiError::NoProvider { .. }), "{msg}");
    assert!(msg.contains("\"no-such-provider\""), "{msg}");
    assert!(msg.contains("FI_EP_RDM"), "{msg}");
}

#[test]
fn providers_describe_themselves_and_have_every_shmem_atomic() {
    let _w = watchdog("providers_describe_themselves", 60);
    each_provider(|ofi, p| {
        assert_eq!(ofi.provider(), p);
        assert!(
            ofi.library_version() >= (1, 5),
            "{:?}",
            ofi.library_version()
        );
        assert!(ofi.api_version() <= API_VERSION);
        let supported: Vec<String> = AtomicKind::ALL
            .iter()
            .flat_map(|&k| {
                AtomicType::ALL.iter().flat_map(move |&t| {
                    AtomicOp::ALL
                        .iter()
                        .filter(move |&&o| ofi.atomic_supported(k, t, o))
                        .map(move |&o| format!("{k:?}/{o:?}/{t:?}"))
                })
            })
            .collect();
        let lacking: Vec<String> = AtomicKind::ALL
            .iter()
            .flat_map(|&k| {
                AtomicType::ALL.iter().flat_map(move |&t| {
                    AtomicOp::ALL
                        .iter()
                        .filter(move |&&o| k.allows(o) && !ofi.atomic_supported(k, t, o))
                        .map(move |&o| format!("{k:?}/{o:?}/{t:?}"))
                })
            })
            .collect();
        eprintln!(
            "{p}: fabric {} domain {} api {:?} mr_mode {:#x} manual progress {} ordered writes \
             {} delivery complete {} inject {} B; {} atomic forms, lacking: [{}]",
            ofi.fabric_name(),
            ofi.domain_name(),
            ofi.api_version(),
            ofi.mr_mode(),
            ofi.manual_progress(),
            ofi.ordered_writes(),
            ofi.delivery_complete(),
            ofi.inject_size(),
            supported.len(),
            lacking.join(" ")
        );
        ofi.check_shmem_atomics().unwrap();
    });
}
