#!/usr/bin/env bash
# Deck fuzzer: tests/fuzz/run.sh N [--seed S] [--start K] [--classes a,b] [--jobs J] [--case S:I]
# runs N mutated decks (see tests/fuzz/fuzz.py for the classes and the pass rule); exit 0 when every
# case got a clean answer. Build first (make); failures are saved under tests/logs/fuzz/.
cd "$(dirname "$0")/../.." || exit 2
exec /usr/bin/python3 tests/fuzz/fuzz.py "$@"
