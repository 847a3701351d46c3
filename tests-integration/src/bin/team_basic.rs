//! Team basics on the core runtime: strided splits (even/odd, negative stride), 2-D
//! split, translation, team syncs, and split/destroy churn that must not leak slots.
//! Prints `ok team_basic pe=<me>`.

use rshmem_core::team::{self, Members, TeamConfig};
use rshmem_core::{setup, ThreadLevel};

fn main() {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let world = team::world().unwrap();
    let cfg = TeamConfig::default();
    assert_eq!((world.my_pe(), world.n_pes()), (me, n));

    // Even PEs; odd PEs get no team.
    let even = team::split_strided(&world, 0, 2, n.div_ceil(2) as i64, cfg).unwrap();
    assert_eq!(even.is_some(), me % 2 == 0);
    if let Some(t) = &even {
        assert_eq!(t.my_pe(), me / 2);
        assert_eq!(t.n_pes(), n.div_ceil(2));
        assert_eq!(world.translate(me, t), Some(me / 2));
        assert_eq!(t.translate(t.my_pe(), &world), Some(me));
        for _ in 0..100 {
            team::sync(t).unwrap();
        }
    }

    // Reversed world (negative stride).
    let rev = team::split_strided(&world, n as i64 - 1, -1, n as i64, cfg)
        .unwrap()
        .unwrap();
    assert_eq!(rev.my_pe(), n - 1 - me);
    assert!(matches!(rev.members(), Members::Strided { stride: -1, .. }) || n == 1);
    team::sync(&rev).unwrap();

    // An invalid triplet fails on every PE.
    assert!(team::split_strided(&world, 0, 1, n as i64 + 1, cfg).is_err());

    // 2-D split with xrange 2: rows and columns.
    let (x, y) = team::split_2d(&world, 2, cfg, cfg).unwrap();
    let (x, y) = (x.unwrap(), y.unwrap());
    assert_eq!(x.my_pe(), me % 2);
    assert_eq!(y.my_pe(), me / 2);
    team::sync(&x).unwrap();
    team::sync(&y).unwrap();

    // Churn: creation and destruction must give slots back.
    for i in 0..2000 {
        let t = team::split_strided(&world, 0, 1, n as i64, cfg)
            .unwrap()
            .unwrap();
        if i % 100 == 0 {
            team::sync(&t).unwrap();
        }
        team::destroy(&t).unwrap();
    }
    for t in [Some(rev), Some(x), Some(y), even].into_iter().flatten() {
        team::destroy(&t).unwrap();
    }
    assert!(team::destroy(&world).is_err());
    rshmem_core::sync::barrier_all().unwrap();
    println!("ok team_basic pe={me}");
    rshmem_core::finalize();
}
