//! Timing: batches of operations timed with `Instant`, interleaved between the kinds
//! being compared so that a noisy neighbour hurts every kind alike.

use std::time::{Duration, Instant};

/// A benchmark body: runs its operation `n` times back to back.
pub(crate) type Body<'a> = &'a mut dyn FnMut(u64);

/// Median and minimum of per-operation times, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lat {
    pub(crate) median: f64,
    pub(crate) min: f64,
}

impl Lat {
    /// Summarizes per-operation samples (ns).
    pub(crate) fn of(samples: &[f64]) -> Lat {
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let median = if v.is_empty() {
            f64::NAN
        } else if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        Lat {
            median,
            min: v.first().copied().unwrap_or(f64::NAN),
        }
    }
}

/// Nanoseconds per operation of one batch of `n` operations.
#[inline(never)]
pub(crate) fn time_batch(f: Body<'_>, n: u64) -> f64 {
    let t = Instant::now();
    f(n);
    t.elapsed().as_nanos() as f64 / n as f64
}

/// How many operations of `f` take about `target` (at least 1); warms `f` up on the way.
pub(crate) fn calibrate(f: Body<'_>, target: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        f(n);
        let e = t.elapsed();
        if e >= target / 2 || n >= 1 << 26 {
            let scale = target.as_secs_f64() / e.as_secs_f64().max(1e-9);
            return ((n as f64 * scale).round() as u64).max(1);
        }
        n *= 2;
    }
}

/// Calibrates every body to batches of about `target`, then takes `samples` batches of
/// each, interleaved (kind 0, kind 1, ..., kind 0, ...). Returns the per-operation
/// nanoseconds of every batch, per kind.
pub(crate) fn interleaved(
    bodies: &mut [Body<'_>],
    target: Duration,
    samples: usize,
) -> Vec<Vec<f64>> {
    let batches: Vec<u64> = bodies.iter_mut().map(|f| calibrate(*f, target)).collect();
    let mut out = vec![Vec::with_capacity(samples); bodies.len()];
    for _ in 0..samples {
        for (k, f) in bodies.iter_mut().enumerate() {
            out[k].push(time_batch(*f, batches[k]));
        }
    }
    out
}

/// Interleaved batches of a fixed size (for operations another process must match one
/// for one, such as ping-pongs and barriers): `warmup` untimed batches of each kind,
/// then `samples` timed ones.
pub(crate) fn interleaved_fixed(
    bodies: &mut [Body<'_>],
    batch: u64,
    warmup: usize,
    samples: usize,
) -> Vec<Vec<f64>> {
    for _ in 0..warmup {
        for f in bodies.iter_mut() {
            f(batch);
        }
    }
    let mut out = vec![Vec::with_capacity(samples); bodies.len()];
    for _ in 0..samples {
        for (k, f) in bodies.iter_mut().enumerate() {
            out[k].push(time_batch(*f, batch));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_min() {
        let l = Lat::of(&[3.0, 1.0, 2.0]);
        assert_eq!((l.median, l.min), (2.0, 1.0));
        let l = Lat::of(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!((l.median, l.min), (2.5, 1.0));
    }

    #[test]
    fn calibration_finds_a_batch() {
        let mut x = 0u64;
        let mut f = |n: u64| {
            for _ in 0..n {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        };
        assert!(calibrate(&mut f, Duration::from_micros(50)) >= 1);
    }
}
