//! Safe API: teams. Args: `basic` (default) or `grid <xrange>`.
//!
//! * `basic`: predefined teams, strided splits (even/odd, negative and zero stride),
//!   invalid arguments, color splits, translation between teams, drop orders, 1000
//!   split/drop cycles, HOST/LEADERS (set `SHMEM_VIRTUAL_HOSTS` to split the world into
//!   contiguous virtual hosts).
//! * `grid <xrange>`: a 2-D split; prints `grid pe=<me> x=<x> y=<y> xn=<xn> yn=<yn>`.
//!
//! Prints `ok api_team pe=<me>`.

use rshmem::{Error, Shmem, Team, TeamConfig, TeamRef};

fn members(t: &TeamRef) -> Vec<usize> {
    t.world_pes().collect()
}

/// Asserts an argument error of `routine` that every PE sees.
fn assert_arg_error<T: std::fmt::Debug>(r: rshmem::Result<T>, routine: &str) {
    let e = r.expect_err("invalid split must fail");
    assert!(e.to_string().starts_with(routine), "{e}");
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
}

fn basic(shmem: &Shmem) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let cfg = TeamConfig::default();
    let world = shmem.world();
    assert_eq!((world.my_pe(), world.n_pes()), (me, n));
    assert!(world.is_predefined());
    assert_eq!(world.config(), cfg);
    assert_eq!(members(&world), (0..n).collect::<Vec<_>>());
    assert_eq!(world.world_pe(n), None);
    let shared = shmem.shared();
    assert_eq!(
        shared.n_pes(),
        rshmem_tests::expected_shared_size(me, n),
        "SHARED: the PEs whose memory this PE maps"
    );
    assert_eq!(shared.translate_pe(shared.my_pe(), &world), Some(me));
    assert_eq!(world.translate_pe(n, &shared), None);
    world.sync()?;

    // Even and odd PEs (stride 2).
    let even = world.split_strided(0, 2, n.div_ceil(2), &cfg)?;
    let odd = if n > 1 {
        world.split_strided(1, 2, n / 2, &TeamConfig { num_contexts: 2 })?
    } else {
        None
    };
    assert_eq!(even.is_some(), me % 2 == 0);
    assert_eq!(odd.is_some(), me % 2 == 1);
    let mine = even.as_ref().or(odd.as_ref()).expect("even or odd");
    assert_eq!(mine.my_pe(), me / 2);
    assert_eq!(
        mine.n_pes(),
        if me % 2 == 0 { n.div_ceil(2) } else { n / 2 }
    );
    assert!(!mine.is_predefined());
    assert_eq!(mine.config().num_contexts, if me % 2 == 0 { 0 } else { 2 });
    assert_eq!(members(mine), (me % 2..n).step_by(2).collect::<Vec<_>>());
    assert_eq!(world.translate_pe(me, mine), Some(me / 2));
    assert_eq!(mine.translate_pe(mine.my_pe(), &world), Some(me));
    // World ranks of the other parity are not in my team.
    assert_eq!(world.translate_pe(me ^ 1, mine), None);
    for _ in 0..50 {
        mine.sync()?;
    }

    // Negative stride: the world reversed, then every other PE of that.
    let rev = world.split_strided(n - 1, -1, n, &cfg)?.expect("everyone");
    assert_eq!(rev.my_pe(), n - 1 - me);
    assert_eq!(members(&rev), (0..n).rev().collect::<Vec<_>>());
    let rev2 = rev.split_strided(0, 2, n.div_ceil(2), &cfg)?;
    assert_eq!(rev2.is_some(), (n - 1 - me) % 2 == 0);
    if let Some(t) = &rev2 {
        assert_eq!(members(t), (0..n).rev().step_by(2).collect::<Vec<_>>());
        assert_eq!(t.translate_pe(t.my_pe(), &rev), Some(rev.my_pe()));
        t.sync()?;
    }
    // From the top, stride -2 (ranks n-1, n-3, ... of the world).
    let down = world.split_strided(n - 1, -2, n.div_ceil(2), &cfg)?;
    assert_eq!(down.is_some(), (n - 1 - me) % 2 == 0);
    if let Some(t) = &down {
        assert_eq!(t.my_pe(), (n - 1 - me) / 2);
        assert_eq!(members(t), members(rev2.as_ref().unwrap()));
        // Same PEs in the same order: ranks translate to themselves.
        for r in 0..t.n_pes() {
            assert_eq!(t.translate_pe(r, rev2.as_ref().unwrap()), Some(r));
        }
    }
    // Stride 0 with size 1: just the last PE.
    let last = world.split_strided(n - 1, 0, 1, &cfg)?;
    assert_eq!(last.is_some(), me == n - 1);
    if let Some(t) = &last {
        assert_eq!((t.my_pe(), t.n_pes()), (0, 1));
        t.sync()?;
    }

    // Invalid arguments fail on every PE (and leave the world usable).
    assert_arg_error(
        world.split_strided(0, 1, n + 1, &cfg),
        "shmem_team_split_strided",
    );
    assert_arg_error(
        world.split_strided(0, 0, 2, &cfg),
        "shmem_team_split_strided",
    );
    assert_arg_error(
        world.split_strided(0, 1, 0, &cfg),
        "shmem_team_split_strided",
    );
    assert_arg_error(
        world.split_strided(n, 1, 1, &cfg),
        "shmem_team_split_strided",
    );
    assert_arg_error(
        world.split_strided(0, -1, 2, &cfg),
        "shmem_team_split_strided",
    );
    assert_arg_error(world.split_2d(0, &cfg, &cfg), "shmem_team_split_2d");
    world.sync()?;

    // Color split, the paper's example: PEs {1, 3, 6} (those that exist) form one team,
    // ordered by descending key; everyone else passes a negative color.
    let in_set = [1, 3, 6].contains(&me);
    let set = world.split_color(if in_set { 7 } else { -1 }, -(me as i32), &cfg)?;
    assert_eq!(set.is_some(), in_set);
    if let Some(t) = &set {
        let want: Vec<usize> = [6, 3, 1].into_iter().filter(|&p| p < n).collect();
        assert_eq!(members(t), want);
        assert_eq!(t.world_pe(t.my_pe()), Some(me));
        assert_eq!(world.translate_pe(me, t), Some(t.my_pe()));
        // PE 1 and PE 3 are odd: they translate into the odd team, PE 6 does not.
        if let Some(odd) = &odd {
            for (r, &p) in want.iter().enumerate() {
                assert_eq!(t.translate_pe(r, odd), (p % 2 == 1).then_some(p / 2));
            }
        }
        for (r, &p) in want.iter().enumerate() {
            assert_eq!(t.translate_pe(r, &rev), Some(n - 1 - p));
        }
        t.sync()?;
        // A color team splits further.
        let head = t.split_strided(0, 1, 1, &cfg)?;
        assert_eq!(head.is_some(), t.my_pe() == 0);
    }

    // Parity colors, ranked by descending PE (key): every PE is in one of two teams.
    let par = world
        .split_color((me % 2) as i32, (n - me) as i32, &cfg)?
        .expect("non-negative color");
    let want: Vec<usize> = (me % 2..n).step_by(2).rev().collect();
    assert_eq!(members(&par), want);
    assert_eq!(par.n_pes(), mine.n_pes());
    // Translation between the parity team and the strided team of the same PEs:
    // reversed order.
    for r in 0..par.n_pes() {
        assert_eq!(par.translate_pe(r, mine), Some(par.n_pes() - 1 - r));
    }
    if n > 1 {
        // Between teams of different parities: nobody in common.
        let other = if me % 2 == 0 {
            odd.as_ref()
        } else {
            even.as_ref()
        };
        assert!(other.is_none());
        for (r, p) in want.iter().enumerate() {
            assert_eq!(par.translate_pe(r, &rev), Some(n - 1 - p));
        }
    }
    // Ties in the key are broken by parent rank.
    let tie = rev.split_color(0, 0, &cfg)?.expect("one team");
    assert_eq!(tie.my_pe(), rev.my_pe());
    par.sync()?;
    drop(tie);
    drop(par);

    // Drop orders: not last-in-first-out, a parent before its child, explicit destroy.
    let a = world.split_strided(0, 1, n, &cfg)?.expect("everyone");
    let b = world.split_color(0, me as i32, &cfg)?.expect("everyone");
    let c = a.split_strided(0, 1, n, &cfg)?.expect("everyone");
    drop(a); // the parent first
    c.sync()?;
    drop(b);
    let d = c.split_color(0, 0, &cfg)?.expect("everyone");
    c.destroy()?;
    d.sync()?;
    assert_eq!(d.my_pe(), me);
    drop(d);
    // Teams kept in a Vec drop front to back on every PE.
    let many: Vec<Team> = (0..8)
        .map(|i: i32| world.split_color(i % 2, 0, &cfg))
        .collect::<rshmem::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(many.len(), 8);
    for t in &many {
        t.sync()?;
    }
    drop(many);

    // 1000 split/drop cycles must give slots back.
    for i in 0..1000 {
        let t = if i % 2 == 0 {
            world.split_strided(0, 1, n, &cfg)?
        } else {
            world.split_color(0, 0, &cfg)?
        }
        .expect("everyone");
        if i % 100 == 0 {
            t.sync()?;
        }
    }

    // HOST and LEADERS: SHMEM_VIRTUAL_HOSTS=k makes k contiguous blocks of PEs (as do real hosts).
    let k = rshmem_tests::expected_hosts(n);
    let host_of = |p: usize| p * k / n;
    let host = shmem.host();
    assert!(host.is_predefined());
    let want: Vec<usize> = (0..n).filter(|&p| host_of(p) == host_of(me)).collect();
    assert_eq!(members(&host), want);
    assert_eq!(host.translate_pe(host.my_pe(), &world), Some(me));
    host.sync()?;
    let leaders = shmem.leaders();
    assert_eq!(leaders.is_some(), want[0] == me);
    if let Some(l) = &leaders {
        assert!(l.is_predefined());
        assert_eq!(l.n_pes(), k);
        assert_eq!(l.my_pe(), host_of(me));
        let firsts: Vec<usize> = (0..n)
            .filter(|&p| p == 0 || host_of(p) != host_of(p - 1))
            .collect();
        assert_eq!(members(l), firsts);
        assert_eq!(l.translate_pe(l.my_pe(), &host), Some(0));
        l.sync()?;
    }
    // Host teams split like any other: the host's first half.
    let half = host.split_strided(0, 1, host.n_pes().div_ceil(2), &cfg)?;
    assert_eq!(half.is_some(), host.my_pe() < host.n_pes().div_ceil(2));
    if let Some(t) = &half {
        assert_eq!(members(t), want[..t.n_pes()]);
        t.sync()?;
    }
    drop(half);

    // The rest drop here, in declaration-reverse order, identically on every PE.
    Ok(())
}

fn grid(shmem: &Shmem, xrange: usize) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let world = shmem.world();
    let xcfg = TeamConfig { num_contexts: 1 };
    let ycfg = TeamConfig { num_contexts: 3 };
    let (xt, yt) = world.split_2d(xrange, &xcfg, &ycfg)?;
    let (xt, yt) = (xt.expect("x-team"), yt.expect("y-team"));
    let xr = xrange.min(n);
    let (x, y) = (me % xr, me / xr);
    assert_eq!(xt.my_pe(), x);
    assert_eq!(yt.my_pe(), y);
    assert_eq!(xt.n_pes(), xr.min(n - y * xr));
    assert_eq!(yt.n_pes(), (n - x).div_ceil(xr));
    assert_eq!(
        members(&xt),
        (y * xr..n.min((y + 1) * xr)).collect::<Vec<_>>()
    );
    assert_eq!(members(&yt), (x..n).step_by(xr).collect::<Vec<_>>());
    assert_eq!((xt.config(), yt.config()), (xcfg, ycfg));
    // Translation between the row and the column: only this PE is in both.
    for r in 0..xt.n_pes() {
        assert_eq!(xt.translate_pe(r, &yt), (r == x).then_some(y));
    }
    assert_eq!(yt.translate_pe(y, &xt), Some(x));
    xt.sync()?;
    yt.sync()?;
    println!(
        "grid pe={me} x={} y={} xn={} yn={}",
        xt.my_pe(),
        yt.my_pe(),
        xt.n_pes(),
        yt.n_pes()
    );
    drop(xt);
    drop(yt);
    Ok(())
}

fn main() -> rshmem::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shmem = Shmem::init()?;
    match args.first().map(String::as_str) {
        None | Some("basic") => basic(&shmem)?,
        Some("grid") => grid(&shmem, args[1].parse().expect("xrange"))?,
        Some(other) => panic!("unknown mode {other}"),
    }
    shmem.barrier_all();
    println!("ok api_team pe={}", shmem.my_pe());
    Ok(())
}
