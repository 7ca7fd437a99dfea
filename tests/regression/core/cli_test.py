"""The command line itself (issues 33 and 36): usage mistakes are one 'surge: error:' line with exit 1
(on 1 and 2 ranks), help shows surge's options first and PETSc's generic ones only behind
-help_petsc, a deck that cannot be read is reported before any help, and a closed output pipe
(surge info X | head -1) ends the job quietly instead of in PETSc's signal traceback and MPI_ABORT."""
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_cli")
landau = deck("vlasov/landau.yaml")


def run(args, ranks=1, stdout=subprocess.PIPE):
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [SURGE] + list(args)
    p = subprocess.run(cmd, cwd=w, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300)
    return p.returncode, p.stdout or "", p.stderr


def one_line_error(args, fragment, ranks=1):
    rc, out, err = run(args, ranks)
    lines = [l for l in err.splitlines() if l.startswith("surge: error:")]
    check(rc == 1 and len(lines) == 1 and fragment in lines[0] and "PETSC ERROR" not in err and "usage:" not in err,
          f"surge {' '.join(args)} on {ranks} rank(s): exit 1 and one error line naming '{fragment}' (rc {rc}, {err.strip()[:300]!r})")


for ranks in (1, 2):
    one_line_error(["runn"], "unknown job 'runn'", ranks)
    one_line_error(["run"], "surge run needs a deck", ranks)
    one_line_error(["train", "-help"], "surge train needs a deck", ranks)
    one_line_error(["info"], "surge info needs a file", ranks)
    one_line_error(["run", landau, "other.yaml"], "'other.yaml' is a second one", ranks)
    one_line_error(["info", "a.h5", "b.h5"], "'b.h5' is a second one", ranks)
# an option's value is not a second positional argument
rc, out, err = run(["run", landau, "-sim_t_end", "0.1", "-sim_output", "v"])
check(rc == 0, f"options with values after the deck run (rc {rc}: {err[-300:]})")

# help
for h in ("--help", "-help", "help"):
    rc, out, err = run([h])
    check(rc == 0 and "jobs:" in out and "surge run DECK.yaml -help" in out, f"surge {h}: the jobs and where the options are, exit 0")
rc, out, err = run(["run", landau, "-help"])
first = out.splitlines()[0] if out else ""
check(rc == 0 and first.startswith("surge run ") and "the options this run reads" in first, f"surge run DECK -help begins with surge's own header ({first!r})")
check("-sim_t_end <25 : none>" in out and "[solver time units; >= 0]" in out, "the run options show current value, default, units and range")
check("-vlasov_cfl" in out and "Options for all PETSc programs" not in out and "PetscDevice" not in out and "(None)" not in out,
      "the solver's options are listed; PETSc's generic block, device options and manual-page references are not")
check(out.index("Run control") < out.index("-vlasov_cells"), "grouped by section: run control, then the solver")
rc, out, err = run(["run", landau, "-help_petsc"])
check(rc == 0 and "Options for all PETSc programs" in out and "-vlasov_cfl" in out, "-help_petsc adds PETSc's generic options")
rc, out, err = run(["run", "missing.yaml", "-help"])
check(rc == 1 and err.startswith("surge: error: Cannot read deck 'missing.yaml'") and out == "",
      f"an unreadable deck is reported first, before any help (out {out[:200]!r})")
rc, out, err = run(["--version"])
check(rc == 0 and out.startswith("surge ") and "OpenBLAS kernels" in out, "surge --version")

# a reader that has gone away: stdout is a pipe whose read end is already closed
for args in (["info", "v.h5"], ["run", landau, "-sim_t_end", "0.5", "-sim_output", "p"]):
    r, wr = os.pipe()
    os.close(r)
    rc, out, err = run(args, stdout=wr)
    os.close(wr)
    check(rc == 0 and "PETSC ERROR" not in err and "MPI_ABORT" not in err and err.strip() == "",
          f"surge {args[0]} writing into a closed pipe ends quietly with exit 0 (rc {rc}, {err.strip()[:200]!r})")
check(os.path.exists(f"{w}/p.h5"), "and the run behind the closed pipe still wrote its output")

# small things of everyday use (issue 36, item 8)
rc, out, err = run(["run", deck("md/ar_metal.yaml"), "-sim_max_steps", "5", "-sim_output", "m", "-md_traj_file", "m.h5md", "-md_traj_every", "1"])
check(rc == 0 and not os.path.exists(f"{w}/m.xmf") and "Wrote m.h5 and checkpoint m.chk.h5" in out,
      "an MD run (no field snapshots) writes no empty XDMF sidecar and does not claim one")
steps = [l for l in out.splitlines() if l.startswith("step ")]
check(steps and steps[0].endswith("ETA -") and all("ETA -" not in l for l in steps[1:]),
      f"the first progress line gives no ETA (the first step carries the set-up), later ones do ({steps[:2]})")
rc, out, err = run(["info", "m.h5md"])
check(rc == 0 and "HDF5-DIAG" not in err + out and '@boundary = "periodic" "periodic" "periodic"' in out,
      f"surge info on an H5MD trajectory: its variable-length string attributes, no HDF5 error stack ({err[:200]!r})")

# decks work from any directory (issue 36, item 3): a relative input path in a deck is found next to
# the deck; outputs go to the working directory; a path on the command line is the working directory's
import shutil
import tempfile
job = tempfile.mkdtemp(prefix="surge_job_")  # outside the clone
try:
    p = subprocess.run([SURGE, "run", deck("dft/water_csr.yaml"), "-sim_output", "shipped"], cwd=job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    check(p.returncode == 0 and os.path.exists(f"{job}/shipped.h5") and not os.path.exists(deck("dft/shipped.h5")),
          "the shipped deck run from another directory finds its matrices beside it and writes to the working directory")
    for f in ("water_csr.yaml", "water32-KS.csr", "water32-S.csr"):
        shutil.copy(deck(f"dft/{f}"), job)
    p = subprocess.run([SURGE, "run", "water_csr.yaml", "-sim_output", "copied"], cwd=job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    check(p.returncode == 0 and os.path.exists(f"{job}/copied.h5"), f"a deck copied with its files into {job} runs there ({p.stdout[-300:]!r})")
    os.rename(f"{job}/water32-S.csr", f"{job}/renamed-S.csr")
    p = subprocess.run([SURGE, "run", deck("dft/water_csr.yaml"), "-sim_output", "cli", "-dft_s_csr", "water32-S.csr"], cwd=job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    check(p.returncode == 1 and "water32-S.csr" in p.stdout, "a path given on the command line is the working directory's, not the deck's")
finally:
    shutil.rmtree(job, ignore_errors=True)
print("cli: all checks passed")
