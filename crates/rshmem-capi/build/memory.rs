//! Memory management: `shmem_malloc`, `shmem_free`, `shmem_realloc`, `shmem_align`,
//! `shmem_malloc_with_hints`, `shmem_calloc` and the deprecated `shmalloc` family.

use crate::writer::Gen;

pub(crate) fn memory(g: &mut Gen) {
    g.section("Memory management");
    let m = "rshmem_core::memory";
    for (sig, call) in [
        ("void *NAME(size_t size)", "malloc(R, size)"),
        ("void NAME(void *ptr)", "free(R, ptr.cast())"),
        (
            "void *NAME(void *ptr, size_t size)",
            "realloc(R, ptr.cast(), size)",
        ),
        (
            "void *NAME(size_t alignment, size_t size)",
            "align(R, alignment, size)",
        ),
        (
            "void *NAME(size_t size, long hints)",
            "malloc_with_hints(R, size, hints)",
        ),
        (
            "void *NAME(size_t count, size_t size)",
            "calloc(R, count, size)",
        ),
    ]
    .iter()
    .zip([
        ("shmem_malloc", Some("shmalloc")),
        ("shmem_free", Some("shfree")),
        ("shmem_realloc", Some("shrealloc")),
        ("shmem_align", Some("shmemalign")),
        ("shmem_malloc_with_hints", None),
        ("shmem_calloc", None),
    ]) {
        let ((sig, call), names) = (sig, call);
        let body = if sig.starts_with("void *") {
            format!("glue::alloc({m}::{call})")
        } else {
            format!("glue::ok({m}::{call})")
        };
        g.f(&sig.replace("NAME", names.0), &body);
        if let Some(old) = names.1 {
            g.f(&sig.replace("NAME", old), &body);
        }
    }
}
