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
