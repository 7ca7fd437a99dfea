#!/usr/bin/env bash
# Benchmark of physics/boussinesq (figures, never pass/fail on time). From the repository root:
#   bash tests/bench/boussinesq/run.sh [--quick]
# For each grid: Ra = 1e6, no-slip, 4 x 1, RK222 (2 stages), one rank: 800, 400, 200 steps from strong noise
# (amplitude 0.1) with a fixed dt (one factorisation, at the first step). The solver's -log_view
# gives the time per step and its parts:
#   transform = BqTransform: the FFTs of the advection terms with their fills and pointwise products
#   dz        = BqDz: z-derivative matrix products (BLAS gemm)
#   linear    = BqLinear: M X and L X of the implicit operators (gemm)
#   solve     = BqSolve: right-hand sides and the LU solves of every mode (LAPACK getrs)
#   factor    = BqFactor: the LU factorisation of every mode (here once per run, per step amortised)
#   rest      = the step minus these: copies of the stage sums, gathers (none on one rank)
# and test_bench_bq_kernels times the two kernels alone with the solver's sizes and counts:
#   fftw      = every FFTW transform of a step (11 per row and stage; the CFL estimate, outside the
#               step event, adds 3 per row per step and is in neither figure)
#   getrs     = every getrs of a step (2 nk + 1 per stage)
# Shares are of the solver's time per step. All figures are CPU seconds: the development machine is
# shared, and its wall clock also counts the time other processes hold the core. The solver's event
# times (wall clock, from -log_view) are scaled by the run's CPU time over its wall time (from
# /usr/bin/time), which assumes the run was descheduled evenly; the kernels are timed with the
# process CPU clock. Each solver figure is from the fastest of 3 runs (in CPU time per step), each
# kernel figure the fastest of 5 trials.
set -e
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
K=build/tests/test_bench_bq_kernels
[ -x bin/surge ] && [ -x $K ] || { echo "bench/boussinesq: build first (make tests): bin/surge or $K is missing"; exit 1; }
W=build/bench-boussinesq; mkdir -p $W
grids="128,32 256,64 512,128"
[ "${1:-}" = "--quick" ] && grids="128,32 256,64"
printf "%-8s %9s %7s | %9s %9s %9s %9s %9s %9s %9s | %9s %9s | %6s %6s %6s\n" grid "s/step" "us/pt" transform dz linear solve factor rest "" fftw getrs "fftw%" "getrs%" "sum%"
for g in $grids; do
  IFS=, read nx nz <<< "$g"
  steps=$((200 * 512 / nx)) # 800, 400, 200: the steps outweigh the start-up in the CPU/wall scaling
  best=""
  for rep in 1 2 3; do
    /usr/bin/time -f "CPUTIME %U %S %e" -o $W/time_${nx}_$rep.txt bin/surge run inputs/boussinesq/rb_ra1e4.yaml -boussinesq_rayleigh 1e6 \
      -boussinesq_length 4,1 -boussinesq_cells $g -sim_dt 2e-3 -boussinesq_max_dt 1 -boussinesq_cfl 10 -sim_max_steps $steps \
      -sim_t_end 1e9 -sim_diag_every 1000 -sim_field_every 0 -boussinesq_noise 1e-1 -sim_output $W/b_$nx -log_view > $W/log_${nx}_$rep.txt 2>&1
    # CPU/wall of the run, and the CPU time of its steps
    cw=$(awk '/^CPUTIME/ {print ($2 + $3) / $4}' $W/time_${nx}_$rep.txt)
    t=$(awk -v c=$cw '$1=="SgSolverStep" {print $4 * c}' $W/log_${nx}_$rep.txt)
    if [ -z "$best" ] || awk -v a=$t -v b=$bt 'BEGIN {exit !(a < b)}'; then best=$rep; bt=$t; bcw=$cw; fi
  done
  L=$W/log_${nx}_$best.txt
  ev() { awk -v e=$1 -v c=$bcw '$1==e {print $4 * c}' $L; }
  read fftw getrs < <($K $nx $nz 2 20 | awk '/^FFTW/ {f=$5} /^ZSOLVE/ {z=$5} END {print f, z}')
  awk -v g=$g -v s=$steps -v nx=$nx -v nz=$nz -v st=$(ev SgSolverStep) -v tr=$(ev BqTransform) -v dz=$(ev BqDz) -v li=$(ev BqLinear) \
      -v so=$(ev BqSolve) -v fa=$(ev BqFactor) -v ff=$fftw -v gs=$getrs \
    'BEGIN { ps = st / s; rest = ps - (tr + dz + li + so + fa) / s;
             printf "%-8s %9.3e %7.3f | %9.3e %9.3e %9.3e %9.3e %9.3e %9.3e %9s | %9.3e %9.3e | %5.1f%% %5.1f%% %5.1f%%\n",
               g, ps, 1e6 * ps / (nx * nz), tr / s, dz / s, li / s, so / s, fa / s, rest, "", ff, gs, 100 * ff / ps, 100 * gs / ps, 100 * (ff + gs) / ps }'
done
echo "(CPU seconds per step; grid = nx,nz; us/pt = microseconds per step and grid point; left: the solver's parts;"
echo " right: FFTW and LAPACK getrs alone for the same work, and their shares of the solver's step)"
