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
me=results.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
args=
keep=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) args="$args --quick" ;;
        --from) shift; args="$args --from $1" ;;
        --keep) shift; keep=$1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) usage_error "unknown argument $1" ;;
    esac
    shift
done
build_release oshrun rshmem-bench rshmem-capi rshmem-caf
out=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/rshmem-results.XXXXXX")}
[ -n "$keep" ] || trap 'rm -rf "$out"' EXIT
start=$(date +%s)
# shellcheck disable=SC2086
"$target/release/rshmem-bench" report $args --out "$out"
secs=$(( $(date +%s) - start ))
# Only the figures: docs/results/ also holds the OSU pages (osu-ucx.md, osu-ofi.md).
mkdir -p "$root/docs/results"
rm -f "$root"/docs/results/*.svg
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
warn "docs/results.md and $(find "$root/docs/results" -name '*.svg' | wc -l) SVGs in docs/results/ ($secs s)"
