"""BASE.log, the run's terminal output kept beside its files (issue 36, item 7):
- surge run on 1 and 2 ranks writes BASE.log whose first line is '# surge-file: run log' and whose
  body is exactly what the terminal showed; no BASE.log.tmp is left; a restart continues the log;
- the progress lines are preceded by one line naming their columns with units, and the md thermo
  header carries units (Temp[K], PotEng[eV], ...; lj: [epsilon/k_B], [epsilon/atom]);
- surge ensemble writes BASE.log; every line a member's solver prints carries '[member N]';
- an error during a 2-rank run is printed once (not once per rank), and BASE.log ends with it; a
  failed run over an earlier BASE.log leaves that one whole;
- BASE.log is written through the write path: a user's own BASE.log (not surge's) and a deck named
  BASE.log (an input) are refused with one line before anything is written, and stay byte-identical."""
import glob
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

MARK = "# surge-file: run log\n"


def log_of(w, base):
    if not os.path.exists(f"{w}/{base}.log"):
        fail(f"{base}.log was not written in {w}")
    with open(f"{w}/{base}.log") as f:
        return f.read()


# run: the log is the terminal output, on 1 and 2 ranks
for ranks in (1, 2):
    w = workdir(f"core_run_log_{ranks}")
    rc, out = surge(["run", deck("heat/decay2d.yaml"), "-sim_output", "a", "-sim_max_steps", "20"], w, ranks=ranks)
    text = log_of(w, "a")
    check(text.startswith(MARK), f"{ranks} rank(s): a.log begins with its kind line")
    check(text[len(MARK):] == out, f"{ranks} rank(s): a.log holds exactly the terminal output ({len(out.splitlines())} lines)")
    check(not glob.glob(f"{w}/a.log.tmp*"), f"{ranks} rank(s): no a.log.tmp left")
    cols = [l for l in out.splitlines() if l.startswith("progress columns:")]
    check(len(cols) == 1 and "mode_amplitude [" in cols[0] and "wall [s]" in cols[0], f"{ranks} rank(s): one progress header with units: {cols[:1]}")
    # a restart continues the log
    surge(["run", deck("heat/decay2d.yaml"), "-sim_output", "a", "-sim_max_steps", "40", "-restart", "a.chk.h5"], w, ranks=ranks)
    text2 = log_of(w, "a")
    check(text2.startswith(text) and "Restarted from a.chk.h5" in text2[len(text):] and text2.count("surge-file:") == 1,
          f"{ranks} rank(s): the restart appended to a.log ({len(text.splitlines())} -> {len(text2.splitlines())} lines, one kind line)")

# md thermo header units
w = workdir("core_run_log_md")
for dk, want in (("md/ar_metal.yaml", ["Temp[K]", "PotEng[eV]", "Press[bar]", "Volume[Angstrom^3]"]),
                 ("md/lj_nve.yaml", ["Temp[epsilon/k_B]", "PotEng[epsilon/atom]", "Press[epsilon/sigma^3]", "Volume[sigma^3]"])):
    base = os.path.basename(dk)[:-5]
    surge(["run", deck(dk), "-sim_output", base, "-sim_max_steps", "0", "-md_thermo_every", "1"], w)
    head = [l.split() for l in log_of(w, base).splitlines() if l.startswith("md thermo:") and l.split()[2] == "Step"]
    check(len(head) == 1 and all(c in head[0] for c in want), f"{dk}: thermo header in {base}.log names units {want}")

# ensemble: the log, and every member's line tagged with its id
w = workdir("core_run_log_ensemble")
rc, out = surge(["ensemble", deck("md/lj_ensemble.yaml"), "-ensemble_output", "ens", "-ensemble_members", "4", "-sim_max_steps", "10"], w, ranks=2)
mdlines = [l for l in out.splitlines() if "md:" in l]
tagged = [l for l in mdlines if re.match(r"\[member [0-3]\] md: ", l)]
check(len(mdlines) == 8 and len(tagged) == 8, f"ensemble: {len(tagged)} of {len(mdlines)} member lines carry '[member N]' (4 members x 2 lines)")
check(sorted({int(re.match(r"\[member (\d)\]", l).group(1)) for l in tagged}) == [0, 1, 2, 3], "ensemble: every member's id appears")
text = log_of(w, "ens")
check(text.startswith(MARK) and "surge ensemble: 4 members" in text and "wrote ens.h5" in text, "ensemble: ens.log holds the ensemble's lines")

# an error during a 2-rank run: printed once, and the log ends with it
w = workdir("core_run_log_error")
rc, out = surge(["run", deck("md/lj_nve.yaml"), "-sim_output", "e", "-md_dt", "0.1", "-sim_max_steps", "200", "-md_thermo_every", "20"], w, ranks=2, expect_ok=False)
errs = [l for l in out.splitlines() if "surge: error:" in l]
check(len(errs) == 1 and "reduce md_dt" in errs[0], f"error on 2 ranks printed once: {errs}")
text = log_of(w, "e")
check(text.rstrip("\n").splitlines()[-1] == errs[0] and text.count("surge: error:") == 1, "e.log ends with the error line, once")
check(not glob.glob(f"{w}/e.log.tmp*"), "no e.log.tmp left after the error")
# a failed run over an earlier log leaves that log whole (like the run's other files)
surge(["run", deck("md/lj_nve.yaml"), "-sim_output", "e", "-md_dt", "0.1", "-sim_max_steps", "200", "-md_thermo_every", "20", "-md_seed", "7"], w, ranks=2, expect_ok=False)
check(log_of(w, "e") == text and not glob.glob(f"{w}/e.log.tmp*"), "a second failed run left the earlier e.log byte-identical")

# the write path: a user's file named BASE.log, and a deck named BASE.log, are never written over;
# the log is a copy and never stops the run (one warning line); BASE.log that is the run's own
# standard output ('> BASE.log') is left to the shell
w = workdir("core_run_log_refuse")
with open(f"{w}/n.log", "w") as f:
    f.write("my notes\n")
rc, out = surge(["run", deck("heat/decay2d.yaml"), "-sim_output", "n", "-sim_max_steps", "2"], w)
warn = [l for l in out.splitlines() if l.startswith("surge: warning: no run log:")]
check(len(warn) == 1 and "n.log" in warn[0] and "not a file surge wrote" in warn[0], f"a foreign n.log: one warning: {warn}")
check(open(f"{w}/n.log").read() == "my notes\n" and os.path.exists(f"{w}/n.h5") and not glob.glob(f"{w}/n.log.tmp*"), "n.log unchanged, the run's files written")
with open(deck("heat/decay2d.yaml")) as f, open(f"{w}/r.log", "w") as g:
    g.write(f.read())
before = open(f"{w}/r.log").read()
rc, out = surge(["run", "r.log", "-sim_output", "r", "-sim_max_steps", "2"], w)
warn = [l for l in out.splitlines() if l.startswith("surge: warning: no run log:")]
check(len(warn) == 1 and "an input of this run" in warn[0], f"a deck named r.log: one warning: {warn}")
check(open(f"{w}/r.log").read() == before and os.path.exists(f"{w}/r.h5"), "the deck unchanged, the run's files written")
with open(f"{w}/s.log", "w") as f:
    rc = subprocess.run([SURGE, "run", deck("heat/decay2d.yaml"), "-sim_output", "s", "-sim_max_steps", "2"], cwd=w, stdout=f, stderr=subprocess.STDOUT).returncode
text = open(f"{w}/s.log").read()
check(rc == 0 and "surge-file" not in text and text.count("Wrote s.h5") == 1 and "warning" not in text, "'> s.log' (the run's own stdout): the shell's file holds the output once, no copy, no warning")
