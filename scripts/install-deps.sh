#!/usr/bin/env bash
# Installs, on Debian, every tool the test suite uses beyond Rust: mpich (mpiexec.hydra, the
# second PMI-1 server the bootstrap is tested against), Open MPI, libpmix2, Slurm and munge
# (the PMIx and Slurm launch tests), UCX's runtime library (libucx0: the
# UCX transport loads libucp.so.0 at run time; the suite runs a second time over it), libfabric
# (libfabric1: rshmem-ofi loads libfabric.so.1 at run time), the
# C/C++ compilers, gfortran, pkg-config and binutils for the C ABI tests, and iproute2, util-linux and
# procps for the simulated-host tests. Run it once before `cargo test --workspace`; `.ci/run` does.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
need=()
command -v mpiexec.hydra >/dev/null 2>&1 || need+=(mpich)
ls /usr/lib/*/libucp.so.0 /usr/lib64/libucp.so.0 /usr/lib/libucp.so.0 >/dev/null 2>&1 || need+=(libucx0)
# libfabric's runtime library: rshmem-ofi loads libfabric.so.1 at run time (its tests need it).
ls /usr/lib/*/libfabric.so.1 >/dev/null 2>&1 || need+=(libfabric1)
# Launchers that hand their processes PMIx (tests/launch_openmpi.rs, launch_slurm.rs): Open MPI's
# mpirun, the PMIx client library the bootstrap loads at run time, and a one-node Slurm
# (scripts/slurm1.sh: slurmctld, slurmd, munged).
command -v mpirun.openmpi >/dev/null 2>&1 || need+=(openmpi-bin)
ls /usr/lib/*/libpmix.so.2 /usr/lib64/libpmix.so.2 >/dev/null 2>&1 || need+=(libpmix2)
command -v slurmd >/dev/null 2>&1 || [ -x /usr/sbin/slurmd ] || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || need+=(munge)
# Simulated hosts (scripts/simhosts.sh): ip, unshare and nsenter; pgrep in the tests.
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v nsenter >/dev/null 2>&1 || need+=(util-linux)
command -v pgrep >/dev/null 2>&1 || need+=(procps)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++)
# Coarray Fortran face (tests/caf.rs): gfortran -fcoarray=lib.
command -v gfortran >/dev/null 2>&1 || need+=(gfortran)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v nm >/dev/null 2>&1 || need+=(binutils)
# DejaVu Sans: the text of rshmem-bench report's PNG figures (read at run time).
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
# Python with venv and headers, to build shmem4py against rshmem (scripts/test-shmem4py.sh).
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
python3 -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
  >/dev/null 2>&1 || need+=(python3-dev)
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
