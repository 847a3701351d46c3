//! Safe API: collective allocation and freeing. Objects of several types are made and
//! dropped in the same, non-LIFO order on every PE (explicit `drop`/`free`), resized, and
//! checked through remote writes; the heap returns to its starting size. Args:
//! `[rounds]`. Prints `alloc pe=<me> free_before=<b> free_after=<a>` and
//! `ok api_alloc pe=<me>`.

use rshmem::{Remote, Shmem};

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Particle {
    pos: [f64; 3],
    id: u32,
    kind: u16,
}
// SAFETY: repr(C), all fields numbers: every bit pattern is valid (padding allowed).
unsafe impl Remote for Particle {}

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(128))]
struct Wide([u64; 16]);
// SAFETY: repr(C) over an array of numbers.
unsafe impl Remote for Wide {}

fn main() -> rshmem::Result<()> {
    let rounds: usize = std::env::args().nth(1).map_or(20, |a| a.parse().unwrap());
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let before = shmem.heap_free();

    for r in 0..rounds {
        let a = shmem.alloc(100 + r, r as u8)?;
        let b = shmem.alloc_zeroed::<Particle>(7)?;
        let c = shmem.alloc_atomic(0u32)?;
        let d = shmem.alloc(3, Wide([r as u64; 16]))?;
        assert_eq!(d.load(2), Wide([r as u64; 16]));
        let e = shmem.alloc_box(-1.5f32)?;
        let empty = shmem.alloc::<u64>(0, 0)?;
        assert!(empty.is_empty());
        let mut f = shmem.alloc(4, me as i64)?;
        let lock = shmem.alloc_lock()?;

        // Remote writes into every kind of object.
        let p = Particle {
            pos: [me as f64, 1.0, 2.0],
            id: me as u32,
            kind: r as u16,
        };
        shmem.p(&b, 6, p, right)?;
        c.atomic_add(1, right)?;
        shmem.p(&e, 0, me as f32, right)?;
        shmem.p(&d, 1, Wide([me as u64; 16]), right)?;
        shmem.barrier_all();
        assert_eq!(b.load(6).id, left as u32);
        assert_eq!(
            b.load(0),
            Particle {
                pos: [0.0; 3],
                id: 0,
                kind: 0
            }
        );
        assert_eq!(c.load(), 1);
        assert_eq!(e.read(), left as f32);
        assert_eq!(d.load(1), Wide([left as u64; 16]));
        assert!(a.to_vec().iter().all(|&x| x == r as u8));

        // Free in a non-LIFO order, the same on every PE; some explicitly.
        drop(c);
        a.free()?;
        f.resize(8 + r * 100, 99)?;
        shmem.p(&f, f.len() - 1, me as i64, right)?;
        shmem.barrier_all();
        assert_eq!(f.load(0), me as i64);
        assert_eq!(f.load(3), me as i64);
        assert_eq!(f.load(4), 99);
        assert_eq!(f.load(f.len() - 1), left as i64);
        drop(lock);
        drop(e);
        f.resize(2, 0)?;
        assert_eq!(f.to_vec(), [me as i64; 2]);
        d.free()?;
        drop(b);
        drop(empty);
        // `f` dropped at the end of the round, last.
    }
    let after = shmem.heap_free();
    println!("alloc pe={me} free_before={before} free_after={after}");
    assert_eq!(before, after, "every object was freed");
    println!("ok api_alloc pe={me}");
    Ok(())
}
