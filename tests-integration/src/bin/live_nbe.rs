//! Issue 26 item 12 from Rust: the last PE finalizes while the others sync WORLD with
//! `sync_nbe`; every survivor's request fails naming it (not only its direct peers'), and
//! the survivors then sync together as an active set.

use rshmem::Shmem;

fn main() {
    let shmem = Shmem::init().unwrap();
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    assert!(n >= 2);
    shmem.barrier_all();
    if me == n - 1 {
        drop(shmem);
        return;
    }
    let world = shmem.world();
    let r = shmem.nbe_scope(|s| s.sync_nbe(&world)?.wait());
    let msg = r.expect_err("a sync with a finalized member").to_string();
    println!("sync_nbe pe={me} err={msg}");
    assert!(
        msg.contains(&format!("PE {} called shmem_finalize", n - 1)),
        "{msg}"
    );
    let survivors = shmem.active_set_strided(0, 1, n - 1).unwrap().unwrap();
    survivors.sync().unwrap();
    survivors.sync().unwrap();
    println!("ok live_nbe pe={me}");
}
