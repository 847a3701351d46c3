#!/bin/sh
# results.sh: regenerates docs/results.md and its figures (docs/results/*.svg) from one run of
# `rshmem-bench report` on this machine (every experiment, rshmem beside Open MPI's OSHMEM
# where /usr/bin/oshcc and oshrun are installed, and OpenCoarrays where /usr/bin/caf and
# cafrun are).
#
#   scripts/results.sh [--quick] [--from FILE.jsonl] [--keep DIR]
#
# Builds oshrun, rshmem-bench, the C library and libcaf_rshmem in release mode (honours
# CARGO_TARGET_DIR), runs `rshmem-bench report` into a temporary directory, copies the
# SVGs to docs/results/ and writes docs/results.md (the command, the machine, every figure
# with its caption).
# --from draws an earlier run's records instead of measuring; --keep keeps the whole report
# (PNGs, index.html, results.jsonl, logs) in DIR.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
target=${CARGO_TARGET_DIR:-$root/target}
args=
keep=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) args="$args --quick" ;;
        --from) shift; args="$args --from $1" ;;
        --keep) shift; keep=$1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "results.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
(cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -q -p oshrun -p rshmem-bench -p rshmem-capi -p rshmem-caf)
out=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/rshmem-results.XXXXXX")}
[ -n "$keep" ] || trap 'rm -rf "$out"' EXIT
start=$(date +%s)
# shellcheck disable=SC2086
"$target/release/rshmem-bench" report $args --out "$out"
secs=$(( $(date +%s) - start ))
rm -rf "$root/docs/results"
mkdir -p "$root/docs/results"
cp "$out"/*.svg "$root/docs/results/"
{
    echo "# Results"
    echo
    echo "The figures of one run of \`rshmem-bench report\` on this project's machine, made by"
    echo "\`scripts/results.sh\` (which runs \`rshmem-bench report$args --out DIR\` and copies the SVGs"
    echo "to \`docs/results/\`; $secs s). \`rshmem-bench report --out DIR\` draws the same figures"
    echo "on your machine, with PNGs and an \`index.html\`; see the README's Figures paragraph."
    echo
    sed 's#](\([A-Za-z0-9_]*\.svg\))#](results/\1)#' "$out/figures.md"
} > "$root/docs/results.md"
echo "results.sh: docs/results.md and $(ls "$root/docs/results" | wc -l) SVGs in docs/results/ ($secs s)" >&2
