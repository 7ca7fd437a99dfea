#!/usr/bin/env bash
# surge test runner.
#
# Usage: tests/runner.sh LIST [LIST ...]
#
# Each non-blank, non-comment line of a list is   NAME [timeout=SECONDS] COMMAND...
# COMMAND runs under bash from the repository root. It PASSES when it exits 0, is SKIPPED when it
# exits 77 (automake's convention: only for a documented optional prerequisite that is absent) AND its
# last output line is "SKIP: reason", and FAILS otherwise. Both are required because 77 alone is not a
# skip: it is also PETSC_ERR_PLIB, the status of a C test whose own PetscCheck failed.
#
# Time limit: every test has one, so a deadlocked MPI run fails instead of hanging `make check`.
# The default is 900 s (SURGE_TEST_TIMEOUT overrides it); a line may state its own with
# `timeout=SECONDS` after the name. SURGE_TEST_TIMEOUT_SCALE (default 1) multiplies every limit
# (tests/sanitize.sh raises it for the slower sanitized build). Each test runs in a session of its
# own; on expiry every process of that session (MPI ranks included) gets SIGTERM, then SIGKILL 10 s
# later, and the test FAILS as TIMEOUT. Whatever a test leaves running when it ends is ended too.
#
# $MPIEXEC (two ranks, oversubscribed) and $SURGE (the surge binary) are set for each test. One log
# per test lands in tests/logs/NAME.log; a failing test's tail is printed, a skipped test's reason.
# The last line is "N passed, N failed, N skipped"; the exit status is 0 only when none failed
# (SURGE_NO_SKIP=1 counts skips as failures, for a machine that must have every prerequisite).
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
default_limit=${SURGE_TEST_TIMEOUT:-900}
scale=${SURGE_TEST_TIMEOUT_SCALE:-1}
logs="$root/tests/logs"
mkdir -p "$logs"

# The processes of session $1 (a test and everything it started: Open MPI gives each rank its own
# process group, so killing the test's group would leave ranks behind; a session they keep).
session_pids() { ps -s "$1" -o pid= 2>/dev/null; }
# End what is left of session $1: SIGTERM, up to 10 s to go, then SIGKILL.
end_session() {
  local p i
  p=$(session_pids "$1")
  [ -n "$p" ] || return 0
  kill -TERM $p 2>/dev/null
  for i in $(seq 20); do
    [ -n "$(session_pids "$1")" ] || return 0
    sleep 0.5
  done
  p=$(session_pids "$1")
  [ -n "$p" ] && kill -KILL $p 2>/dev/null
  return 0
}
# run_test NAME CMD LIMIT: run CMD in a session of its own (setsid: the child is not a group
# leader, so setsid does not fork and the pid is the session id) with a watchdog that ends the
# session after LIMIT s; sets rc and timed_out.
current=
run_test() {
  local flag="$logs/.$1.timeout" wd
  rm -f "$flag"
  setsid bash -c "$2" > "$logs/$1.log" 2>&1 < /dev/null &
  current=$!
  (
    sleep "$3" &
    s=$!
    trap 'kill $s 2>/dev/null; exit 0' TERM
    wait $s
    : > "$flag"
    end_session "$current"
  ) &
  wd=$!
  wait "$current"
  rc=$?
  kill -TERM "$wd" 2>/dev/null
  wait "$wd" 2>/dev/null
  timed_out=0
  if [ -e "$flag" ]; then
    timed_out=1
    rm -f "$flag"
    echo "runner: $1: killed after its time limit of $3 s" >> "$logs/$1.log"
  fi
  end_session "$current"
  current=
}
# cpu_now: CPU seconds (user + system) of this shell's reaped children and their reaped descendants: the
# difference around a test is what the test's processes used (MPI ranks included), a figure that,
# unlike the wall time, hardly moves when other jobs share the cores (CI-time planning)
children_cpu() {
  local t
  times > "$logs/.times.$$"   # a builtin with a redirection runs in this shell; $(times) would not
  t=$(tail -n 1 "$logs/.times.$$")
  cpu_now=$(awk -v t="$t" 'BEGIN{split(t, a, /[ ms]+/); printf "%.3f", a[1]*60 + a[2] + a[3]*60 + a[4]}')
}
trap '[ -n "$current" ] && end_session "$current"; exit 130' INT TERM
pass=0 fail=0 skip=0 failed=() skipped=()
for list in "$@"; do
  [ -f "$list" ] || { echo "runner: no test list '$list'" >&2; fail=$((fail+1)); failed+=("$list"); continue; }
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in ''|'#'*) continue ;; esac
    name=${line%%[[:space:]]*}
    cmd=${line#"$name"}
    limit=$default_limit
    rest=${cmd#"${cmd%%[![:space:]]*}"}
    case "$rest" in
      timeout=*)
        word=${rest%%[[:space:]]*}
        limit=${word#timeout=}
        cmd=${rest#"$word"}
        case "$limit" in ''|*[!0-9]*)
          echo "runner: $list: test '$name': timeout= wants whole seconds, not '$limit'" >&2
          fail=$((fail+1)); failed+=("$name"); continue ;;
        esac ;;
    esac
    limit=$(awk -v l="$limit" -v s="$scale" 'BEGIN{printf "%d", l*s + 0.5}')
    start=$(date +%s.%N)
    children_cpu
    cpu0=$cpu_now
    run_test "$name" "$cmd" "$limit"
    el=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
    children_cpu
    cpu=$(awk -v a="$cpu0" -v b="$cpu_now" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -eq 0 ]; then
      pass=$((pass+1)); status=PASS
    elif [ $rc -eq 77 ] && [ "${SURGE_NO_SKIP:-0}" != 1 ] && tail -n 1 "$logs/$name.log" | grep -q '^SKIP: '; then
      skip=$((skip+1)); status=SKIP; skipped+=("$name")
    elif [ $timed_out = 1 ]; then
      fail=$((fail+1)); status=TIMEOUT; failed+=("$name")
    else
      # 77 without the SKIP: line is a failure: PETSc's PETSC_ERR_PLIB is 77, so a C test whose own
      # check fails exits 77 (seen: a broken 2-rank checkpoint read was counted as a skip)
      [ $rc -eq 77 ] && echo "runner: $name: exit status 77 but the last line is not 'SKIP: reason': counted as a failure" >> "$logs/$name.log"
      fail=$((fail+1)); status=FAIL; failed+=("$name")
    fi
    printf '%-7s %-40s %6ss  cpu %6ss\n' "$status" "$name" "$el" "$cpu"
    case $status in
      FAIL|TIMEOUT) tail -n 15 "$logs/$name.log" | sed 's/^/    | /' ;;
      SKIP) tail -n 1 "$logs/$name.log" | sed 's/^/    | /' ;;
    esac
  done < "$list"
done
rm -f "$logs/.times.$$"
[ ${#skipped[@]} -gt 0 ] && echo "skipped: ${skipped[*]}"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
