#!/bin/sh
# Installs rshmem's Coarray Fortran face: lib/libcaf_rshmem.{so,a}, bin/caf, bin/cafrun
# and lib/pkgconfig/caf-rshmem.pc, beside the C face (crates/rshmem-capi/scripts/install.sh
# runs it; cafrun needs that script's bin/oshrun).
#
#   scripts/install.sh --prefix DIR --build-dir DIR
#
# --build-dir is the cargo output directory holding libcaf_rshmem.so (there or in deps/).
# Without the library nothing is installed (a note says so): build it with
#   cargo build --release -p rshmem-caf
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$(dirname -- "$(dirname -- "$here")")")
prefix=
build=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --build-dir) build=$2; shift 2 ;;
        --build-dir=*) build=${1#--build-dir=}; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "rshmem-caf install.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] && [ -n "$build" ] || { echo "rshmem-caf install.sh: --prefix and --build-dir are required" >&2; exit 2; }
libs=$build
if [ ! -f "$libs/libcaf_rshmem.so" ] || [ "$build/deps/libcaf_rshmem.so" -nt "$libs/libcaf_rshmem.so" ]; then
    libs=$build/deps
fi
if [ ! -f "$libs/libcaf_rshmem.so" ]; then
    echo "install.sh: note: libcaf_rshmem.so not in $build (cargo build -p rshmem-caf); caf and cafrun not installed" >&2
    exit 0
fi
mkdir -p "$prefix/lib/pkgconfig" "$prefix/bin"
prefix=$(CDPATH= cd -- "$prefix" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
inst() { cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"; }
inst "$libs/libcaf_rshmem.so" "$prefix/lib/libcaf_rshmem.so" 755
[ -f "$libs/libcaf_rshmem.a" ] && inst "$libs/libcaf_rshmem.a" "$prefix/lib/libcaf_rshmem.a" 644
for w in caf cafrun; do
    sed "s|@VERSION@|$version|g" "$here/$w.in" > "$prefix/bin/$w.tmp.$$"
    chmod 755 "$prefix/bin/$w.tmp.$$"
    mv -f "$prefix/bin/$w.tmp.$$" "$prefix/bin/$w"
done
sed "s|@PREFIX@|$prefix|; s|@VERSION@|$version|" "$here/caf-rshmem.pc.in" > "$prefix/lib/pkgconfig/caf-rshmem.pc"
