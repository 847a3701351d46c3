//! Node locality from the `PMI_process_mapping` job attribute that Hydra, Slurm's PMI
//! plugins and `oshrun` publish.
//!
//! The value is `(vector,(start,nodes,ppn),...)`: each block places `ppn` consecutive
//! ranks on each of the `nodes` nodes numbered from `start`; when the blocks run out the
//! vector starts again (a cyclic placement is `(vector,(0,N,1))` repeated). So
//! `(vector,(0,2,2))` puts ranks 0-1 on node 0 and 2-3 on node 1, and `(vector,(0,1,4))`
//! all four on node 0.

/// The node of each of `size` ranks described by `value`, or `None` when `value` is not a
/// mapping this parser understands (the caller then goes without launcher locality).
pub fn parse_process_mapping(value: &str, size: usize) -> Option<Vec<usize>> {
    let inner = value
        .trim()
        .strip_prefix("(vector")?
        .strip_suffix(')')?
        .trim_start_matches(',');
    let mut blocks = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let body_end = rest.find(')')?;
        let body = rest.strip_prefix('(')?.get(..body_end - 1)?;
        let nums: Vec<usize> = body
            .split(',')
            .map(|t| t.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [start, nodes, ppn] = nums[..] else {
            return None;
        };
        blocks.push((start, nodes, ppn));
        rest = rest[body_end + 1..].trim_start_matches(',').trim();
    }
    // A pass that places nobody would repeat forever.
    if blocks.iter().all(|&(_, nodes, ppn)| nodes * ppn == 0) {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    'fill: loop {
        for &(start, nodes, ppn) in &blocks {
            for node in start..start + nodes {
                for _ in 0..ppn {
                    if out.len() == size {
                        break 'fill;
                    }
                    out.push(node);
                }
            }
        }
        if out.len() == size {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::parse_process_mapping as parse;

    #[test]
    fn block_and_cyclic_placements() {
        assert_eq!(parse("(vector,(0,1,4))", 4), Some(vec![0, 0, 0, 0]));
        assert_eq!(parse("(vector,(0,2,2))", 4), Some(vec![0, 0, 1, 1]));
        assert_eq!(parse("(vector,(0,2,1))", 2), Some(vec![0, 1]));
        // Cyclic: the vector repeats.
        assert_eq!(parse("(vector,(0,2,1))", 5), Some(vec![0, 1, 0, 1, 0]));
        assert_eq!(parse("(vector,(0,1,1))", 3), Some(vec![0, 0, 0]));
        // Several blocks, uneven hosts.
        assert_eq!(
            parse("(vector,(0,1,3),(1,2,1))", 5),
            Some(vec![0, 0, 0, 1, 2])
        );
        assert_eq!(parse(" (vector, (1,2,2)) ", 4), Some(vec![1, 1, 2, 2]));
        // Fewer ranks than the vector places.
        assert_eq!(parse("(vector,(0,4,4))", 3), Some(vec![0, 0, 0]));
    }

    #[test]
    fn malformed_mappings_are_refused() {
        for bad in [
            "",
            "unknown",
            "(vector)",
            "(vector,(0,1))",
            "(vector,(0,1,2,3))",
            "(vector,(a,1,2))",
            "(vector,(0,1,2)",
            "(vector,(0,0,2))",
            "(vector,(0,2,0))",
            "(list,(0,1,1))",
        ] {
            assert_eq!(parse(bad, 4), None, "{bad:?}");
        }
    }
}
