#!/usr/bin/env bash
# Static checks CI runs: the include layers, no circle between files, clang-format, cppcheck,
# clang-tidy, shellcheck.
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

echo "lint: clang-format (${#c_files[@]} files)"
clang-format --dry-run --Werror "${c_files[@]}" || status=1

echo "lint: cppcheck"
include_dirs=()
for dir in lib/*/ policies/*/; do include_dirs+=(-I "$dir"); done
cppcheck --quiet --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
  --std=c11 -D__GNUC__ -D_GNU_SOURCE --suppress=missingIncludeSystem \
  --suppress="unusedStructMember:test/unit/*" \
  "${include_dirs[@]}" "${c_files[@]}" || status=1

echo "lint: clang-tidy"
mapfile -t tidy_files < <(printf '%s\n' "${c_files[@]}" | grep -E '^(lib|policies|plugin|daemon|cli)/.*\.c$' || true)
if [ ${#tidy_files[@]} -gt 0 ]; then
  clang-tidy --quiet -p "$build" "${tidy_files[@]}" 2>/dev/null || status=1
fi

if command -v shellcheck >/dev/null; then
  echo "lint: shellcheck (${#sh_files[@]} files)"
  [ ${#sh_files[@]} -eq 0 ] || shellcheck -x "${sh_files[@]}" || status=1
fi

[ "$status" = 0 ] && echo "lint: clean" || echo "lint: FAILED" >&2
exit "$status"
