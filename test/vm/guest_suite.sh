#!/usr/bin/env bash
# Shared by the host-side guest suites: where things are, and a loud skip when QEMU is missing.
# shellcheck disable=SC2034 # used by the scripts that source this
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${NUMAPLACE_BUILD:-$top/build}
# A suite of another machine sets guest_qemu first (qemu-system-aarch64 for the arm64 guest).
guest_qemu=${guest_qemu:-qemu-system-x86_64}
if ! command -v "$guest_qemu" >/dev/null; then
  echo "!!!! SKIPPED: $guest_qemu is not installed, the multi-NUMA guest cannot run here !!!!"
  exit 77
fi
cd "$top" || exit 1
