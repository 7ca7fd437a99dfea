"""Deck errors: every mistake in a deck's text is one line 'surge: error: DECK:LINE:COL: what, and
the fix', exit 1, and nothing is written. Each case is a small deck with a known mistake at a known
place; the test checks the message fragment, the exact line:col, that the output is that one line
(on 1 rank; on 2 ranks exactly one such line among mpiexec's own notice), and that the run left
nothing but the deck in its folder.

    deck_errors_test.py GROUP     (groups: syntax shape duplicates bytes unknown precedence mpi)
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

HEAT = b"sim:\n  solver: heat\n  t_end: 0.02\nheat:\n  cells: [8, 8]\n  kappa: 1.0\n"

# (name, deck bytes, expected line:col, expected fragment)
GROUPS = {
    "syntax": [
        ("unclosed_bracket", b"sim:\n  solver: heat\nheat:\n  cells: [32, 24\n  kappa: 1\n", "5:8", "list opened with '[' at line 4 column 10 is not closed"),
        ("unclosed_brace", b"sim:\n  solver: heat\nheat: {cells: [32, 24], kappa: 1\n", "4:1", "mapping opened with '{' at line 3 column 7 is not closed"),
        ("unclosed_quote", b"sim:\n  solver: \"heat\n  t_end: 1\n", "4:1", "quoted value opened at line 2 column 11 is not closed"),
        ("tab_indent", b"sim:\n\tsolver: heat\n", "2:1", "tab in the indentation"),
        ("tab_after_spaces", b"sim:\n  solver: heat\nheat:\n  \tkappa: 1\n", "4:3", "tab in the indentation"),
        ("deeper_indent", b"sim:\n  solver: heat\n   t_end: 1\n", "3:9", "indented deeper than the key above it"),
        ("shallower_indent", b"sim:\n  solver: heat\n t_end: 1\n", "3:2", "does not line up with the keys of its section"),
        ("second_document", b"sim:\n  solver: heat\n---\nheat:\n  kappa: 1\n", "3:1", "a second YAML document"),
        ("key_not_a_name", b"sim:\n  solver: heat\n  t-end: 1\n", "3:3", "key 't-end' is not a name"),
        ("empty_key", b"sim:\n  solver: heat\n  : 1\n", "3:3", "a ':' with no key before it"),
    ],
    "shape": [
        ("top_level_list", b"- sim\n- heat\n", "1:1", "the deck is a list"),
        ("top_level_scalar", b"sim solver heat\n", "1:1", "the deck is the single value 'sim solver heat'"),
        ("nested_list", b"sim:\n  solver: heat\nheat:\n  cells: [[8, 8], [4]]\n", "4:11", "a list inside a list"),
        ("mapping_in_list", b"sim:\n  solver: heat\nheat:\n  cells: [{a: 1}]\n", "4:11", "a mapping inside a list"),
        ("too_deep", b"sim:\n" + b"".join(b"  " * (d + 1) + b"k%d:\n" % d for d in range(25)) + b"  " * 26 + b"v: 1\n", "10:19", "nested 9 deep: decks nest at most 8 levels"),
        ("list_as_key", b"? [a, b]\n: 1\n", "1:3", "a list used as a key"),
        ("anchor", b"sim:\n  solver: &s heat\nheat:\n  kappa: *s\n", "2:11", "decks use no anchors or aliases"),
        ("tag", b"sim:\n  solver: !include other.yaml\n", "2:11", "decks use no YAML tags"),
        ("multiline_value", b"sim:\n  solver: |\n    heat\n    more\n", "2:11", "spans several lines"),
        ("comma_in_list_entry", b"ensemble:\n  vary: [\"heat_kappa,heat_cfl\"]\n", "2:10", "contains ','"),
        ("empty_list_entry", b"heat:\n  cells:\n    - 32\n    -\n", "4:6", "empty list entry"),
    ],
    "duplicates": [
        ("duplicate_key", b"sim:\n  solver: heat\n  t_end: 1\n  t_end: 2\n", "4:3", "duplicate key: -sim_t_end is also set at line 3"),
        ("duplicate_key_case", b"sim:\n  solver: heat\n  t_end: 1\n  T_END: 2\n", "4:3", "duplicate key: -sim_t_end is also set at line 3"),
        ("duplicate_section", b"sim:\n  solver: heat\nheat:\n  kappa: 1\nsim:\n  t_end: 2\n", "5:1", "section 'sim' appears twice (first at line 1)"),
        ("same_option_two_ways", b"vlasov:\n  elc_k: 1\n  elc:\n    k: 2\n", "4:5", "sets option -vlasov_elc_k, which line 2 already sets"),
        ("value_and_section", b"heat: 1\nsim:\n  solver: heat\nheat:\n  kappa: 1\n", "4:1", "duplicate key: -heat is also set at line 1"),
    ],
    "bytes": [
        ("nul_byte", b"sim:\n  solver: heat\n  t_end: 0.0\x002\n", "3:13", "NUL byte in the deck"),
        ("escaped_nul", b"sim:\n  solver: \"he\\0at\"\n", "2:11", "contains a NUL character"),
        ("invalid_utf8", b"sim:\n  solver: h\xe9at\n", "2:12", "invalid UTF-8 byte 0xE9"),
        ("overlong_utf8", b"sim:\n  solver: \xc0\xafheat\n", "2:11", "invalid UTF-8 byte 0xC0"),
        ("truncated_utf8", b"sim:\n  solver: heat\xe2\x82", "2:15", "invalid UTF-8 byte 0xE2"),
        ("control_char", b"sim:\n  solver: he\x01at\n", "2:13", "control character 0x01"),
    ],
}


def one_case(w, name, text, where, frag, ranks=1):
    d = os.path.join(w, name)
    os.makedirs(d)
    deckfile = os.path.join(d, f"{name}.yaml")
    with open(deckfile, "wb") as f:
        f.write(text)
    rc, out = surge(["run", f"{name}.yaml"], d, ranks=ranks, expect_ok=False)
    errs = [l for l in out.splitlines() if l.startswith("surge: error:")]
    check(len(errs) == 1, f"{name}: exactly one 'surge: error:' line ({len(errs)} in {out!r})")
    if ranks == 1:
        check(rc == 1 and out.strip() == errs[0], f"{name}: exit 1 and the error line is the whole output (rc {rc})")
    check(f"{name}.yaml:{where}: " in errs[0], f"{name}: names {name}.yaml:{where} ({errs[0]})")
    check(frag in errs[0], f"{name}: says '{frag}'")
    check(sorted(os.listdir(d)) == [f"{name}.yaml"], f"{name}: no file created ({sorted(os.listdir(d))})")


def group(g):
    w = workdir(f"core_deck_{g}")
    if g in GROUPS:
        for name, text, where, frag in GROUPS[g]:
            one_case(w, name, text, where, frag)
    elif g == "unknown":
        # A misspelled t_end is an unknown key (with the nearest one), not "the run has no end".
        one_case(w, "t_ned", HEAT.replace(b"t_end", b"t_ned"), "3:3", "unknown key -sim_t_ned; did you mean -sim_t_end?")
        one_case(w, "kapa", HEAT.replace(b"kappa", b"kapa"), "6:3", "unknown key -heat_kapa; did you mean -heat_kappa?")
        # no solver key at all: the misspelled key is still named first
        one_case(w, "solvr", HEAT.replace(b"solver", b"solvr"), "2:3", "unknown key -sim_solvr; did you mean -sim_solver?")
        # a misspelled solver key whose absence trips the solver's own checks first ("cells needs
        # 2 entries", a species without its velocity box): the misspelling is what is reported
        landau = open(deck("vlasov/landau.yaml"), "rb").read()
        one_case(w, "celsl", landau.replace(b"  cells:", b"  celsl:"), "15:3", "unknown key -vlasov_celsl; did you mean -vlasov_cells?")
        one_case(w, "vlasvo", landau.replace(b"vlasov:\n", b"vlasvo:\n"), "13:3", "unknown key -vlasvo_cdim; did you mean -vlasov_cdim?")
        # two unknown keys: the first in the deck is reported with its place, the other named
        one_case(w, "two", HEAT + b"  cfll: 0.5\n  kapa: 2\n", "7:3", "also unknown: -heat_kapa (-heat_kappa?)")
    elif g == "precedence":
        # The command line wins over the deck, for values the deck gets wrong and for file names:
        # the deck's bad kappa and its output name are never used.
        d = os.path.join(w, "prec")
        os.makedirs(d)
        with open(os.path.join(d, "p.yaml"), "wb") as f:
            f.write(HEAT.replace(b"kappa: 1.0", b"kappa: fast").replace(b"  t_end: 0.02\n", b"  t_end: 0.02\n  output: from_deck\n"))
        rc, out = surge(["run", "p.yaml", "-heat_kappa", "2", "-sim_output", "from_cli", "-sim_max_steps", "2"], d)
        check(os.path.exists(os.path.join(d, "from_cli.h5")) and not os.path.exists(os.path.join(d, "from_deck.h5")), "-sim_output on the command line beats the deck's output")
        check("fast" not in out, "the deck's bad kappa is overridden by -heat_kappa 2 and never read")
        # and the deck wins over nothing: without the override the bad value is reported by name
        rc, out = surge(["run", "p.yaml", "-sim_max_steps", "2"], d, expect_ok=False)
        check("-heat_kappa" in out and "'fast' is not a real number" in out, "without the override the deck's value is the one read")
    elif g == "mpi":
        # 2 ranks: the same single line (rank 0 prints; every rank stops), nothing written
        for name, text, where, frag in [GROUPS["syntax"][0], GROUPS["bytes"][0], GROUPS["duplicates"][2]]:
            one_case(w, name, text, where, frag, ranks=2)
        one_case(w, "t_ned", HEAT.replace(b"t_end", b"t_ned"), "3:3", "did you mean -sim_t_end?", ranks=2)
        landau = open(deck("vlasov/landau.yaml"), "rb").read()
        one_case(w, "celsl", landau.replace(b"  cells:", b"  celsl:"), "15:3", "did you mean -vlasov_cells?", ranks=2)
    else:
        fail(f"unknown group {g}")


group(sys.argv[1])
