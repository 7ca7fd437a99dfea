#!/usr/bin/env bash
# Every example deck in inputs/md parses (every key is read by someone: an unused key is an error)
# and sets up: run each for 0 steps and check the step-0 thermo line.  Every force provider a deck
# names (lj, tb, the surrogates) is registered in every build (src/cli/register.c), so a deck that
# fails with "no force provider" FAILS: nothing here is optional.  Ensemble decks (an ensemble: section)
# run as `surge ensemble` with one member of 0 steps.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0 n=0
for deck in "$root"/inputs/md/*.yaml; do
  name=$(basename "$deck" .yaml)
  n=$((n+1))
  if grep -q '^ensemble:' "$deck"; then
    if "$SURGE" ensemble "$deck" -ensemble_output "$name" -ensemble_members 1 -sim_max_steps 0 > "$name.log" 2>&1 && grep -q "ran 1 members" "$name.log"; then
      echo "ok   $name (ensemble): $(grep -m1 '^md: ' "$name.log" | cut -c1-100)"
    else
      echo "FAIL $name:"; tail -3 "$name.log"; fails=$((fails+1))
    fi
    continue
  fi
  if "$SURGE" run "$deck" -sim_output "$name" -sim_max_steps 0 -md_thermo_every 1 > "$name.log" 2>&1 && grep -q "md thermo: *0 " "$name.log"; then
    echo "ok   $name: $(grep -m1 '^md: ' "$name.log" | cut -c1-110)"
  else
    echo "FAIL $name:"; tail -3 "$name.log"; fails=$((fails+1))
  fi
done
echo "$n decks, $fails failed"
[ $n -gt 0 ] && [ $fails -eq 0 ]
