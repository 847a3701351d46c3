//! Safe API: point-to-point waits. Every PE raises its flag on every PE; the `_all`,
//! `_any`, `_some` waits and tests (with include masks and vector values) and
//! `wait_until`/`test` see them. Prints `ok api_p2p pe=<me>`.
//!
//! With argument `finalized` (or `killed`, under `SHMEM_FAULT_TOLERANT=1`) the last PE
//! finalizes (or dies) while the others wait for a flag it never raises: their
//! `wait_until` and `signal_wait_until` return the error (issue 26), printed as
//! `err <routine>: <message>`.

use rshmem::{Cmp, CoreError, Error, Shmem};

/// The waiters' side of the `finalized` and `killed` modes.
fn wait_for_the_last(shmem: &Shmem, killed: bool) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let flag = shmem.alloc_atomic(0u64)?;
    shmem.barrier_all();
    if me == n - 1 {
        std::mem::forget(flag); // a free is collective: the others wait elsewhere
        if killed {
            // SAFETY: raise takes an integer and touches no memory of ours.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        return Ok(());
    }
    let w = shmem.wait_until(&flag, Cmp::Eq, 1).unwrap_err();
    let s = shmem.signal_wait_until(&flag, Cmp::Eq, 1).unwrap_err();
    for e in [&w, &s] {
        match e {
            Error::PeFailed { pe, waiter, .. } if killed => assert_eq!((*pe, *waiter), (n - 1, me)),
            Error::Core(CoreError::WaitAfterFinalize { waiter, .. }) if !killed => {
                assert_eq!(*waiter, me)
            }
            other => panic!("unexpected error {other:?}"),
        }
    }
    println!("err {w}");
    println!("err {s}");
    std::mem::forget(flag);
    if killed {
        // No survivor finalizes before every one has waited: a wait next to PEs that
        // all finalized or died reports that instead.
        let surv = shmem.world().survivors()?;
        surv.sync()?;
        surv.destroy()?;
    }
    Ok(())
}

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    match std::env::args().nth(1).as_deref() {
        Some("finalized") => return wait_for_the_last(&shmem, false),
        Some("killed") => return wait_for_the_last(&shmem, true),
        _ => {}
    }
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);

    // One flag per PE, raised by that PE on everyone; nobody else raises it.
    let flags = shmem.alloc_atomic_vec(n, 0i64)?;
    assert!(!shmem.test_all(&flags, None, Cmp::Eq, 1)? || n == 0);
    assert_eq!(shmem.test_any(&flags, None, Cmp::Eq, 1)?, None);
    let none = vec![false; n];
    assert!(
        shmem.test_all(&flags, Some(&none), Cmp::Eq, 1)?,
        "empty set: true"
    );
    assert_eq!(shmem.wait_until_any(&flags, Some(&none), Cmp::Eq, 1)?, None);
    assert!(shmem
        .wait_until_some(&flags, Some(&none), Cmp::Eq, 1)?
        .is_empty());
    shmem.wait_until_all(&flags, Some(&none), Cmp::Eq, 1)?;
    shmem.barrier_all();

    for pe in 0..n {
        flags.atomic_set(me, me as i64 + 1, pe)?;
    }
    // My left neighbour's flag, alone (mask).
    let mut only_left = vec![false; n];
    only_left[left] = true;
    assert_eq!(
        shmem.wait_until_any(&flags, Some(&only_left), Cmp::Ne, 0)?,
        Some(left)
    );
    assert_eq!(
        shmem.wait_until_some(&flags, Some(&only_left), Cmp::Gt, 0)?,
        [left]
    );
    // All flags, each against its own value.
    let want: Vec<i64> = (1..=n as i64).collect();
    shmem.wait_until_all_vector(&flags, None, Cmp::Eq, &want)?;
    assert!(shmem.test_all_vector(&flags, None, Cmp::Eq, &want)?);
    assert!(shmem.test_all(&flags, None, Cmp::Ge, 1)?);
    let mut some = shmem.test_some(&flags, None, Cmp::Ge, 1)?;
    some.sort_unstable();
    assert_eq!(some, (0..n).collect::<Vec<_>>());
    let mut some = shmem.wait_until_some_vector(&flags, None, Cmp::Le, &want)?;
    some.sort_unstable();
    assert_eq!(some, (0..n).collect::<Vec<_>>());
    assert!(shmem
        .wait_until_any_vector(&flags, None, Cmp::Eq, &want)?
        .is_some());
    assert_eq!(
        shmem.test_any_vector(&flags, Some(&only_left), Cmp::Eq, &want)?,
        Some(left)
    );
    let bigger: Vec<i64> = want.iter().map(|v| v + 1).collect();
    assert!(shmem
        .test_some_vector(&flags, None, Cmp::Eq, &bigger)?
        .is_empty());
    assert_eq!(flags.to_vec(), want);

    // wait_until / test on a single word, woken by the left neighbour.
    let token = shmem.alloc_atomic(0u32)?;
    assert!(!shmem.test(&token, Cmp::Gt, 0));
    shmem.barrier_all();
    token.atomic_set(me as u32 + 1, right)?;
    shmem.wait_until(&token, Cmp::Eq, left as u32 + 1)?;
    assert!(shmem.test(&token, Cmp::Ge, 1));
    println!("ok api_p2p pe={me}");
    Ok(())
}
