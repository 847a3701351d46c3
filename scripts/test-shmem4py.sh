#!/usr/bin/env bash
# test-shmem4py.sh: builds Python's shmem4py (OpenSHMEM for Python, from PyPI) against rshmem
# and runs shmem4py's own test suite under rshmem's oshrun.
#
#   scripts/test-shmem4py.sh [--build-dir DIR] [--work DIR] [--np N] [--timeout SECS]
#
# 1. installs rshmem into WORK/prefix (crates/rshmem-capi/scripts/install.sh; --build-dir is
#    the cargo output directory holding librshmem_c.so and oshrun, as for install.sh);
# 2. makes a virtual environment WORK/venv of pinned packages from PyPI (kept between runs,
#    remade when the pins or the interpreter change) and downloads the pinned shmem4py sdist;
# 3. builds shmem4py with OSHCC=WORK/prefix/bin/oshcc and no flags, as a user would
#    (shmem4py recognises five implementations by their macros; rshmem's shmem.h defines
#    the feature macros it reads for any other); rebuilt only when rshmem's headers change;
# 4. runs its suite: oshrun -np N python -m unittest discover -s test, bounded by SECS.
# WORK defaults to ${CARGO_TARGET_DIR:-target}/shmem4py; PYTHON (default python3) is the
# interpreter. Needs the venv module and Python.h (Debian: python3-venv, python3-dev).
# Ends with "shmem4py: passed, N tests on each of NP PEs"; any failed, erroring or skipped
# test makes it exit non-zero.
set -euo pipefail
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")

build=
work=${CARGO_TARGET_DIR:-$root/target}/shmem4py
np=2
limit=300
while [ $# -gt 0 ]; do
    case $1 in
        --build-dir) build=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "test-shmem4py.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
python=${PYTHON:-python3}
die() { echo "test-shmem4py.sh: $*" >&2; exit 1; }

# The versions this script was checked with. shmem4py 1.0.0 predates NumPy 2.
shmem4py_version=1.0.0
shmem4py_sha256=41db82b216b46b7eaa737daf17e6ad74c4ba07332779df312c06250bad847f81
pins=(setuptools==69.5.1 wheel==0.43.0 cffi==1.17.1 pycparser==2.22 numpy==1.26.4)

command -v "$python" >/dev/null 2>&1 || die "$python not found (set PYTHON)"
# numpy 1.26 (the last before 2, which shmem4py 1.0.0 fails with) has wheels for 3.9-3.12.
"$python" -c 'import sys; sys.exit(not (3, 9) <= sys.version_info[:2] <= (3, 12))' \
    || die "$python is $("$python" -V 2>&1); shmem4py $shmem4py_version needs numpy < 2, so Python 3.9-3.12 (set PYTHON)"
mkdir -p "$work"
work=$(CDPATH= cd -- "$work" && pwd)
# One run at a time per work directory.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$work/.lock"
    flock 9
fi

echo "== installing rshmem into $work/prefix"
prefix=$work/prefix
sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$prefix" ${build:+--build-dir "$build"} >/dev/null
[ -x "$prefix/bin/oshrun" ] || die "oshrun was not installed: cargo build -p rshmem-capi -p oshrun first"

venv=$work/venv
want="$("$python" -c 'import sys; print(sys.version)' | head -n 1) ${pins[*]}"
if [ ! -f "$venv/.pins" ] || [ "$(cat "$venv/.pins")" != "$want" ]; then
    echo "== creating $venv (${pins[*]})"
    rm -rf "$venv"
    "$python" -m venv "$venv" || die "$python -m venv failed (Debian: apt-get install python3-venv)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
    echo "$want" > "$venv/.pins"
fi
py=$venv/bin/python
"$py" - <<'EOF' || die "Python.h not found: install the Python headers (Debian: python3-dev)"
import os, sysconfig
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
EOF

sdist=$work/sdist/shmem4py-$shmem4py_version.tar.gz
if [ ! -f "$sdist" ]; then
    echo "== downloading shmem4py $shmem4py_version"
    # No build isolation: the metadata step uses the pinned setuptools, not the newest.
    "$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
        --no-build-isolation -d "$work/sdist" "shmem4py==$shmem4py_version"
fi
echo "$shmem4py_sha256  $sdist" | sha256sum -c --quiet - || die "$sdist does not have the pinned sha256"

src=$work/shmem4py-$shmem4py_version
stamp=$(cat "$prefix"/include/*.h "$prefix"/include/mpp/*.h "$prefix/bin/oshcc" "$venv/.pins" \
    | { cat; echo "$sdist"; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$venv/.built" ] || [ "$(cat "$venv/.built")" != "$stamp" ]; then
    echo "== building shmem4py against rshmem"
    rm -rf "$src"
    tar -xzf "$sdist" -C "$work"
    # OSHCC names the wrapper itself, as shmem4py expects; oshcc takes its compiler from RSHMEM_CC.
    if ! (cd "$src" && OSHCC="$prefix/bin/oshcc" \
        "$py" -m pip install -v --disable-pip-version-check --no-build-isolation --no-deps \
        --no-cache-dir --force-reinstall . >"$work/build.log" 2>&1); then
        tail -n 40 "$work/build.log" >&2
        die "building shmem4py failed (whole log: $work/build.log)"
    fi
    grep -qF "$prefix/bin/oshcc" "$work/build.log" || die "shmem4py was not compiled with rshmem's oshcc ($work/build.log)"
    grep -q 'PySHMEM_HAVE' "$work/build.log" && die "shmem4py was given feature flags ($work/build.log)"
    echo "$stamp" > "$venv/.built"
fi

echo "== running shmem4py's tests: oshrun -np $np (bound: ${limit}s)"
log=$work/test.log
set +e
(cd "$src" && timeout -k 10 "$((limit + 10))" "$prefix/bin/oshrun" --tag-output --timeout "$limit" \
    -np "$np" "$py" -m unittest discover -v -s test) >"$log" 2>&1
rc=$?
set -e
# Per PE: the count, the verdict, and the names of any test that did not pass.
grep -E '\.\.\. (skipped|FAIL|ERROR)|^\[[0-9]+\] (Ran [0-9]+ tests|OK|FAILED)' "$log" || true
status=0
count=
for ((pe = 0; pe < np; pe++)); do
    n=$(sed -n "s/^\[$pe\] Ran \([0-9]*\) tests\{0,1\} in .*/\1/p" "$log")
    if [ -z "$n" ] || ! grep -qx "\[$pe\] OK" "$log"; then
        echo "test-shmem4py.sh: PE $pe did not pass every test (a skip counts as a failure)" >&2
        status=1
    elif [ -n "$count" ] && [ "$n" != "$count" ]; then
        echo "test-shmem4py.sh: PE $pe ran $n tests, PE 0 ran $count" >&2
        status=1
    fi
    count=${count:-$n}
done
# NumPy starts threads at import, so globals are not symmetric; shmem4py uses none, so
# nothing may be said about it.
if grep -q 'rshmem: .*warning' "$log"; then
    echo "test-shmem4py.sh: the job printed a warning" >&2
    status=1
fi
if [ "$rc" != 0 ] || [ "$status" != 0 ]; then
    echo "--- $log (oshrun exit status $rc)" >&2
    cat "$log" >&2
    exit 1
fi
echo "shmem4py: passed, $count tests on each of $np PEs"
