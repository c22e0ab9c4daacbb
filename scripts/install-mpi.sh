#!/usr/bin/env bash
# Installs what `cargo build --release --features mpi` and the distributed
# tests need on Debian/Ubuntu: Open MPI (library, headers, mpirun) and
# libclang with its headers (the mpi crate generates its bindings with
# bindgen, which needs both).
set -euo pipefail
if command -v mpirun >/dev/null && command -v mpicc >/dev/null \
    && ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 \
    && ls /usr/lib/llvm-*/lib/clang/*/include/stddef.h >/dev/null 2>&1; then
    echo "Open MPI and libclang are installed"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev
