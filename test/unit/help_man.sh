#!/usr/bin/env bash
# Every program's --help against its man page: the options each lists are the same.
#   numaplace: per command, the options its usage line shows (printed from the command's table,
#   cli/options.c) and the options on the page's entries for that command (a .TP entry's
#   first line), and the options before the command against the SYNOPSIS;
#   numaplaced: every configuration key its --help names is on its page, and its flags are;
#   numaplace-run-scenario: its usage's options and the page's OPTIONS entries.
# Also: every option taking a value is accepted as --opt=VALUE (numaplace's table-wide check is
# test_cli_options; here the programs themselves, where no Slurm is needed).
# Usage: help_man.sh NUMAPLACE NUMAPLACED RUN_SCENARIO MAN_DIR
set -euo pipefail
numaplace=$1 numaplaced=$2 run_scenario=$3 man=$4
fail() { echo "help_man: $*" >&2; exit 1; }
roff() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/"//g' -e 's/^\.[A-Z]* //' "$@"; }
options() { { grep -o -- '--[a-z][a-z-]*' || true; } | sort -u | tr '\n' ' '; }
same() { # same WHAT HELP_OPTIONS MAN_OPTIONS
  [ "$2" = "$3" ] || fail "$1: --help lists [$2], the man page [$3]"
  checked=$((checked + 1))
}
checked=0

help=$("$numaplace" --help)
# The options before the command: the usage's first line against the SYNOPSIS.
same "numaplace" "$(head -1 <<<"$help" | options)" \
  "$(awk '/^\.SH SYNOPSIS/ {on = 1; next} /^\.SH/ {on = 0} on' "$man/numaplace.1" | roff | options)"
# Each command: its usage line against its entries' first lines (.TP, then the entry's line).
commands=$(sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' <<<"$help")
[ "$(wc -w <<<"$commands")" -ge 10 ] || fail "numaplace --help lists too few commands: $commands"
for cmd in $commands; do
  from_help=$(grep -E "^  $cmd( |$)" <<<"$help" | options)
  from_man=$(awk -v cmd="$cmd" 'prev == ".TP" { split($0, w, " "); if (w[2] == cmd || w[2] == "\"" cmd) print } { prev = $0 }' \
    <(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man/numaplace.1") | options)
  same "numaplace $cmd" "$from_help" "$from_man"
done

# numaplaced: its flags on the page; every key it names in --help documented there.
dhelp=$("$numaplaced" --help)
dpage=$(roff "$man/numaplaced.8")
for flag in --config --check-config; do
  grep -q -- "$flag" <<<"$dhelp" || fail "numaplaced --help lacks $flag"
  grep -q -- "$flag" <<<"$dpage" || fail "numaplaced(8) lacks $flag"
done
keys=$(sed -n 's/.*Keys: \(.*\)\..*/\1/p' <<<"$dhelp" | tr -d ',')
[ "$(wc -w <<<"$keys")" -ge 10 ] || fail "numaplaced --help names too few keys: $keys"
for key in $keys; do
  grep -qw -- "$key" <<<"$dpage" || fail "numaplaced --help names key $key, numaplaced(8) does not"
  checked=$((checked + 1))
done

# numaplace-run-scenario: its usage against the page's OPTIONS entries.
same "numaplace-run-scenario" "$(bash "$run_scenario" --help | sed '/^Runs /,$d' | options)" \
  "$(awk '/^\.SH OPTIONS/ {on = 1; next} /^\.SH/ {on = 0} on && prev == ".TP" {print} {prev = $0}' "$man/numaplace-run-scenario.1" | roff | options)"

# --opt=VALUE where the program refuses the value itself, so no Slurm or helper is needed:
# the refusal names the value, which it could only have taken from after the '='.
says() { # says TEXT COMMAND...: the command's output (it fails) holds TEXT
  local want=$1 out
  shift
  out=$("$@" 2>&1) || true
  grep -qF -- "$want" <<<"$out"
}
says "--seconds: accepted" "$numaplace" characterize --seconds=99 ||
  fail "numaplace characterize --seconds=99 not parsed as --seconds 99"
says '--from "x"' "$numaplace" migrate --from=x --to 1 --pages 1 ||
  fail "numaplace migrate --from=x not parsed as --from x"
says /nonexistent/np.sock "$numaplace" --socket=/nonexistent/np.sock ping ||
  fail "numaplace --socket=PATH not taken"
says '--bind "bogus"' bash "$run_scenario" --bind=bogus x.json ||
  fail "numaplace-run-scenario --bind=bogus not parsed as --bind bogus"
says /nonexistent/np.conf "$numaplaced" --check-config --config=/nonexistent/np.conf ||
  fail "numaplaced --config=FILE not taken"
echo "help_man: ok ($checked lists compared)"
