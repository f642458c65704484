#!/usr/bin/env bash
# Static checks CI runs: the include layers, no circle between files, clang-format, cppcheck,
# clang-tidy, shellcheck, mandoc on the man pages as built (their lists filled in), and
# systemd's security rating of numaplaced.service.
# Usage: scripts/lint.sh BUILD_DIR   (BUILD_DIR is built and has compile_commands.json)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: lint.sh BUILD_DIR}
cd "$top"

mapfile -t c_files < <(git ls-files '*.c' '*.h' 2>/dev/null || find lib policies plugin daemon cli test bench -name '*.[ch]')
mapfile -t sh_files < <(git ls-files '*.sh' .ci/run test/run-all test/vm/run test/vm/init scripts/main-job 2>/dev/null | sort -u)
status=0

bash scripts/lint-layers.sh || status=1
bash scripts/lint-cycles.sh "$build" || status=1

# The tracker's issue numbers mean nothing to a site that clones the product: code, comments,
# tests and documents say what a thing does or why, not which issue asked for it.
echo "lint: no issue numbers in code and documents"
# (bench/RESULTS.md and bench/history/ are dated records of runs, and may say what a run was for.)
if git grep -nE '\b[Ii]ssues? #?[0-9]+' -- lib policies plugin daemon cli etc scripts test docs debian cmake \
  bench ':!bench/RESULTS.md' ':!bench/history' CMakeLists.txt README.md DEVELOPERS.md; then
  echo "lint: an issue number above: say what the code does or why instead" >&2
  status=1
fi

# slurmstepd and numaplaced have threads that read the environment; a CPU set of fixed size
# (CPU_SETSIZE, 1,024) fails sched_getaffinity on a machine with more CPUs.
echo "lint: no environment writes, no fixed-size CPU sets in lib, policies, plugin, daemon, cli"
if grep -rnE '(^|[^_[:alnum:]])(setenv|unsetenv|putenv|clearenv) *\(|CPU_SETSIZE|cpu_set_t +[_[:alpha:]]' \
  --include='*.c' --include='*.h' lib policies plugin daemon cli; then
  echo "lint: the lines above change the environment or use a fixed-size cpu_set_t (use CPU_ALLOC)" >&2
  status=1
fi

echo "lint: clang-format (${#c_files[@]} files)"
clang-format --dry-run --Werror "${c_files[@]}" || status=1

echo "lint: cppcheck"
include_dirs=()
for dir in lib/*/ policies/*/; do include_dirs+=(-I "$dir"); done
cppcheck --quiet -j "$(nproc)" --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
  --std=c11 -D__GNUC__ -D_GNU_SOURCE --suppress=missingIncludeSystem \
  --suppress="unusedStructMember:test/unit/*" \
  "${include_dirs[@]}" "${c_files[@]}" || status=1

echo "lint: clang-tidy"
mapfile -t tidy_files < <(printf '%s\n' "${c_files[@]}" | grep -E '^(lib|policies|plugin|daemon|cli)/.*\.c$' || true)
# A few files a process, one process a processor: xargs fails when any of them did.
if [ ${#tidy_files[@]} -gt 0 ]; then
  printf '%s\0' "${tidy_files[@]}" |
    xargs -0 -n 6 -P "$(nproc)" clang-tidy --quiet -p "$build" 2>/dev/null || status=1
fi

if command -v shellcheck >/dev/null; then
  echo "lint: shellcheck (${#sh_files[@]} files)"
  [ ${#sh_files[@]} -eq 0 ] || shellcheck -x "${sh_files[@]}" || status=1
fi

# The pages as installed (lists filled in by docs/man_lists); without a build, their sources.
mapfile -t man_pages < <(ls "$build"/docs/*.[18] 2>/dev/null || ls docs/*.[18].in)
echo "lint: mandoc (${#man_pages[@]} pages)"
mandoc -Tlint -W warning "${man_pages[@]}" || status=1

# The unit as installed (ExecStart filled in by CMake): systemd's exposure rating at most 3.0.
if command -v systemd-analyze >/dev/null && [ -f "$build/etc/numaplaced.service" ]; then
  echo "lint: systemd-analyze security numaplaced.service (exposure 3.0 at most)"
  systemd-analyze security --offline=yes --threshold=30 "$build/etc/numaplaced.service" | tail -1 ||
    status=1
else
  echo "lint: systemd-analyze or $build/etc/numaplaced.service missing: unit exposure NOT checked" >&2
  status=1
fi

[ "$status" = 0 ] && echo "lint: clean" || echo "lint: FAILED" >&2
exit "$status"
