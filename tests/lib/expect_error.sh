#!/usr/bin/env bash
# A refusal test for the lists: run a command that must fail, and check both how and why.
#
# Usage: tests/lib/expect_error.sh STATUS MESSAGE COMMAND [ARG ...]
#
# Passes only when COMMAND exits with exactly STATUS (e.g. 95, PETSC_ERR_USER_INPUT, for a unit test
# program whose PETSc error reaches main; 1 for `surge`, which prints "surge: error: ..." and exits 1)
# AND its output (stdout and stderr) holds MESSAGE as a fixed string. Exit 0 with the right words
# printed, a signal, another error or the right code for another reason all fail, naming what was seen.
set -u
[ $# -ge 3 ] || { echo "usage: $0 STATUS MESSAGE COMMAND [ARG ...]" >&2; exit 2; }
want=$1 msg=$2
shift 2
case "$want" in ''|*[!0-9]*) echo "expect_error: STATUS '$want' is not an exit status" >&2; exit 2 ;; esac
out=$("$@" 2>&1)
rc=$?
line=$(printf '%s\n' "$out" | grep -F -m1 -- "$msg")
if [ "$rc" -ne "$want" ] || [ -z "$line" ]; then
  printf '%s\n' "$out" | tail -n 20
  echo "FAIL: '$*' exited $rc (want $want); the message '$msg' was $([ -n "$line" ] && echo found || echo NOT found)"
  exit 1
fi
echo "ok: exit $rc and: $line"
