"""Every command in README.md and docs/*.md runs as written from a plain clone (issue 36, item 1).

The commands are the lines of the ```sh / ```bash blocks and of unlabelled blocks whose lines start
with a command (``` slurm blocks are batch scripts for a cluster: docs/cluster.md). They run in
order -- README first, then docs/*.md by name -- in a copy of the repository's tracked files (what a
clone holds) with the built bin/surge linked in (README's first command builds it; make check has
just built it), bin/ on PATH for the commands written `surge ...` (an installed surge).

Every command must be in TABLE below (exact text, comment removed): a doc command that is not is a
failure, so a new command gets classified when it is written. TABLE says what is done with it:
  RUN            run as written;
  ("short", s)   run with the options s appended (an explicit shortening: the full command takes
                 long; the doc gives the full time next to the command);
  ("as", c)      run c instead (a placeholder the user replaces, a shortened script);
  ("skip", why)  not run, and why (the build itself, hours-long benchmarks, a GPU).
A command that exits non-zero fails the test with its output.

The walk took 114 s for 98 commands on 2 lightly loaded cores (load ~2; several minutes when loaded), too long for
make check: it is its own target, `make check-docs` (tests/doc_commands.list). make check runs the
cheap half, `doc_commands_test.py --classify` (core_doc_table): every doc command is in TABLE."""
import glob
import os
import re
import shutil
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

RUN = ("run", None)
MYDECK = ("cp inputs/heat/decay2d.yaml mydeck.yaml")  # README's placeholder for the user's deck
SKIP_BUILD = ("skip", "the build and the test suite themselves: this test runs inside make check on the built tree")
LONG = "hours of CPU (benchmark or figure script; its time is in the doc)"
TABLE = {
    # README.md
    # the build (make check has built bin/surge), then what make demo runs
    "./configure --install-deps && make -j$(nproc) demo": ("as", "(mkdir -p build/demo && cd build/demo && surge run ../../inputs/vlasov/landau.yaml)"),
    "make -j$(nproc) check": SKIP_BUILD,
    "bin/surge run inputs/vlasov/twostream.yaml": ("short", "-sim_t_end 1"),
    "mpiexec -n 2 bin/surge run mydeck.yaml -sim_t_end 50": ("as", MYDECK + " && mpiexec -n 2 bin/surge run mydeck.yaml -sim_t_end 0.005"),
    "bin/surge run mydeck.yaml -help": RUN,
    "bin/surge run mydeck.yaml -restart mydeck.chk.h5": ("short", "-sim_t_end 0.01"),
    "bin/surge info mydeck.h5": RUN,
    "bin/surge run mydeck.yaml -log_view": ("short", "-sim_max_steps 5"),
    "mpiexec -n 2 bin/surge ensemble inputs/heat/ensemble2d.yaml": RUN,
    "bin/surge dataset import water.h5 tests/data/water_dft/data_0": RUN,
    "bin/surge dataset export water.h5 water_out -set_size 100": RUN,
    "bin/surge model test inputs/deepmd/models/water.h5 water.h5": RUN,
    "mpiexec -n 2 bin/surge run inputs/deepmd/water_nvt.yaml": ("short", "-sim_max_steps 5"),
    "inputs/deepmd/water_run.sh": ("skip", "trains the Deep Potential for 4.5 h (the doc says so)"),
    "bin/surge run inputs/mffn/superres.yaml": ("short", "-sim_t_end 0.1"),
    "bin/surge run inputs/mffn/superres_adaptive.yaml": ("short", "-sim_t_end 0.1"),
    "bin/surge run inputs/mffn/superres_ra1e6.yaml": ("short", "-sim_t_end 0.1"),
    "bin/surge ensemble inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_small": RUN,
    "mpiexec -n 4 --oversubscribe bin/surge train inputs/mffn/small.yaml -mffn_data_groups 2 -mffn_spatial_ranks 2": ("short", "-mffn_numb_steps 2"),
    "bin/surge ensemble inputs/mffn/ensemble_ra1e6.yaml -ensemble_output rb6": ("short", "-ensemble_members 2 -sim_t_end 0.4 -sim_field_every 5"),  # 17 snapshots: one 16-snapshot crop
    "bin/surge ensemble inputs/mffn/ensemble_ra1e6.yaml -ensemble_output rb6_valid -ensemble_seed 31 -ensemble_members 2": ("short", "-sim_t_end 0.4 -sim_field_every 5"),
    "bin/surge train inputs/mffn/ra1e6.yaml -mffn_valid_data rb6_valid.h5": ("short", "-mffn_numb_steps 2 -mffn_valid_crops 2 -mffn_valid_points 64"),
    "bin/surge ensemble inputs/sst/ensemble_weekly_5deg.yaml": RUN,
    "mpiexec -n 2 bin/surge train inputs/podlstm/sst5_train.yaml": ("short", "-podlstm_evaluations 2 -podlstm_epochs 1 -podlstm_top_k 1"),
    "bin/surge run inputs/podlstm/sst5_swap.yaml": ("short", "-sim_max_steps 20"),
    "bin/surge run inputs/podlstm/rb_swap.yaml": ("short", "-sim_t_end 2"),
    # docs/boussinesq.md
    "make && bin/surge run inputs/boussinesq/rb_ra1e4.yaml": ("as", "bin/surge run inputs/boussinesq/rb_ra1e4.yaml -sim_t_end 5"),  # make: the build, done
    "mpiexec -n 2 bin/surge run inputs/boussinesq/rb_ra1e4.yaml": ("short", "-sim_t_end 5"),
    "bin/surge ensemble inputs/boussinesq/ensemble_small.yaml": RUN,
    # docs/deepmd.md
    "mpiexec -n 2 bin/surge train inputs/deepmd/water.yaml -deepmd_init_model CKPT.h5 -deepmd_change_bias -train_output OUT":
        ("skip", "CKPT.h5 and the data (build/deepmd/water_train.h5) come from water_run.sh's 4.5 h training"),
    "inputs/deepmd/models/make_water.sh build/deepmd/water_ckpt.h5": ("skip", "rebuilds the shipped model from a 4.5 h training's checkpoint"),
    "mpiexec -n 2 surge run inputs/deepmd/water_nvt.yaml": ("short", "-sim_max_steps 5"),
    "inputs/deepmd/water_gr.py water_nvt_gr.txt gr.png": ("skip", "plots the g(r) of a full 4000-step NVT run (a 5-step run has no g(r) to speak of)"),
    "inputs/deepmd/water_thermo.py water_nvt.log 192 300 0.0005 1000": ("skip", "block averages from step 1000 of the full NVT run"),
    "bin/surge model import tests/data/deepmd_kit/deeppot_sea.yaml sea.h5": RUN,
    "bin/surge model export sea.h5 sea.dp": RUN,
    "bin/surge model export sea.h5 sea.yaml": RUN,
    "make kim-install": ("skip", "installs into the system's KIM API collection (needs kim-api and root)"),
    "kim-api-collections-management list | grep SURGE_DP": ("skip", "needs kim-api installed (after make kim-install)"),
    "export KIM_API_MODEL_DRIVERS_DIR=DIR/lib/kim-api/model-drivers${KIM_API_MODEL_DRIVERS_DIR:+:$KIM_API_MODEL_DRIVERS_DIR}":
        ("skip", "sets the user's shell for an install prefix DIR; core_install checks the KIM API finds the items there"),
    "export KIM_API_PORTABLE_MODELS_DIR=DIR/lib/kim-api/portable-models${KIM_API_PORTABLE_MODELS_DIR:+:$KIM_API_PORTABLE_MODELS_DIR}":
        ("skip", "sets the user's shell for an install prefix DIR; core_install checks the KIM API finds the items there"),
    "lmp -in inputs/deepmd/kim_water.lmp -log build/kim_water.log": ("skip", "needs LAMMPS with KIM (a reference code, not a dependency)"),
    # docs/ensemble.md
    "mpiexec -n 4 --oversubscribe bin/surge ensemble inputs/heat/ensemble2d.yaml -ensemble_ranks_per_member 2": RUN,
    # docs/md.md
    "surge run inputs/md/lj_nve.yaml": ("short", "-sim_max_steps 10"),
    "mpiexec -n 2 surge run inputs/md/lj_rdf.yaml": ("short", "-sim_max_steps 20"),
    "surge run inputs/md/ar_metal.yaml": ("short", "-sim_max_steps 10"),
    # docs/mffn.md
    "bin/surge ensemble inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_valid -ensemble_seed 11": RUN,
    "OPENBLAS_NUM_THREADS=1 bin/surge train inputs/mffn/small.yaml -mffn_valid_data rb_valid.h5": ("short", "-mffn_numb_steps 2"),
    "mpiexec -n 2 bin/surge train inputs/mffn/small.yaml": ("short", "-mffn_numb_steps 2"),
    "OPENBLAS_NUM_THREADS=1 bin/surge train inputs/mffn/ra1e6.yaml -mffn_valid_data rb6_valid.h5": ("short", "-mffn_numb_steps 2"),
    "bash tests/bench/mffn/ablation.sh": ("skip", LONG),
    "bash tests/bench/mffn/eval.sh": ("skip", LONG + ": ~1 h 40 min"),
    "/usr/bin/python3 tests/bench/mffn/seeds.py build/mffn_eval build/mffn_eval_s2 ...": ("skip", "summarises eval.sh directories (hours to make)"),
    "nice /usr/bin/python3 tests/bench/mffn/swap.py --plot": ("skip", "the measurements of the page (~1 min of CPU, more on a loaded machine)"),
    "inputs/mffn/models/make_models.sh": ("skip", "rebuilds the shipped model (~15 min)"),
    "nice /usr/bin/python3 tests/bench/mffn/swap.py --case ra1e6 --plot": ("skip", "~5 min of CPU"),
    # docs/nn.md
    "make -C surrogates/nn": RUN,
    "make -C surrogates/nn check": ("skip", "the engine's test list: make check runs tests/lists/nn.list"),
    "make -C surrogates/nn check-cuda": ("skip", "needs a GPU and nvcc"),
    "make -C surrogates/nn bench": ("skip", LONG),
    "./configure": ("skip", "reconfigures the checkout (config.mk): the build itself, done before make check"),
    "./configure --with-cuda=no": ("skip", "reconfigures the checkout without CUDA: the build itself"),
    "make NVCC=": SKIP_BUILD,
    "tests/bench/nn/surrogates_cuda.sh bundle": ("skip", "packs surge for a GPU machine (~10 min of xz)"),
    "bash .devbundle/gcuda/surrogates_cuda.sh OUT": ("skip", "needs a GPU machine and the bundle"),
    "/usr/bin/python3 tests/bench/nn/surrogates_plot.py RESULTS docs/nn_surrogates_cuda.png": ("skip", "plots a GPU run's results"),
    # docs/podlstm.md
    "nice -n 5 bin/surge ensemble inputs/sst/ensemble_weekly.yaml": ("skip", "1-degree data, ~4 min"),
    "nice -n 5 mpiexec -n 2 bin/surge train inputs/podlstm/sst_search.yaml": ("skip", "needs the 1-degree data; ~6 min"),
    "bash tests/bench/podlstm/run.sh": ("skip", LONG + ": ~50 min"),
    "nice -n 5 bin/surge ensemble inputs/sst/ensemble_weekly_enso.yaml": ("skip", "~1-4 min"),
    "inputs/podlstm/make_models.sh": ("skip", "rebuilds the shipped models (~20 min)"),
    "mkdir -p build/rb && cd build/rb": RUN,
    "../../bin/surge ensemble ../../inputs/podlstm/rb_ensemble.yaml": ("short", "-ensemble_members 2 -sim_t_end 40"),
    "mpiexec -n 2 ../../bin/surge train ../../inputs/podlstm/rb_train.yaml -podlstm_fields p,b,u,w -train_output rb4_podlstm": ("skip", "needs the full rb_ensemble data (~1-6 min)"),
    "cd ../.. && python3 tests/bench/podlstm/rb_swap.py build/rb inputs/podlstm/models/rb4_podlstm.h5": ("as", "cd ../.."),  # the figure: minutes
    "python3 tests/bench/podlstm/enso_oracle.py": ("skip", "needs the ENSO data (~1-4 min)"),
    "nice -n 5 bin/surge ensemble inputs/podlstm/rb1e7_ensemble.yaml": ("skip", "~16 min"),
    "mpiexec -n 2 bin/surge train inputs/podlstm/rb1e7_train.yaml": ("skip", "needs the Ra = 1e7 data"),
    "bin/surge run inputs/podlstm/rb1e7_swap.yaml": ("short", "-sim_max_steps 3"),
    "python3 tests/bench/podlstm/rb_swap.py build/rb1e7 inputs/podlstm/models/rb1e7_podlstm.h5 --ra1e7": ("skip", "~11 min"),
    "nice -n 19 bash tests/bench/podlstm/ks_study.sh --large": ("skip", LONG + ": ~35 min"),
    "nice -n 5 mpiexec -n 2 bin/surge train inputs/podlstm/sst_search.yaml -podlstm_data sst_weekly_enso.h5 -podlstm_prefix sste -train_output sst_enso_podlstm": ("skip", "needs the ENSO data; 115 s"),
    "nice -n 5 ../../bin/surge ensemble ../../inputs/podlstm/rb_ensemble.yaml": ("short", "-ensemble_members 2 -sim_t_end 40"),
    "nice -n 5 mpiexec -n 2 ../../bin/surge train ../../inputs/podlstm/rb_train.yaml -podlstm_fields p,b,u,w -train_output rb4_podlstm -podlstm_prefix rb4": ("skip", "needs the full rb_ensemble data"),
    "mkdir -p build/rb1e7 && cd build/rb1e7": RUN,
    "nice -n 5 ../../bin/surge ensemble ../../inputs/podlstm/rb1e7_ensemble.yaml": ("skip", "~16 min"),
    "nice -n 5 mpiexec -n 2 ../../bin/surge train ../../inputs/podlstm/rb1e7_train.yaml": ("skip", "needs the Ra = 1e7 data"),
    "/usr/bin/python3 ../../tests/bench/podlstm/rb1e7.py run1=rb1e7_podlstm.h5": ("as", "cd ../.."),  # the figure of a 16-min ensemble's model
    "python3 tests/bench/podlstm/rb_swap.py build/rb inputs/podlstm/models/rb4_podlstm.h5": ("skip", "the swap figure, minutes"),
    # docs/sst.md
    "bin/surge run inputs/sst/harmonic.yaml": RUN,
    "bin/surge ensemble inputs/sst/ensemble_small.yaml": RUN,
    # docs/vlasov.md
    "make && bin/surge run inputs/vlasov/landau.yaml": ("as", "bin/surge run inputs/vlasov/landau.yaml"),  # make: the build, done
    "mpiexec -n 2 bin/surge run inputs/vlasov/twostream.yaml": ("short", "-sim_t_end 1"),
}


def commands(path):
    """The command lines of path's shell blocks, in order (continuation comment lines dropped)."""
    text = open(path).read()
    out = []
    for nb, m in enumerate(re.finditer(r"^```([\w-]*)[^\n]*\n(.*?)^```", text, re.S | re.M)):
        lang, body = m.group(1), m.group(2)
        if lang not in ("sh", "bash", ""):
            continue
        body = re.sub(r"\\\n\s*", " ", body)  # continued lines
        for line in body.splitlines():
            cmd = re.sub(r"\s+#.*$", "", line).strip()
            if not cmd or cmd.startswith("#"):
                continue
            if lang == "" and not re.match(r"(bin/surge|surge (run|ensemble|train|info|model|dataset (import|export))\b|mpiexec|make\b|nice|bash|OPENBLAS|inputs/|python3|/usr/bin/python3|mkdir|cd |\.\./)", cmd):
                continue
            if lang == "" and re.search(r"\b(DECK|FILE|OUT|IN|DIR\d*)\b|\[", cmd):  # a synopsis, not a command
                continue
            out.append((nb, " ".join(cmd.split())))
    return out


root = ROOT
docs = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(f"{root}/docs/*.md"))
walk = [(d, b, c) for d in docs for b, c in commands(f"{root}/{d}")]
unknown = [f"{d}: {c}" for d, _, c in walk if c not in TABLE]
check(not unknown, f"every doc command is classified in TABLE ({len(walk)} commands)" + ("; not classified:\n  " + "\n  ".join(unknown) if unknown else ""))
stale = sorted(set(TABLE) - {c for _, _, c in walk})
check(not stale, "TABLE holds no command the docs no longer have" + (": " + "; ".join(stale) if stale else ""))
if "--classify" in sys.argv:
    sys.exit(0)

# a plain clone: the tracked files, the built binary linked in
import atexit
import tempfile
w = tempfile.mkdtemp(prefix="surge_doc_commands.")  # not under tests/: the Makefile builds every tests/**/test_*.c
atexit.register(shutil.rmtree, w, True)
clone = f"{w}/clone"
files = subprocess.run(["git", "ls-files", "-z"], cwd=root, stdout=subprocess.PIPE, check=True).stdout.decode().split("\0")
for f in files:
    if f and os.path.isfile(f"{root}/{f}"):
        os.makedirs(os.path.dirname(f"{clone}/{f}") or clone, exist_ok=True)
        shutil.copy2(f"{root}/{f}", f"{clone}/{f}")
os.makedirs(f"{clone}/bin")
os.symlink(SURGE, f"{clone}/bin/surge")
env = dict(os.environ, PATH=f"{clone}/bin:" + os.environ["PATH"], OMPI_MCA_rmaps_base_oversubscribe="1")
env.pop("SURGE", None)

t_all = time.time()
cwd = clone  # a command's `cd` holds for the next ones of its block, as in a terminal; each block starts at the root
block = None
for d, b, c in walk:
    if (d, b) != block:
        cwd = clone
        block = (d, b)
    kind, arg = TABLE[c]
    if kind == "skip":
        print(f"skip: {d}: {c}  ({arg})")
        continue
    cmd = c if kind == "run" else (f"{c} {arg}" if kind == "short" else arg)
    t0 = time.time()
    p = subprocess.run(["bash", "-c", f"{cmd} && pwd > {w}/cwd"], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{d}: `{c}` (run as `{cmd}`) exited {p.returncode}:\n{p.stdout[-2000:]}")
    cwd = open(f"{w}/cwd").read().strip()
    print(f"ok: {d}: {cmd}  ({time.time() - t0:.1f} s)")
print(f"walked {len(walk)} doc commands in {time.time() - t_all:.0f} s")
