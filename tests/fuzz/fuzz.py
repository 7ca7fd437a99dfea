#!/usr/bin/env python3
"""Deck fuzzer: mutate every deck in inputs/ and check that surge answers each mutant cleanly.

A clean answer is exit 0, or exit 1 with exactly one 'surge: error:' line. Anything else fails:
a traceback ('PETSC ERROR', 'HDF5-DIAG', MPI_ABORT, a sanitizer report), a signal, another exit
code, or a hang (killed by `timeout`). Each failure is printed with its reproducer: the case id
(seed:index), the mutation, and the mutated deck saved under tests/logs/fuzz/.

Case i of seed S is a pure function of (S, i): deck = decks[i % ndecks], the mutation class and
its random choices come from random.Random(f"{S}:{i}"), so `--case S:i` replays one case exactly.

    tests/fuzz/run.sh N [--seed S] [--start K] [--classes a,b] [--jobs J] [--case S:I]
"""
import argparse
import concurrent.futures as cf
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SURGE = os.environ.get("SURGE", os.path.join(ROOT, "bin", "surge"))
LOGS = os.path.join(ROOT, "tests", "logs", "fuzz")
# Text that only a traceback or a crash prints: never part of a clean answer.
TRACEBACK = re.compile(r"PETSC ERROR|HDF5-DIAG|MPI_ABORT|Sanitizer|runtime error:|Segmentation fault|core dumped|Traceback \(most recent|terminate called")

NUMBERS = ["0", "-0", "-1", "1e308", "-1e308", "1e-308", "4.9e-324", "1e400", "-1e400", "inf", "-inf", "nan", ".inf",
           "-.inf", ".nan", "NaN", "2147483647", "2147483648", "-2147483649", "9223372036854775807",
           "9223372036854775808", "18446744073709551616", "0x7fffffff", "1e6", "1e9", "1e12", "0.0", "1e-12",
           "3.", ".5", "1_000", "0o17", "+", "-", "e5", ""]
VALUES = ["abc", "true", "false", "~", "null", "''", '""', "[1, 2]", "[]", "{a: 1}", "{}", "[[1, 2], [3]]",
          "'1, 2'", "yes", "0", "[abc, 1e400]", "!!str 5", "&a 1", "*a", "| \n  text", "\"\\0\"", "'x y z'",
          "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]"]
SYNTAX = ["unclosed_bracket", "unclosed_brace", "tab_indent", "stray_colon", "indent_shift", "top_list",
          "top_scalar", "nested_list", "deep_nesting", "unclosed_quote", "second_document", "anchor",
          "dup_section", "empty_key", "long_key", "long_value", "flow_key"]
CLASSES = ["delete_line", "duplicate_line", "extreme_number", "type_swap", "random_bytes", "truncate",
           "syntax", "bad_text", "swap_lines", "misspell_key"]
NUMBER_RE = re.compile(rb"(?<![A-Za-z_0-9.])[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)(?![A-Za-z_0-9])")


def decks():
    return sorted(glob.glob(os.path.join(ROOT, "inputs", "**", "*.yaml"), recursive=True))


def content_lines(lines):
    """Indices of lines that hold a key or value (not blank, not comment-only)."""
    return [i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith(b"#")]


def value_lines(lines):
    return [i for i in content_lines(lines) if re.match(rb"^\s*[A-Za-z0-9_]+:\s*\S", lines[i])]


def mutate(text, cls, rng):
    """Return (mutated bytes, description)."""
    lines = text.split(b"\n")
    cl = content_lines(lines) or [0]
    if cls == "delete_line":
        i = rng.choice(cl)
        return b"\n".join(lines[:i] + lines[i + 1:]), f"delete line {i + 1}"
    if cls == "duplicate_line":
        i = rng.choice(cl)
        j = rng.choice([i, i + 1, len(lines)])
        return b"\n".join(lines[:j] + [lines[i]] + lines[j:]), f"copy line {i + 1} before line {j + 1}"
    if cls == "swap_lines":
        i, j = rng.choice(cl), rng.choice(cl)
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), f"swap lines {i + 1} and {j + 1}"
    if cls == "misspell_key":
        kl = [i for i in cl if re.match(rb"^\s*[A-Za-z0-9_]{2,}:", lines[i])] or cl
        i = rng.choice(kl)
        m = re.match(rb"^(\s*)([A-Za-z0-9_]+)(:.*)$", lines[i])
        if not m:
            return text, "no key to misspell"
        k = bytearray(m.group(2))
        op = rng.choice(["swap", "drop", "double", "change"])
        p = rng.randrange(len(k))
        if op == "swap" and p + 1 < len(k):
            k[p], k[p + 1] = k[p + 1], k[p]
        elif op == "drop" and len(k) > 1:
            del k[p]
        elif op == "double":
            k[p:p] = k[p:p + 1]
        else:
            k[p] = rng.choice(b"abcdefghijklmnopqrstuvwxyz_")
        lines[i] = m.group(1) + bytes(k) + m.group(3)
        return b"\n".join(lines), f"key {m.group(2).decode()} -> {bytes(k).decode()} (line {i + 1})"
    if cls == "extreme_number":
        hits = list(NUMBER_RE.finditer(text))
        if not hits:
            return text + b"\nsim: {t_end: 1e400}\n", "append t_end 1e400"
        m = rng.choice(hits)
        v = rng.choice(NUMBERS).encode()
        return text[:m.start()] + v + text[m.end():], f"number {m.group().decode()} at byte {m.start()} -> '{v.decode()}'"
    if cls == "type_swap":
        vl = value_lines(lines) or cl
        i = rng.choice(vl)
        key = re.match(rb"^(\s*[^:#]*:)", lines[i])
        v = rng.choice(VALUES).encode()
        lines[i] = (key.group(1) if key else b"x:") + b" " + v
        return b"\n".join(lines), f"line {i + 1} value -> {v!r}"
    if cls == "random_bytes":
        b = bytearray(text)
        k = rng.randint(1, 8)
        for _ in range(k):
            p = rng.randrange(len(b) + 1)
            c = rng.randrange(256)
            if rng.random() < 0.5 and p < len(b):
                b[p] = c
            else:
                b[p:p] = bytes([c])
        return bytes(b), f"{k} random byte(s)"
    if cls == "truncate":
        p = rng.randrange(len(text) + 1)
        return text[:p], f"truncate at byte {p}"
    if cls == "bad_text":
        p = rng.randrange(len(text) + 1)
        bad = rng.choice([b"\x00", b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\x01", b"\x1b[0m", b"\x7f", b"\xef\xbb\xbf", b"\r", b"\t"])
        return text[:p] + bad + text[p:], f"bytes {bad!r} at {p}"
    if cls == "syntax":
        kind = rng.choice(SYNTAX)
        i = rng.choice(cl)
        l = lines[i]
        if kind == "unclosed_bracket":
            lines[i] = l + b" [1, 2"
        elif kind == "unclosed_brace":
            lines[i] = l + b" {a: 1"
        elif kind == "tab_indent":
            lines[i] = b"\t" + l
        elif kind == "stray_colon":
            lines[i] = l + b": x"
        elif kind == "indent_shift":
            lines[i] = b" " * rng.choice([1, 3, 5]) + l.lstrip()
        elif kind == "top_list":
            lines = [b"- " + x if x.strip() else x for x in lines]
        elif kind == "top_scalar":
            lines = [b"just a value"]
        elif kind == "nested_list":
            lines[i] = re.sub(rb":\s*(\S.*)$", rb": [[\1], [1]]", l) if b":" in l else l + b" [[1]]"
        elif kind == "deep_nesting":
            n = rng.choice([9, 25, 200])
            lines.insert(i, b"".join(b"  " * d + b"k%d:\n" % d for d in range(n)) + b"  " * n + b"v: 1")
        elif kind == "unclosed_quote":
            lines[i] = l + b' "open'
        elif kind == "second_document":
            lines.insert(i, b"---")
        elif kind == "anchor":
            lines[i] = re.sub(rb":\s*(\S)", rb": &x \1", l, count=1)
        elif kind == "dup_section":
            lines = lines + [x for x in lines if x.strip()]
        elif kind == "empty_key":
            lines.insert(i, b": 1")
        elif kind == "long_key":
            lines.insert(i, b"k" * rng.choice([250, 600, 5000]) + b": 1")
        elif kind == "long_value":
            lines.insert(i, b"sim:\n  output: " + b"o" * rng.choice([300, 5000]))
        elif kind == "flow_key":
            lines.insert(i, b"? [a, b]\n: 1")
        return b"\n".join(lines), f"syntax {kind} at line {i + 1}"
    raise ValueError(cls)


def job_for(text, base):
    """The surge job that reads this deck, and options that keep a case short (valid keys only)."""
    if re.search(rb"^train:", text, re.M):
        short = []
        if b"deepmd:" in text:
            short = ["-deepmd_numb_steps", "2"]
        elif b"podlstm:" in text:
            # a search over the shipped NOAA coefficients runs minutes; four two-epoch candidates ~5 s
            short = ["-podlstm_epochs", "2", "-podlstm_evaluations", "4", "-podlstm_population", "2", "-podlstm_sample", "1"]
        return ["train", base] + short
    if re.search(rb"^ensemble:", text, re.M):
        return ["ensemble", base, "-sim_max_steps", "2"]
    return ["run", base, "-sim_max_steps", "2"]


def classify(rc, out):
    """'ok' for a clean answer, else the reason it is not."""
    if rc in (124, 137):
        return "hang (killed by timeout)"
    if rc < 0 or rc > 128:
        return f"signal {-rc if rc < 0 else rc - 128}"
    m = TRACEBACK.search(out)
    if m:
        return f"traceback text '{m.group()}' (rc {rc})"
    nerr = sum(1 for l in out.splitlines() if l.startswith("surge: error:"))
    if rc == 0:
        return "ok" if nerr == 0 else f"exit 0 with {nerr} error line(s)"
    if rc == 1:
        return "ok" if nerr == 1 else f"exit 1 with {nerr} 'surge: error:' lines"
    return f"exit code {rc}"


def make_case(seed, i, all_decks, classes):
    """(deck path, its text, class, mutated bytes, description) of case seed:i."""
    rng = random.Random(f"{seed}:{i}")
    deck = all_decks[i % len(all_decks)]
    cls = classes[rng.randrange(len(classes))]
    with open(deck, "rb") as f:
        text = f.read()
    mutant, what = mutate(text, cls, rng)
    return deck, text, cls, mutant, what


def reader_batch(seed, idx, all_decks, classes):
    """--reader: the deck reader alone (build/tests/test_deck_parse) on a batch of mutants."""
    work = os.path.join(LOGS, "work", f"reader_{seed}_{idx[0]}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    files, info = [], {}
    for i in idx:
        deck, _, cls, mutant, what = make_case(seed, i, all_decks, classes)
        fn = os.path.join(work, f"c{i}.yaml")
        with open(fn, "wb") as f:
            f.write(mutant)
        files.append(fn)
        info[fn] = (i, os.path.relpath(deck, ROOT), cls, what)
    for attempt in range(2):
        p = subprocess.run(["timeout", "-s", "KILL", "600", os.environ.get("DECK_PARSE", os.path.join(ROOT, "build", "tests", "test_deck_parse"))] + files,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out = p.stdout.decode("utf-8", "replace")
        # Open MPI's singleton start can fail on a loaded machine before the program runs ("Local abort
        # before MPI_INIT completed", no file answered): the environment, not the reader; tried once more
        if not (p.returncode and "before MPI_INIT completed" in out and not any(l.split()[:1] in (["accept"], ["refuse"], ["BUG"]) for l in out.splitlines())):
            break
    seen, counts, fails = set(), {"accept": 0, "refuse": 0}, []
    for l in out.splitlines():
        w = l.split()
        if len(w) >= 2 and w[0] in ("accept", "refuse", "BUG") and w[1] in info:
            seen.add(w[1])
            if w[0] == "BUG":
                fails.append((w[1], l))
            else:
                counts[w[0]] += 1
    if p.returncode != 0 or TRACEBACK.search(out):  # a crash or report stops at the first unanswered file
        first = next((f for f in files if f not in seen), files[-1])
        fails.append((first, f"rc {p.returncode}: " + out.strip().splitlines()[-1][:200] if out.strip() else f"rc {p.returncode}"))
    msgs = []
    for fn, why in fails:
        i, rel, cls, what = info[fn]
        keep = os.path.join(LOGS, f"fail_reader_{seed}_{i}.yaml")
        shutil.copyfile(fn, keep)
        msgs.append(f"FAIL reader case {seed}:{i}  {rel}  [{cls}: {what}]  {why}\n     deck saved as {os.path.relpath(keep, ROOT)}")
    shutil.rmtree(work, ignore_errors=True)
    return counts, msgs, len(files) - len(seen) if p.returncode else 0


def run_case(seed, i, all_decks, classes, timeout, replay=""):
    deck, text, cls, mutant, what = make_case(seed, i, all_decks, classes)
    work = os.path.join(LOGS, "work", f"{seed}_{i}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for d in ("inputs", "tests"):  # decks name data files relative to the repository root
        os.symlink(os.path.join(ROOT, d), os.path.join(work, d))
    # build/ is private and empty, as in a fresh clone: a deck that writes under build/ (the water
    # training writes build/deepmd/water_model.h5 and its lcurve) must never touch the user's own runs
    os.makedirs(os.path.join(work, "build"))
    base = os.path.basename(deck)
    with open(os.path.join(work, base), "wb") as f:
        f.write(mutant)
    cmd = ["timeout", "-s", "KILL", str(timeout), SURGE] + job_for(text, base)
    t0 = time.time()
    p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    dt = time.time() - t0
    out = p.stdout.decode("utf-8", "replace")
    verdict = classify(p.returncode, out)
    rel = os.path.relpath(deck, ROOT)
    if verdict == "ok":
        shutil.rmtree(work, ignore_errors=True)
        return dict(ok=True, rc=p.returncode, dt=dt, cls=cls)
    keep = os.path.join(LOGS, f"fail_{seed}_{i}.yaml")
    shutil.copyfile(os.path.join(work, base), keep)
    with open(os.path.join(LOGS, f"fail_{seed}_{i}.txt"), "w") as f:
        f.write(f"case {seed}:{i}  deck {rel}  mutation {cls}: {what}\ncommand (in {work}): {' '.join(cmd)}\n"
                f"verdict: {verdict}\n--- output ---\n{out}")
    shutil.rmtree(work, ignore_errors=True)
    tail = out.strip().splitlines()[-1][:160] if out.strip() else ""
    return dict(ok=False, rc=p.returncode, dt=dt, cls=cls,
                msg=f"FAIL case {seed}:{i}  {rel}  [{cls}: {what}]  {verdict}\n"
                    f"     reproduce: tests/fuzz/run.sh --case {seed}:{i}{replay}   (deck saved as {os.path.relpath(keep, ROOT)})\n"
                    f"     last line: {tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=100, help="number of cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--classes", default=",".join(CLASSES), help="mutation classes (comma-separated): " + ",".join(CLASSES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30, help="seconds before a case counts as a hang")
    ap.add_argument("--exclude", default="", help="regex of deck paths to leave out")
    ap.add_argument("--case", help="replay one case, SEED:INDEX")
    ap.add_argument("--reader", action="store_true", help="run the deck reader alone (build/tests/test_deck_parse), not surge: "
                    "only accept/refuse-with-user-error pass; fast enough for 100,000 cases")
    a = ap.parse_args()
    classes = a.classes.split(",")
    for c in classes:
        if c not in CLASSES:
            sys.exit(f"fuzz: unknown class '{c}' (have: {', '.join(CLASSES)})")
    all_decks = [d for d in decks() if not (a.exclude and re.search(a.exclude, os.path.relpath(d, ROOT)))]
    os.makedirs(LOGS, exist_ok=True)
    env_threads = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    os.environ.update({k: os.environ.get(k, v) for k, v in env_threads.items()})
    if a.case:
        s, i = (int(x) for x in a.case.split(":"))
        pending = [(s, i)]
    else:
        pending = [(a.seed, i) for i in range(a.start, a.start + a.n)]
    if a.reader:
        t0 = time.time()
        # 1000 files per process: Open MPI's singleton start-up (MPI_Init without mpiexec) fails when the
        # command line passes ~128 KB, which 2000 paths under a longer checkout path (/work/wt-NAME) reach
        B = 1000
        batches = [[i for _, i in pending[k:k + B]] for k in range(0, len(pending), B)]
        total, msgs, lost = {"accept": 0, "refuse": 0}, [], 0
        with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            for counts, m, nl in ex.map(lambda b: reader_batch(pending[0][0], b, all_decks, classes), batches):
                for k in total:
                    total[k] += counts[k]
                msgs += m
                lost += nl
                for x in m:
                    print(x, flush=True)
        print(f"fuzz --reader: seed {pending[0][0]}, {len(pending)} cases over {len(all_decks)} decks: accepted {total['accept']}, "
              f"refused with a user error {total['refuse']}, failed {len(msgs)} (unanswered after a crash {lost}); {time.time() - t0:.0f} s")
        sys.exit(1 if msgs else 0)
    replay = (f" --classes {a.classes}" if a.classes != ",".join(CLASSES) else "") + (f" --exclude '{a.exclude}'" if a.exclude else "")
    t0 = time.time()
    counts, fails, byclass = {}, [], {}
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for r in ex.map(lambda si: run_case(si[0], si[1], all_decks, classes, a.timeout, replay), pending):
            key = "fail" if not r["ok"] else f"exit {r['rc']}"
            counts[key] = counts.get(key, 0) + 1
            byclass.setdefault(r["cls"], [0, 0])[0 if r["ok"] else 1] += 1
            if not r["ok"]:
                fails.append(r["msg"])
                print(r["msg"], flush=True)
    wall = time.time() - t0
    print(f"fuzz: seed {pending[0][0]}, cases {pending[0][1]}..{pending[-1][1]} ({len(pending)}) over {len(all_decks)} decks, "
          f"classes {','.join(classes)}: {wall:.0f} s")
    print("fuzz: outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("fuzz: by class (clean/failed): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(byclass.items())))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
