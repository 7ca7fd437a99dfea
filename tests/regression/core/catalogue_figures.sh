#!/usr/bin/env bash
# The figures of docs/errors.md from the last bad-input catalogue run (bad_input_catalogue.sh writes
# one line per case to tests/logs/work/core_bad_input_catalogue/cases.txt: ranks|exit|error lines|
# what was wrong|command). Prints: cases tried, clean lines, tracebacks, signals, hangs, silent
# accepts, files damaged. Usage: catalogue_figures.sh [cases.txt]
root=$(cd "$(dirname "$0")/../../.." && pwd)
f=${1:-$root/tests/logs/work/core_bad_input_catalogue/cases.txt}
[ -s "$f" ] || { echo "no $f: run tests/regression/core/bad_input_catalogue.sh first"; exit 1; }
awk -F'|' '
  { n++ }
  $3 != "run" && $4 == "" { clean++ }
  $3 == "run" && $4 == "" { ran++ }
  $4 ~ /traceback/ { tb++ }
  $2 > 128 && $2 != 124 { sig++ }
  $2 == 124 || $2 == 137 { hang++ }
  $3 != "run" && $2 == 0 { silent++ }
  $4 ~ /earlier files changed|wrote a file/ { dmg++ }
  END { printf "cases tried %d (%d must run, %d ran), clean lines %d, tracebacks %d, signals %d, hangs %d, silent accepts %d, files damaged %d\n", n, nrun, ran, clean, tb, sig, hang, silent, dmg }
  $3 == "run" { nrun++ }' "$f"
