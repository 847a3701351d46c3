//! In-place sum scans (OpenSHMEM 1.6 allows `dest == source`): inclusive and exclusive, on
//! WORLD and a reversed team, for i64 and f64, element counts 1, 7 and 3000, back to back,
//! each checked against a locally computed reference; disjoint scans alongside. Prints
//! `ok inplace_scans pe=<me>`.
#![allow(unsafe_code)]

use rshmem_core::coll;
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{memory, setup, ThreadLevel};

const MAX: usize = 3000;

fn v(r: usize, i: usize) -> i64 {
    (r as i64 + 1) * 1000 + (i as i64 % 89) - 30
}

fn check(t: &Team, a: *mut i64, b: *mut i64, f: *mut f64) {
    let (me, _) = (t.my_pe(), t.n_pes());
    for n in [1, 7, MAX] {
        for inclusive in [true, false] {
            let upto = if inclusive { me + 1 } else { me };
            let want = |i: usize| (0..upto).map(|r| v(r, i)).sum::<i64>();
            let name = if inclusive {
                "shmem_long_sum_inscan"
            } else {
                "shmem_long_sum_exscan"
            };
            // SAFETY: `a`, `b` and `f` are symmetric arrays of MAX elements.
            unsafe {
                for i in 0..n {
                    *a.add(i) = v(me, i);
                    *f.add(i) = v(me, i) as f64;
                }
                coll::sum_scan(name, t, a, a, n, inclusive).unwrap();
                coll::sum_scan(name, t, f, f, n, inclusive).unwrap();
                for i in 0..n {
                    assert_eq!(*a.add(i), want(i), "{name} in place n={n} elem {i}");
                    assert_eq!(
                        *f.add(i),
                        want(i) as f64,
                        "{name} f64 in place n={n} elem {i}"
                    );
                }
                // Disjoint, right after (no barrier between).
                for i in 0..n {
                    *a.add(i) = v(me, i);
                }
                coll::sum_scan(name, t, b, a, n, inclusive).unwrap();
                for i in 0..n {
                    assert_eq!(*b.add(i), want(i), "{name} disjoint n={n} elem {i}");
                }
            }
        }
    }
}

fn main() {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let a = memory::malloc("shmem_malloc", MAX * 8).unwrap() as *mut i64;
    let b = memory::malloc("shmem_malloc", MAX * 8).unwrap() as *mut i64;
    let f = memory::malloc("shmem_malloc", MAX * 8).unwrap() as *mut f64;
    let world = team::world().unwrap();
    check(&world, a, b, f);
    let rev = team::split_strided(&world, n as i64 - 1, -1, n as i64, TeamConfig::default())
        .unwrap()
        .unwrap();
    check(&rev, a, b, f);
    rshmem_core::sync::barrier_all().unwrap();
    println!("ok inplace_scans pe={me}");
    rshmem_core::finalize();
}
