#!/usr/bin/env bash
# Benchmark of physics/boussinesq (figures, never pass/fail on time). From the repository root:
#   bash tests/bench/boussinesq/run.sh [--quick]
# For each grid: Ra = 1e6, no-slip, 4 x 1, RK222: 200 steps from strong noise (amplitude 0.1) with a
# fixed dt (so no refactorisation after the first step); -log_view gives the time per step and its
# parts (BqTransform = FFTs + pointwise products, BqDz = z-derivative matrix products, BqSolve =
# right-hand sides + LU solves, BqFactor, BqGather); test_bench_bq_fft times the same FFTs alone.
set -e
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FFT=build/tests/test_bench_bq_fft
W=build/bench-boussinesq; mkdir -p $W
grids="128,32 256,64 512,128"
[ "${1:-}" = "--quick" ] && grids="128,32 256,64"
printf "%-9s %9s %11s %9s %9s %9s %9s %9s %9s %11s\n" grid steps "s/step" "us/pt" transform fftw_only dz solve factor "fft/step%"
for g in $grids; do
  IFS=, read nx nz <<< "$g"
  steps=200
  bin/surge run inputs/boussinesq/rb_ra1e4.yaml -boussinesq_rayleigh 1e6 -boussinesq_length 4,1 -boussinesq_cells $g \
    -sim_dt 2e-3 -boussinesq_max_dt 1 -boussinesq_cfl 10 -sim_max_steps $steps -sim_t_end 1e9 -sim_diag_every 1000 \
    -sim_field_every 0 -boussinesq_noise 1e-1 -sim_output $W/b_$nx -log_view > $W/log_$nx.txt 2>&1
  ev() { awk -v e=$1 '$1==e {print $4}' $W/log_$nx.txt; }
  fft=$($FFT $nx $nz 2 20 | awk '/BENCH/ {print $5}')
  awk -v g=$g -v s=$steps -v nx=$nx -v nz=$nz -v st=$(ev SgSolverStep) -v tr=$(ev BqTransform) -v dz=$(ev BqDz) -v so=$(ev BqSolve) -v fa=$(ev BqFactor) -v ff=$fft \
    'BEGIN { ps=st/s; printf "%-9s %9d %11.3e %9.3f %9.3e %9.3e %9.3e %9.3e %9.3e %10.1f%%\n", g, s, ps, 1e6*ps/(nx*nz), tr/s, ff, dz/s, so/s, fa/s, 100*ff/ps }'
done
echo "(times per step in seconds; transform includes the products; fftw_only: the same transforms alone)"
