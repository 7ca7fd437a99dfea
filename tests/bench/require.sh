# Sourced by the benchmarks: each checks for its reference before it measures anything, and without it
# stops (exit 2) with one line naming the command that installs it. The references (CP2K, LAMMPS,
# PyTorch, matplotlib for the figures) are never dependencies of surge itself; ./configure --with-bench
# installs all of them (README, "What the commands install").
#   bench_require_cmd BENCH COMMAND DEBIAN-PACKAGE
#   bench_require_py  BENCH MODULE DEBIAN-PACKAGE
#   bench_require_file BENCH FILE DEBIAN-PACKAGE
bench_require_cmd() {
  command -v "$2" > /dev/null 2>&1 || { echo "bench $1: needs $2 (Debian $3), its reference: run ./configure --with-bench" >&2; exit 2; }
}
bench_require_py() {
  /usr/bin/python3 -c "import $2" > /dev/null 2>&1 || { echo "bench $1: needs the Python module $2 (Debian $3): run ./configure --with-bench" >&2; exit 2; }
}
bench_require_file() {
  [ -f "$2" ] || { echo "bench $1: needs $2 (Debian $3): run ./configure --with-bench" >&2; exit 2; }
}
# Figures need a quiet machine. Linux's autogroup scheduling (on by default in Debian) shares the cores
# between terminal sessions equally, whatever their nice values: another session's `nice -n 19` build
# took ~50% of a core from a benchmark here (29 Nov; figures off by 20-70%). Say so when it applies.
bench_note_load() {
  local ag load cores
  ag=$(cat /proc/sys/kernel/sched_autogroup_enabled 2> /dev/null || echo 0)
  load=$(cut -d' ' -f1 /proc/loadavg)
  cores=$(getconf _NPROCESSORS_ONLN)
  if [ "$ag" = 1 ] && awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 0.5 * c) }'; then
    echo "bench: note: load $load on $cores cores and the kernel's autogroup is on, so other sessions' processes share the cores with this benchmark whatever their nice value; for figures, run on a quiet machine (as root, 'echo 0 > /proc/sys/kernel/sched_autogroup_enabled' lets nice hold)" >&2
  fi
  return 0
}
bench_note_load
