#!/usr/bin/env bash
# Build numaplace's Debian packages for the Debian release of this machine (or root).
#   scripts/build-debs.sh OUT_DIR [DPKG_BUILDPACKAGE_OPTIONS...]      -> OUT_DIR/*.deb
# (-a arm64: cross-built for arm64, as test/packaging/in_root.sh bookworm-arm64 does.)
# Builds from a copy of the work tree (uncommitted changes too), so the checkout gets no debian/
# build litter; needs the Build-Depends of debian/control (scripts/install-deps.sh has them).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: build-debs.sh OUT_DIR [DPKG_BUILDPACKAGE_OPTIONS...]}" && cd "$1" && pwd)
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/numaplace"
tar -C "$top" --exclude='./build*' --exclude='./_install' --exclude=./.git -cf - . |
  tar -C "$work/numaplace" -xf -
(cd "$work/numaplace" && dpkg-buildpackage -us -uc -b -j"$(nproc)" "$@") >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; echo "build-debs: dpkg-buildpackage failed" >&2; exit 1; }
cp "$work"/*.deb "$out/"
echo "build-debs: packages in $out:"
find "$out" -maxdepth 1 -name '*.deb' -printf '  %f\n' | sort
