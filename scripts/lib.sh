# shellcheck shell=sh
# me and results are the sourcing script's; here and cores are for it.
# shellcheck disable=SC2154,SC2034
# scripts/lib.sh: what the benchmark scripts share, for POSIX sh and bash alike. A script
# sets `me` (its name, for messages) and sources it:
#
#   me=bench-x.sh
#   . "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
#
# It sets `here` (scripts/), `root` (the source tree), `target` (CARGO_TARGET_DIR made
# absolute, default ROOT/target) and `cores`, and defines the functions below. The
# experiments themselves are `rshmem-bench report`'s where it runs them (see README.md's
# Figures); the scripts keep what it does not: their own tables, launchers and hosts.

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target=$root/$target ;; esac
cores=$(nproc 2>/dev/null || echo 2)

# say MSG...: a progress line on stderr.
say() { echo "== $*" >&2; }

# warn MSG...: a message naming the script on stderr.
warn() { echo "$me: $*" >&2; }

# usage_error MSG...: a bad command line (exit status 2).
usage_error() {
    warn "$@"
    exit 2
}

# loadavg: the 1, 5 and 15 minute load averages.
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }

# build_release PACKAGE...: cargo build --release of these packages into $target.
build_release() {
    say "building rshmem (release) into $target"
    (
        cd "$root" || exit 1
        for p in "$@"; do set -- "$@" -p "$p"; shift; done
        CARGO_TARGET_DIR=$target cargo build --release -q "$@"
    )
}

# install_rshmem PREFIX [LOG]: installs the built C (and Fortran) faces into PREFIX, its
# output on stderr or into LOG (shown if it fails).
install_rshmem() {
    if [ -z "${2:-}" ]; then
        sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$1" --build-dir "$target/release" >&2
    elif ! sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$1" --build-dir "$target/release" > "$2" 2>&1; then
        cat "$2" >&2
        return 1
    fi
}

# find_oshmem LOGDIR: Open MPI's OSHMEM in ompi_cc and ompi_run (OMPI_OSHCC / OMPI_OSHRUN,
# default /usr/bin/oshcc and oshrun); as root, installs openmpi-bin and libopenmpi-dev with
# apt-get when missing (its log: LOGDIR/apt.log). Fails when they are still missing.
find_oshmem() {
    ompi_cc=${OMPI_OSHCC:-/usr/bin/oshcc}
    ompi_run=${OMPI_OSHRUN:-/usr/bin/oshrun}
    if { [ ! -x "$ompi_cc" ] || [ ! -x "$ompi_run" ]; } && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        say "installing Open MPI (openmpi-bin libopenmpi-dev)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$1/apt.log" 2>&1 ||
            { apt-get update -q > /dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$1/apt.log" 2>&1; } ||
            warn "apt-get install failed (see $1/apt.log)"
    fi
    [ -x "$ompi_cc" ] && [ -x "$ompi_run" ]
}

# report OSHMEM DIR ARGS...: `rshmem-bench report --no-caf --out DIR ARGS...` from $target,
# with Open MPI's OSHMEM beside rshmem unless OSHMEM is no (found by find_oshmem, which
# may install it, and passed on as OMPI_OSHCC and OMPI_OSHRUN).
report() {
    r_oshmem=$1 r_out=$2
    shift 2
    if [ "$r_oshmem" = no ]; then
        set -- --no-oshmem "$@"
    elif mkdir -p "$r_out" && find_oshmem "$r_out"; then
        export OMPI_OSHCC="$ompi_cc" OMPI_OSHRUN="$ompi_run"
        say "with Open MPI's OSHMEM ($("$ompi_run" --version 2>/dev/null | head -n 1))"
    else
        warn "Open MPI's oshcc/oshrun not found ($ompi_cc, $ompi_run): rshmem only"
    fi
    "$target/release/rshmem-bench" report --no-caf --out "$r_out" "$@"
}

# find_opencoarrays: OpenCoarrays' caf and cafrun in oc_caf and oc_run
# (OPENCOARRAYS_CAF / OPENCOARRAYS_CAFRUN, default /usr/bin/caf and cafrun); fails when
# they are missing or the caf found is not OpenCoarrays'.
find_opencoarrays() {
    oc_caf=${OPENCOARRAYS_CAF:-/usr/bin/caf}
    oc_run=${OPENCOARRAYS_CAFRUN:-/usr/bin/cafrun}
    [ -x "$oc_caf" ] && [ -x "$oc_run" ] && "$oc_caf" --version 2>/dev/null | grep -qi opencoarrays
}

# find_sos DIR: whether DIR is a Sandia OpenSHMEM install prefix (holds bin/oshcc; an empty
# DIR would make bin/oshcc /bin/oshcc, Open MPI's).
find_sos() { [ -n "$1" ] && [ -x "$1/bin/oshcc" ]; }

# find_osu DIR: the OSU micro-benchmarks' sources (OMB 6.x: c/openshmem and c/util) at DIR
# or its parent when DIR is their c/ directory, made absolute in `osu`; fails saying what
# is missing.
find_osu() {
    osu=$1
    # DIR may be the tree or its c/ folder (OMB's git history also keeps an older
    # openshmem/ at the top, beside c/: the tree itself then).
    if [ -n "$osu" ] && [ ! -f "$osu/c/openshmem/osu_oshm_put.c" ] && [ -f "$osu/openshmem/osu_oshm_put.c" ]; then
        osu=$(dirname -- "$osu")
    fi
    if [ -z "$osu" ] || [ ! -f "$osu/c/openshmem/osu_oshm_put.c" ] || [ ! -f "$osu/c/util/osu_util.c" ]; then
        warn "the OSU micro-benchmarks' sources are needed: --osu DIR or OSU_SRC=DIR, a tree"
        echo "  holding c/openshmem and c/util of OMB 6.x (${osu:-none given}${osu:+: no c/openshmem/osu_oshm_put.c or c/util/osu_util.c there});" >&2
        return 1
    fi
    osu=$(CDPATH='' cd -- "$osu" && pwd)
}

# collect CONFIG FILE: appends FILE's JSON lines to $results, tagged "config":CONFIG.
collect() {
    grep '^{' "$2" | sed "s/}\$/,\"config\":\"$1\"}/" >> "$results" || true
}
