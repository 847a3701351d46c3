#!/bin/sh
# Installs rshmem's C face: lib/librshmem.{so,a}, include/{shmem,shmemx,pshmem}.h and
# include/mpp/, bin/oshcc, bin/oshc++, bin/oshrun and lib/pkgconfig/rshmem.pc; and, when
# libcaf_rshmem is built (cargo build -p rshmem-caf), the Coarray Fortran face
# (crates/rshmem-caf/scripts/install.sh: libcaf_rshmem, caf, cafrun, caf-rshmem.pc).
#
#   scripts/install.sh --prefix DIR [--build-dir DIR]
#
# --build-dir is the cargo output directory holding librshmem_c.so, librshmem_c.a (there
# or in deps/) and oshrun (default: target/release of the workspace, else target/debug). Build first with
#   cargo build --release -p rshmem-capi -p oshrun
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
crate=$(dirname -- "$here")
root=$(dirname -- "$(dirname -- "$crate")")
prefix=
build=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --build-dir) build=$2; shift 2 ;;
        --build-dir=*) build=${1#--build-dir=}; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
if [ -z "$build" ]; then
    for d in "${CARGO_TARGET_DIR:-$root/target}/release" "${CARGO_TARGET_DIR:-$root/target}/debug"; do
        if [ -f "$d/librshmem_c.so" ] || [ -f "$d/deps/librshmem_c.so" ]; then build=$d; break; fi
    done
fi
[ -n "$build" ] || { echo "install.sh: no build directory found; pass --build-dir" >&2; exit 1; }
# `cargo build` puts the library in the profile directory; `cargo test` leaves it in deps/.
# Take the newer copy: `cargo test` rebuilds deps/ without refreshing the profile one.
libs=$build
if [ ! -f "$libs/librshmem_c.so" ] || [ "$build/deps/librshmem_c.so" -nt "$libs/librshmem_c.so" ]; then
    libs=$build/deps
fi
[ -f "$libs/librshmem_c.so" ] || {
    echo "install.sh: librshmem_c.so not found in $build; run cargo build -p rshmem-capi -p oshrun" >&2
    exit 1
}
mkdir -p "$prefix"
prefix=$(CDPATH= cd -- "$prefix" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/mpp" "$prefix/bin"
# Copy to a temporary name, then rename: a running program keeps its old mapping.
inst() { cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"; }
inst "$libs/librshmem_c.so" "$prefix/lib/librshmem.so" 755
if [ -f "$libs/librshmem_c.a" ]; then
    # Profiling: a tool defines shmem_X and calls pshmem_X. The shared library lets the
    # tool's definitions interpose; in the static one every routine's plain name is made
    # weak, so the tool's strong definition wins instead of clashing.
    a="$prefix/lib/librshmem.a.tmp.$$"
    cp "$libs/librshmem_c.a" "$a"
    if command -v nm >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
        weak="$a.weak"
        nm -g --defined-only "$a" 2>/dev/null | awk '$2 == "T" { print $3 }' | sort -u > "$weak.all"
        grep -E '^p(shmem|sh|start_pes$|_my_pe$|_num_pes$)' "$weak.all" | sed 's/^p//' \
            | sort -u | comm -12 - "$weak.all" > "$weak"
        objcopy --weaken-symbols="$weak" "$a"
        rm -f "$weak" "$weak.all"
    else
        echo "install.sh: warning: nm/objcopy not found (binutils): librshmem.a keeps strong shmem_ names, so profiling tools must link librshmem.so" >&2
    fi
    chmod 644 "$a" && mv -f "$a" "$prefix/lib/librshmem.a"
fi
for h in shmem.h shmemx.h pshmem.h mpp/shmem.h mpp/shmemx.h; do
    inst "$crate/include/$h" "$prefix/include/$h" 644
done
if [ -f "$build/oshrun" ]; then
    inst "$build/oshrun" "$prefix/bin/oshrun" 755
else
    echo "install.sh: warning: $build/oshrun not found (cargo build -p oshrun); bin/oshrun not installed" >&2
fi
# The compiler comes from RSHMEM_CC / RSHMEM_CXX: OSHCC / OSHCXX conventionally name the
# wrapper itself (see oshcc.in).
sed "s|@NAME@|oshcc|g; s|@LANG@|C|; s|@VAR@|RSHMEM_CC|g; s|@CC@|cc|g; s|@IGNORED@|OSHCC|; s|@EXAMPLE@|gcc|" \
    "$here/oshcc.in" > "$prefix/bin/oshcc.tmp.$$"
sed "s|@NAME@|oshc++|g; s|@LANG@|C++|; s|@VAR@|RSHMEM_CXX|g; s|@CC@|c++|g; s|@IGNORED@|OSHCXX|; s|@EXAMPLE@|g++|" \
    "$here/oshcc.in" > "$prefix/bin/oshc++.tmp.$$"
chmod 755 "$prefix/bin/oshcc.tmp.$$" "$prefix/bin/oshc++.tmp.$$"
mv -f "$prefix/bin/oshcc.tmp.$$" "$prefix/bin/oshcc"
mv -f "$prefix/bin/oshc++.tmp.$$" "$prefix/bin/oshc++"
sed "s|@PREFIX@|$prefix|; s|@VERSION@|$version|" "$here/rshmem.pc.in" > "$prefix/lib/pkgconfig/rshmem.pc"
sh "$root/crates/rshmem-caf/scripts/install.sh" --prefix "$prefix" --build-dir "$build"
echo "installed rshmem $version into $prefix"
