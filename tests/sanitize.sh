#!/usr/bin/env bash
# make check-sanitize: the whole suite (tests/lists/*.list) against the ASan + UBSan build that
# `make check-sanitize` puts in build-san/, bin-san/ and surrogates/nn/build-san/.
#
# The lists name build/..., bin/surge and surrogates/nn/build/..., so the suite runs in a shadow
# tree (build-san/tree) whose build, bin and surrogates/nn/build point at the sanitized build and
# everything else at the repository: the tests themselves are not changed, the normal build is
# never touched, and the logs land in build-san/tree/tests/logs.
#
# Every report is an error: halt_on_error=1 for both sanitizers (the code is also compiled with
# -fno-sanitize-recover=all), and reports go to files under build-san/reports, so a report is
# counted even in a test that expects its command to fail (a bad-input test sees exit 1 either way).
# Leak detection is off: even a clean 0.1-time-unit Landau run reports 122 KB in 3357 allocations
# at exit, made by Open MPI and the components it dlopens (unloaded before LeakSanitizer runs, so
# their frames read "<unknown module>" and no suppression by library name can match them). Memory
# errors (overflows, use after free) and undefined behaviour are what this target guards; the one
# leak of our own that was reported (a refused vlasov run's FFTW arrays) is fixed at its cause.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
san=$root/build-san/tree
reports=$root/build-san/reports
[ -x "$root/bin-san/surge" ] || { echo "sanitize: bin-san/surge missing: run make check-sanitize"; exit 2; }
rm -rf "$san" "$reports"
mkdir -p "$san/tests/logs" "$san/surrogates/nn" "$reports"
for e in "$root"/*; do
  n=$(basename "$e")
  case $n in build | bin | build-san | bin-san | tests | surrogates) ;; *) ln -s "$e" "$san/$n" ;; esac
done
ln -s "$root/build-san" "$san/build"
ln -s "$root/bin-san" "$san/bin"
for e in "$root"/tests/*; do [ "$(basename "$e")" = logs ] || ln -s "$e" "$san/tests/"; done
for e in "$root"/surrogates/*; do [ "$(basename "$e")" = nn ] || ln -s "$e" "$san/surrogates/"; done
for e in "$root"/surrogates/nn/*; do
  case $(basename "$e") in build | build-san) ;; *) ln -s "$e" "$san/surrogates/nn/" ;; esac
done
ln -s "$root/surrogates/nn/build-san" "$san/surrogates/nn/build"

# tests that compare against bits stored from the optimised build (-O3 -march=native) check their
# numbers to a tolerance in this -O1 build instead (see tests/regression/deepmd/trainer_ref.sh)
export SURGE_SANITIZED=1
# the -O1 sanitized build runs several times slower: every test's time limit (tests/runner.sh) x 4
export SURGE_TEST_TIMEOUT_SCALE=${SURGE_TEST_TIMEOUT_SCALE:-4}
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:log_path=$reports/asan:print_summary=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
start=$(date +%s)
lists=${SANITIZE_LISTS:-$(cd "$san" && ls tests/lists/*.list)}

# SANITIZE_JOBS streams (default 2) take the lists off one queue, a list at a time (a list's tests
# stay in their order, one after the other; tests have their own names, logs and scratch folders, so
# two lists can run at once). Why: one stream leaves a core idle much of the time (one-rank runs,
# Python, mpiexec's 1 s grace after every refused 2-rank run: the fuzz list used 387 CPU-s in 804 s),
# and in CI this suite runs beside make check and ends ~20 minutes after it, alone. The heaviest lists
# go first so the streams end together (sanitized wall per list in a CI run: fuzz 804 s, vlasov 569,
# deepmd 482, core 461, mffn 445, the rest <= 174); a stale order costs time, never a result.
jobs=${SANITIZE_JOBS:-2}
heavy=" fuzz vlasov deepmd core mffn "
queue=$root/build-san/queue
: > "$queue"
for h in $heavy; do
  for l in $lists; do [ "$(basename "$l" .list)" = "$h" ] && echo "$l" >> "$queue"; done
done
for l in $lists; do
  case "$heavy" in *" $(basename "$l" .list) "*) ;; *) echo "$l" >> "$queue" ;; esac
done
# worker N: runs lists off the queue until it is empty; its output goes to build-san/streamN.log
worker() {
  local l
  while :; do
    l=$(flock "$queue.lock" sh -c 'l=$(head -n 1 "$1"); [ -n "$l" ] && sed -i 1d "$1"; echo "$l"' sh "$queue")
    [ -n "$l" ] || break
    (cd "$san" && tests/runner.sh "$l")
  done > "$root/build-san/stream$1.log" 2>&1
}
rm -f "$root"/build-san/stream*.log # an earlier run's, perhaps with more streams: the totals read them all
pids=()
for w in $(seq "$jobs"); do
  worker "$w" &
  pids+=($!)
done
wait "${pids[@]}"
# every list's runner ends with "N passed, N failed, N skipped": the suite's line is their sum
for w in $(seq "$jobs"); do
  echo "== sanitized stream $w of $jobs"
  cat "$root/build-san/stream$w.log"
done
totals=$(cat "$root"/build-san/stream*.log | awk '/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5; n++} END {printf "%d %d %d %d", p, f, s, n}')
read -r npass nfail nskip nruns <<< "$totals"
nlists=$(echo $lists | wc -w)
rc=0
if [ "$nruns" -ne "$nlists" ]; then
  echo "sanitize: $nruns of $nlists lists reported a result"
  rc=1
fi
[ "$nfail" -eq 0 ] || rc=1
echo "$npass passed, $nfail failed, $nskip skipped"
nrep=$(find "$reports" -type f | wc -l)
echo "sanitize: $(($(date +%s) - start)) s in $jobs streams, $nrep sanitizer report(s)"
if [ "$nrep" -gt 0 ]; then
  for f in "$reports"/*; do echo "== $f"; head -n 30 "$f"; done
  exit 1
fi
exit $rc
