//! rshmem-core's operations for Coarray Fortran's image control under oshrun at 1-4 PEs:
//! the barrier that goes on without departed members, pairwise synchronization, events,
//! puts complete at their target, and departures seen by all of them (the PE program
//! `core_image_control`).

use rshmem_tests::run_ok;

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn image_control_tolerant_barrier_rounds_on_world_and_a_team() {
    for np in NPS {
        run_ok(np, "core_image_control", &["barrier"], &[]);
    }
}

#[test]
fn image_control_pairwise_sync_and_repeated_partners() {
    for np in NPS {
        run_ok(np, "core_image_control", &["pairs"], &[]);
    }
}

#[test]
fn image_control_events_post_wait_query() {
    for np in NPS {
        run_ok(np, "core_image_control", &["events"], &[]);
    }
}

#[test]
fn image_control_puts_complete_at_their_target() {
    for np in NPS {
        run_ok(np, "core_image_control", &["put"], &[]);
    }
}

#[test]
fn image_control_a_finalized_pe_is_reported_not_waited_for() {
    // On shared memory: through UCX a finalized PE's process may leave the job, and a
    // later quiet ends the job on the lost connection (as in the Fortran test).
    for np in [2, 3, 4] {
        run_ok(
            np,
            "core_image_control",
            &["departed"],
            &[("SHMEM_TRANSPORT", "shm")],
        );
    }
}
