#!/bin/bash
# OpenBLAS falls back to its SSE3 "Prescott" kernels on CPUs whose cpuid model it does not know (this
# project's VMs). surge then names the core type itself (src/cli/main.c, README "Performance note");
# `surge --version` reports the kernels in use. Checks: on such a CPU surge runs SkylakeX kernels
# (AVX-512) or Haswell (AVX2); where OpenBLAS detects the CPU itself surge leaves its choice alone;
# OPENBLAS_CORETYPE set by the user wins; SURGE_KEEP_BLAS_CORE=1 turns the fix off.
set -u
S=${SURGE:-bin/surge}
kernels() { "$@" "$S" --version | sed -n 's/.*OpenBLAS kernels: \(.*\))$/\1/p'; }
core=$(kernels env -u OPENBLAS_CORETYPE -u SURGE_KEEP_BLAS_CORE)
own=$(kernels env -u OPENBLAS_CORETYPE SURGE_KEEP_BLAS_CORE=1)
given=$(kernels env OPENBLAS_CORETYPE=Haswell)
echo "surge: $core; OpenBLAS on its own: $own; OPENBLAS_CORETYPE=Haswell: $given"
want=$own
if [ "$own" = Prescott ]; then
  if grep -q avx512f /proc/cpuinfo; then want=SkylakeX; elif grep -q avx2 /proc/cpuinfo; then want=Haswell; fi
fi
fail=0
[ -n "$core" ] || { echo "FAIL: surge --version does not report the OpenBLAS kernels"; fail=1; }
[ "$core" = "$want" ] || { echo "FAIL: surge runs $core kernels, expected $want"; fail=1; }
[ "$given" = Haswell ] || { echo "FAIL: OPENBLAS_CORETYPE=Haswell not honoured ($given)"; fail=1; }
exit $fail
