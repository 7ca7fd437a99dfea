#!/usr/bin/env python3
"""The one write path, enforced on the sources (issue 33; io/include/sgwrite.h, docs/errors.md).

Every file surge creates or replaces goes through io/h5/write.c (SgWriteCheck, SgTextFile, SgH5File,
SgH5Staged*, SgWriteDir, SgWriteCommit). This test scans every C/C++/CUDA source and header under
src/ io/ physics/ surrogates/ for the calls that create, replace or remove a file:

  fopen/fdopen/freopen/PetscFOpen with a mode that writes ("w", "a" or "+"), or a mode that is not
  a string literal; open/openat with O_CREAT, O_TRUNC, O_WRONLY, O_RDWR or O_APPEND; creat;
  H5Fcreate; H5Fopen with H5F_ACC_RDWR; PetscViewer*Open with FILE_MODE_WRITE/APPEND/UPDATE;
  rename/renameat; unlink/unlinkat; remove; truncate/ftruncate

and fails on any that the allow-list below does not name -- by file, call and count, each with its
reason -- so a new raw writer anywhere (a new file, or one more call in an allowed file) fails
`make check`. An entry whose calls are gone is reported (NOTE) so the list can be tightened.

Comments are removed and string literals are kept only as the fopen mode, so a call in a comment or
a string does not count and a call split over lines or spaced `fopen (p, "w")` does. The scanner
tests itself first on snippets of each form (see SELFTEST).
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DIRS = ["src", "io", "physics", "surrogates"]
EXTS = (".c", ".h", ".cpp", ".cc", ".cu", ".cuh")

# (file, call) -> (count, reason). Keep it short: the answer to a new raw writer is the write path.
ALLOW = {
    # -- the write path itself
    ("io/h5/write.c", "fopen-write"): (1, "the write path: SgTextFileOpen creates PATH.tmp"),
    ("io/h5/write.c", "open-create"): (4, "the write path: the directory probe (SgWriteDirectoryErrno: an unnamed O_TMPFILE file, else a named O_EXCL one removed at once), CopyFile's temporary, SgWriteDirFileOpen (O_EXCL in DIR.tmp)"),
    ("io/h5/write.c", "fdopen-write"): (1, "the write path: SgWriteDirFileOpen's stream"),
    ("io/h5/write.c", "H5Fcreate"): (1, "the write path: SgH5StagedOpen creates PATH.tmp"),
    ("io/h5/write.c", "H5Fopen-rdwr"): (1, "the write path: SgH5StagedOpen continues a copy in PATH.tmp"),
    ("io/h5/write.c", "rename"): (2, "the write path: SgWriteCommitErrno, SgWriteDirCommit"),
    ("io/h5/write.c", "unlink"): (12, "the write path: temporaries removed on failure or before a fresh start, the probe, a dead process's PATH.tmp.PID (SgWriteTempName), SgTextFileFinish's on a failed close"),
    ("io/h5/lock.c", "open-create"): (1, "BASE.lock: one job per output name (flock), SgWriteLockAcquire"),
    ("io/h5/lock.c", "truncate"): (1, "BASE.lock: the holder's name for a refused job's message"),
    ("io/h5/lock.c", "unlink"): (3, "BASE.lock removed by its holder on release (and by SgErrorRunOnExit on an exit without unwinding); Open MPI's BASE.*-JOB-PID.lock / .locktest.RANK a killed job left (removed by the job holding BASE.lock)"),
    ("io/h5/write.c", "truncate"): (1, "the write path: SgWriteCopyErrno's read/write fallback restarts its own temporary"),
    ("io/h5/write.c", "remove"): (1, "the write path: SgWriteDirDiscard's tree walk in DIR.tmp"),
    ("io/h5/writeset.c", "open-create"): (2, "the write path: a set commit's PATH.none.tmp mark (O_EXCL), its journal PATH0.set.tmp of the members' names"),
    ("io/h5/writeset.c", "rename"): (2, "the write path: a set's members into place, the earlier set put back"),
    ("io/h5/writeset.c", "unlink"): (10, "the write path: a set commit's temporaries, .prev/.none names, a member the new set lacks, its journal, a killed commit's FILE.old.tmp"),
    ("io/h5md/h5md.c", "rename"): (1, "a trajectory in a run's set: the previous commit's hard link FILE.old.tmp, brought up to date, becomes the next FILE.tmp (the run's own file, never FILE)"),
    ("io/h5md/h5md.c", "H5Fopen-rdwr"): (1, "a trajectory in a run's set: reopens its own FILE.tmp after the catch-up (collective)"),
    ("io/h5md/h5md_catchup.c", "H5Fopen-rdwr"): (1, "SgH5MDCatchUp appends the interval's frames to FILE.old.tmp (the previous commit's link, no longer FILE); FILE is opened read-only"),
    ("io/h5/h5file.c", "H5Fcreate"): (1, "SgH5File: PATH.tmp after SgWriteCheckMessage, committed by SgWriteCommit"),
    ("io/h5/h5file.c", "remove"): (1, "SgH5File: removes its own PATH.tmp on discard"),
    ("io/h5/h5util.c", "unlink"): (1, "SgH5RemoveForCreate: unlinks a staged temporary before H5Fcreate (callers checked the path)"),
    ("io/dataset/sgdataset.c", "H5Fcreate"): (1, "SgDatasetCreate: PATH.tmp after SgWriteCheckMessage, committed at close"),
    ("io/dataset/sgdataset.c", "H5Fopen-rdwr"): (1, "SgDatasetOpenStaged appends to its own copy PATH.tmp.PID, committed at close or with the run's set "
                                                    "(md's retraining frames, podlstm's search log); no surge command opens a committed dataset "
                                                    "for append (SgDatasetOpen(APPEND): test_dataset's crash-safe append only)"),
    ("io/h5/output.c", "fopen-write"): (1, "the run's XDMF: BASE.xmf.tmp, committed by SgWriteCommitErrno (paths checked by SgSimSetUp)"),
    ("io/h5/output.c", "PetscViewerOpen-nonliteral"): (1, "OpenViewer: the run output BASE.h5 (or BASE.h5.tmp when staged) after CheckOutputSet's SgWriteCheck; APPEND only for a restart of the same run (CheckSameRun)"),
    ("io/h5/checkpoint.c", "PetscViewerOpen-write"): (1, "the run checkpoint: BASE.chk.h5.tmp, committed by SgWriteCommitErrno"),
    # -- the run driver's own state (not user files)
    ("src/driver/sim.c", "unlink"): (6, "the run's own temporaries (stale .tmp, a staged set's, BASE.h5.old.tmp, side members' when the set is incomplete; BASE.lock is io/h5/lock.c's)"),
    ("src/driver/sim.c", "rename"): (1, "CommitSet: the previous commit's hard link BASE.h5.old.tmp becomes the next BASE.h5.tmp (the run's own files)"),
    ("src/driver/claim.c", "open-create"): (1, "ensemble claim files (O_CREAT|O_EXCL) in BASE.members/"),
    ("src/driver/claim.c", "rename"): (1, "taking over a stale claim atomically"),
    ("src/driver/claim.c", "unlink"): (3, "releasing claims"),
    ("src/driver/ensemble.c", "open-create"): (1, "BASE.members/log.lock (flock)"),
    ("src/driver/ensemble.c", "unlink"): (2, "BASE.members/: a claimed member's half-written files, a stale marker under -ensemble_rerun_stale"),
    ("src/base/termlog.c", "unlink"): (4, "the run log's own BASE.log.tmp: abandoned, and removed after a crash by the rank that does not hold it or when it would replace an earlier log (SgTermLogAbandon, SgTermLogCrash, SgTermLogCrashSignal)"),
    ("src/base/termlog.c", "rename"): (1, "SgTermLogCrashSignal: the run log's own BASE.log.tmp committed from a crash signal handler, where only async-signal-safe calls may run (the write path's commit is not)"),
    ("src/base/termlog.c", "remove"): (2, "the run log's own temporary on a failed commit"),
    ("src/base/init.c", "freopen-write"): (1, "stdout to /dev/null on ranks other than 0"),
}


def strip(text):
    """Comments removed; each string literal replaced by "\x00N\x00" (its index in the list returned)."""
    out, lits, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            seg = text[i:n if j < 0 else j + 2]
            out.append(" " + "\n" * seg.count("\n"))  # keep line numbers
            i = n if j < 0 else j + 2
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            lit = text[i + 1:j]
            if c == '"':
                out.append(f'"\x00{len(lits)}\x00"')
                lits.append(lit)
            else:
                out.append("'?'")
            i = j + 1
        else:
            out.append(c)
            i += 1
    s = "".join(out)
    # adjacent literals ("a" "b") are one string: join their texts
    def join(m):
        parts = [int(k) for k in re.findall(r"\x00(\d+)\x00", m.group(0))]
        lits.append("".join(lits[k] for k in parts))
        return f'"\x00{len(lits) - 1}\x00"'
    s = re.sub(r'"\x00\d+\x00"(?:\s*"\x00\d+\x00")+', join, s)
    return s, lits


def args_of(s, start):
    """The argument texts of the call whose '(' is at s[start]; None if unbalanced."""
    depth, cur, args, i = 0, [], [], start
    while i < len(s):
        c = s[i]
        if c == "(":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return None


CALL = re.compile(r"(?<![\w.>])(fopen|fdopen|freopen|PetscFOpen|open|openat|creat|H5Fcreate|H5Fopen|PetscViewer\w*Open|rename|renameat|unlink|unlinkat|remove|truncate|ftruncate)\s*\(")


def mode_kind(arg, lits):
    m = re.fullmatch(r'"\x00(\d+)\x00"', arg)
    if not m:
        return "nonliteral"
    mode = lits[int(m.group(1))]
    return "write" if re.search(r"[wa+]", mode) else None


def findings(text):
    """[(call class, line)] of the file-changing calls in C source text."""
    s, lits = strip(text)
    res = []
    for m in CALL.finditer(s):
        name, open_at = m.group(1), m.end() - 1
        line = s.count("\n", 0, m.start()) + 1
        pre = s[max(0, m.start() - 40):m.start()]
        if re.search(r"\b(int|FILE|void|herr_t|hid_t|PetscErrorCode|static|extern)\s*\*?\s*$", pre):
            continue  # a declaration or definition of a function of that name, not a call
        a = args_of(s, open_at)
        if a is None:
            continue
        joined = " ".join(a)
        if name in ("fopen", "fdopen", "freopen", "PetscFOpen"):
            k = mode_kind(a[2] if name == "PetscFOpen" and len(a) > 2 else (a[1] if len(a) > 1 else ""), lits)
            if k:
                res.append((f"{name}-{k}" if k == "nonliteral" else f"{name}-write", line))
        elif name in ("open", "openat"):
            if re.search(r"\bO_(CREAT|TRUNC|WRONLY|RDWR|APPEND)\b", joined):
                res.append(("open-create", line))
        elif name == "H5Fopen":
            if "H5F_ACC_RDWR" in joined:
                res.append(("H5Fopen-rdwr", line))
        elif name.startswith("PetscViewer"):
            if re.search(r"\bFILE_MODE_(WRITE|APPEND|UPDATE)\b", joined):
                res.append(("PetscViewerOpen-write", line))
            elif not re.search(r"\bFILE_MODE_READ\b", joined) and name != "PetscViewerOpen":
                res.append(("PetscViewerOpen-nonliteral", line))
        else:
            res.append(({"renameat": "rename", "unlinkat": "unlink", "ftruncate": "truncate", "creat": "open-create"}.get(name, name), line))
    return res


SELFTEST = [  # (snippet, expected call classes)
    ('f = fopen(p, "w");', ["fopen-write"]),
    ('f = fopen (p,\n   "ab");', ["fopen-write"]),
    ('f = fopen(p, "r+");', ["fopen-write"]),
    ('f = fopen(p, "rb");', []),
    ('f = fopen(p, mode);', ["fopen-nonliteral"]),
    ('f = fopen(p, "r" "w");', ["fopen-write"]),
    ('/* fopen(p, "w") */ x = 1; // unlink(p)\n', []),
    ('puts("fopen(p, \\"w\\") unlink(x)");', []),
    ("fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);", ["open-create"]),
    ("fd = open(p,\n O_RDONLY);", []),
    ("fd = creat(p, 0644);", ["open-create"]),
    ("f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);", ["H5Fcreate"]),
    ("f = H5Fopen(p, H5F_ACC_RDWR, fapl);", ["H5Fopen-rdwr"]),
    ("f = H5Fopen(p, H5F_ACC_RDONLY, fapl);", []),
    ("PetscCall(PetscViewerHDF5Open(c, p, FILE_MODE_WRITE, &v));", ["PetscViewerOpen-write"]),
    ("PetscCall(PetscViewerBinaryOpen(c, p, mode, &v));", ["PetscViewerOpen-nonliteral"]),
    ("(void)rename(a, b);", ["rename"]),
    ("if (unlink (p)) err = errno;", ["unlink"]),
    ("remove(p);", ["remove"]),
    ("ftruncate(fd, 0);", ["truncate"]),
    ("s->remove(p); t.unlink(q); SgWriteDiscard(p); my_unlink(p);", []),
    ("static int remove(const char *p);", []),
]


def selftest():
    bad = []
    for snippet, want in SELFTEST:
        got = [k for k, _ in findings(snippet)]
        if got != want:
            bad.append(f"scanner self-test: {snippet!r}: found {got}, expected {want}")
    return bad


def main():
    bad = selftest()
    counts, where = {}, {}
    nfiles = 0
    for d in DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [x for x in dirnames if not x.startswith("build") and x != "gen"]
            for f in files:
                if not f.endswith(EXTS):
                    continue
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, ROOT)
                nfiles += 1
                with open(p, encoding="utf-8", errors="replace") as fh:
                    for k, line in findings(fh.read()):
                        counts[(rel, k)] = counts.get((rel, k), 0) + 1
                        where.setdefault((rel, k), []).append(line)
    for key in sorted(set(counts) | set(ALLOW)):
        have, (allowed, reason) = counts.get(key, 0), ALLOW.get(key, (0, ""))
        rel, k = key
        if have > allowed:
            bad.append(f"{rel}: {have - allowed} raw {k} call(s) outside the write path (lines {', '.join(map(str, where[key]))}): "
                       "create/replace files through io/include/sgwrite.h, or add an allow-list entry with its reason")
        elif have < allowed:
            print(f"NOTE: {rel}: the allow-list permits {allowed} {k} call(s), the file has {have}: lower the entry in {os.path.relpath(__file__, ROOT)}")
    for b in bad:
        print("FAIL:", b)
    print(f"write-path scan: {nfiles} files, {sum(counts.values())} file-changing calls, {len(ALLOW)} allow-list entries, "
          f"{len(SELFTEST)} scanner self-tests; {len(bad)} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
