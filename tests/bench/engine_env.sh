# Sourced by every benchmark that times surge against a reference engine (PyTorch): both engines run
# in this environment, so the same work is timed the same way. tests/bench/engine_env.py applies the
# same lines to a Python driver (it reads this file: one copy of the values).
#
# glibc serves a block above its mmap threshold (128 KiB, raised dynamically only after frees) with a
# fresh mmap and unmaps it at free. PyTorch 1.13's CPU allocator mallocs each new tensor, so on these
# VMs every large tensor of every step page-faults its pages in again and the step time measures the
# kernel zeroing pages (surge's engine keeps a block cache and barely notices). With both thresholds
# at 1 GiB (checked on Debian 12's glibc 2.36: a 100 MiB block then comes from the heap, not mmap)
# freed memory stays in the heap for both engines.
export MALLOC_MMAP_THRESHOLD_=1073741824
export MALLOC_TRIM_THRESHOLD_=1073741824
