#!/usr/bin/env bash
# surge test runner.
#
# Usage: tests/runner.sh LIST [LIST ...]
#
# Each non-blank, non-comment line of a list is   NAME  COMMAND...
# COMMAND runs under bash from the repository root; it passes when it exits 0.
# $MPIEXEC (two ranks, oversubscribed) and $SURGE (the surge binary) are set
# for it. One log per test lands in tests/logs/NAME.log; a failing test's tail
# is printed. The last line is "N passed, N failed", which CI reads.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# A private Open MPI session-directory base for this run: every MPI process on the machine otherwise
# shares /tmp/ompi.HOST.UID, which one process's clean-up removes when it looks empty while another is
# creating its job directory in it ("A call to mkdir was unable to create the desired directory" and
# MPI_Init fails: seen with other test runs on the same machine). A short path: PMIx puts sockets there.
if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ]; then
  OMPI_MCA_orte_tmpdir_base=$(mktemp -d /tmp/sgtest.XXXXXX) || exit 2
  export OMPI_MCA_orte_tmpdir_base
  trap 'rm -rf "$OMPI_MCA_orte_tmpdir_base"' EXIT
fi
# Tests time themselves against each other, never against the clock; keep
# BLAS/OpenMP single-threaded so two MPI ranks do not fight over two cores.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export SURGE=${SURGE:-"$root/bin/surge"}
logs="$root/tests/logs"
mkdir -p "$logs"
pass=0 fail=0 failed=()
for list in "$@"; do
  [ -f "$list" ] || { echo "runner: no test list '$list'" >&2; fail=$((fail+1)); continue; }
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in ''|'#'*) continue ;; esac
    name=${line%%[[:space:]]*}
    cmd=${line#"$name"}
    start=$(date +%s.%N)
    if bash -c "$cmd" > "$logs/$name.log" 2>&1 < /dev/null; then
      pass=$((pass+1)); status=PASS
    else
      fail=$((fail+1)); status=FAIL; failed+=("$name")
    fi
    t=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
    printf '%s  %-40s %6ss\n' "$status" "$name" "$t"
    if [ $status = FAIL ]; then tail -n 15 "$logs/$name.log" | sed 's/^/    | /'; fi
  done < "$list"
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
