#!/usr/bin/python3
"""Energy error of an NVE run from surge's thermo lines on stdin: max |E(t) - E(0)| (per atom)."""
import sys
e = [float(l.split()[6]) for l in sys.stdin if l.startswith("md thermo:") and l.split()[2] != "Step"]
print(max(abs(x - e[0]) for x in e))
