//! Figures.

use super::{Figure, Records};

/// The figures of this group.
pub(super) fn figures(_r: &Records) -> Vec<Figure> {
    Vec::new()
}
