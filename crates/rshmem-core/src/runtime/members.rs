//! A set of PEs in rank order, as world PE numbers: a team's members, and the numbering
//! of a context made from a team. Pure data, below both.

use std::sync::Arc;

/// Members of a team in team-rank order, as world PE numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Members {
    /// `start, start + stride, ...` (`size` PEs).
    Strided {
        /// World PE of rank 0.
        start: usize,
        /// Distance between consecutive members (may be negative; 0 only for one PE).
        stride: isize,
        /// Number of members.
        size: usize,
    },
    /// An arbitrary ordered list (color splits).
    List(Arc<[usize]>),
}

impl Members {
    /// Number of members.
    pub fn size(&self) -> usize {
        match self {
            Members::Strided { size, .. } => *size,
            Members::List(l) => l.len(),
        }
    }

    /// World PE of team rank `rank` (`rank < size`).
    #[inline]
    pub fn pe(&self, rank: usize) -> usize {
        match self {
            Members::Strided { start, stride, .. } => {
                (*start as isize + rank as isize * stride) as usize
            }
            Members::List(l) => l[rank],
        }
    }

    /// World PE of team rank `rank`, `None` where a stride leads below PE 0.
    pub fn pe_checked(&self, rank: usize) -> Option<usize> {
        match self {
            Members::Strided { start, stride, .. } => {
                usize::try_from(*start as isize + rank as isize * stride).ok()
            }
            Members::List(l) => l.get(rank).copied(),
        }
    }

    /// Team rank of world PE `pe`, if it is a member.
    pub fn rank_of(&self, pe: usize) -> Option<usize> {
        match self {
            Members::Strided {
                start,
                stride,
                size,
            } => {
                let d = pe as isize - *start as isize;
                if *stride == 0 {
                    return (d == 0 && *size > 0).then_some(0);
                }
                (d % stride == 0 && d / stride >= 0 && ((d / stride) as usize) < *size)
                    .then(|| (d / stride) as usize)
            }
            Members::List(l) => l.iter().position(|&p| p == pe),
        }
    }

    /// The members of the sub-team given by a triplet in *this* team's numbering, or
    /// `None` if the triplet leaves the team.
    pub fn sub_strided(&self, start: i64, stride: i64, size: i64) -> Option<Members> {
        let n = self.size() as i64;
        if size < 1 || start < 0 || start >= n || (stride == 0 && size > 1) {
            return None;
        }
        let last = start.checked_add(stride.checked_mul(size - 1)?)?;
        if last < 0 || last >= n {
            return None;
        }
        Some(match self {
            Members::Strided { stride: d0, .. } => Members::Strided {
                start: self.pe(start as usize),
                stride: if size == 1 { 1 } else { d0 * stride as isize },
                size: size as usize,
            },
            Members::List(_) => Members::List(
                (0..size)
                    .map(|i| self.pe((start + i * stride) as usize))
                    .collect(),
            ),
        })
    }
}
