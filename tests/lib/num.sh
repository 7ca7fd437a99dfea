# Number extraction for the shell tests (source it). A test that reads a figure from a log must get a
# number or fail: awk reads an empty string, "nan" or an error message as 0, and a comparison of 0
# with 0 passes. These helpers print the number on stdout, or a FAIL line on stderr and return 1;
# use them as   x=$(sg_num "what" "$text") || exit 1   (set -e alone does the same).

# sg_num WHAT TEXT: TEXT when it is one finite decimal number (sign, digits, point, exponent)
sg_num() {
  local re='^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$'
  if [[ $2 =~ $re ]]; then
    printf '%s\n' "$2"
  else
    echo "FAIL: $1: '$2' is not a number" >&2
    return 1
  fi
}

# sg_grep_num WHAT FILE REGEX: the first match of the extended REGEX in FILE must hold one group
# (...) that is a number; prints it (e.g. sg_grep_num "energy" run.log 'E = ([^ ]+) eV')
sg_grep_num() {
  local line
  line=$(grep -m1 -E -- "$3" "$2") || { echo "FAIL: $1: no line matching '$3' in $2" >&2; return 1; }
  [[ $line =~ $3 ]] || { echo "FAIL: $1: '$3' did not match '$line'" >&2; return 1; }
  sg_num "$1" "${BASH_REMATCH[1]}"
}
