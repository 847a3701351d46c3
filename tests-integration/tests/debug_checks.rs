//! `SHMEM_DEBUG=1` checks every collective's arguments across the
//! team's members and reports a mismatch naming the routine, the argument and the PEs.

use std::time::Duration;

use rshmem_tests::Job;

fn run(np: usize, case: &str, debug: &str) -> rshmem_tests::JobOutput {
    Job::new(np, "debug_checks")
        .args([case])
        .env("SHMEM_DEBUG", debug)
        .timeout(Duration::from_secs(30))
        .run()
}

#[test]
fn consistent_collectives_pass_the_check() {
    for np in [1, 2, 3, 4] {
        let out = run(np, "ok", "1");
        out.assert_ok();
        assert_eq!(out.lines_with("ok debug_checks pe=").len(), np, "{out:?}");
    }
}

#[test]
fn mismatches_are_reported() {
    for np in [2, 3, 4] {
        let odd = np - 1;
        for (case, routines, want) in [
            (
                "root",
                &["shmem_broadcastmem"][..],
                format!("collective arguments differ between PEs: PE {odd} passed PE_root=1 but PE 0 passed PE_root=0"),
            ),
            (
                "nelems",
                &["shmem_long_sum_reduce"][..],
                format!("collective arguments differ between PEs: PE {odd} passed nreduce=32 but PE 0 passed nreduce=64"),
            ),
            (
                "op",
                &["shmem_long_reduce"][..],
                format!("collective arguments differ between PEs: PE {odd} passed op=max but PE 0 passed op=sum"),
            ),
            (
                "type",
                &["shmem_int_sum_reduce", "shmem_long_sum_reduce"][..],
                format!("collective arguments differ between PEs: PE {odd} passed type=i32 but PE 0 passed type=i64"),
            ),
            (
                "routine",
                &["shmem_long_sum_reduce", "shmem_broadcastmem"][..],
                format!("collective arguments differ between PEs: PE {odd} passed (routine called)=a reduction (shmem_TYPE_OP_reduce) but PE 0 passed (routine called)=shmem_broadcast"),
            ),
            (
                "barrier",
                &["shmem_fcollectmem", "shmem_barrier_all"][..],
                format!("collective arguments differ between PEs: PE {odd} passed (routine called)=shmem_fcollect but PE 0 passed (routine called)=shmem_barrier_all"),
            ),
            (
                "split",
                &["shmem_team_split_strided"][..],
                format!("collective arguments differ between PEs: PE {odd} passed start=1 but PE 0 passed start=0"),
            ),
        ] {
            let out = run(np, case, "1");
            assert!(out.status.is_some(), "{case} at {np}: hung: {out:?}");
            assert_ne!(out.code(), 0, "{case} at {np}: {out:?}");
            // Every PE reports the same mismatch under its own routine name.
            let found = routines
                .iter()
                .any(|r| out.stderr.contains(&format!("{r}: {want}")));
            assert!(found, "{case} at {np}: want {routines:?}: {want:?} in {out:?}");
        }
    }
}
