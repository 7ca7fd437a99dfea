"""The benchmark environment of tests/bench/engine_env.sh for a Python driver that times PyTorch in
its own process: call same_env(threads) before importing torch. When this process was started
without those variables (or with other thread counts) it re-executes itself with them, because glibc
and OpenBLAS read them at start-up only; the child processes it starts (surge's benchmark programs)
inherit the same environment."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def engine_env(threads):
    env = {}
    with open(os.path.join(HERE, "engine_env.sh")) as f:
        for line in f:
            m = re.match(r"export (\w+)=(\S+)\s*$", line)
            if m:
                env[m.group(1)] = m.group(2)
    if not env:
        sys.exit("engine_env.py: no 'export NAME=VALUE' line in engine_env.sh")
    t = str(threads)
    env.update(OPENBLAS_NUM_THREADS=t, OMP_NUM_THREADS=t, SGNN_NUM_THREADS=t)
    return env


def same_env(threads):
    want = engine_env(threads)
    if any(os.environ.get(k) != v for k, v in want.items()):
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **want))
