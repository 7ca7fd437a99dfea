#!/usr/bin/python3
"""Regenerate the figures and numbers of docs/vlasov.md (not part of make check; ~1 minute).

Usage: /usr/bin/python3 tests/regression/vlasov/plot_docs.py   (after make)
Runs the decks in inputs/vlasov with every-step diagnostics, the free-streaming convergence and the
energy-vs-dt sweeps, and writes docs/vlasov_verification.png and docs/vlasov_phase_space.png."""
import os, re, subprocess, sys
import numpy as np
import h5py
try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib (Debian python3-matplotlib), a plotting dependency: run ./configure --with-bench")
matplotlib.use('Agg')
import matplotlib.pyplot as plt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SURGE = os.environ.get('SURGE', os.path.join(ROOT, 'bin', 'surge'))
DECKS = os.path.join(ROOT, 'inputs', 'vlasov')
WORK = os.path.join(ROOT, 'build', 'docs-vlasov')
os.makedirs(WORK, exist_ok=True)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1', OMP_NUM_THREADS='1')


def run(deck, *args):
    out = subprocess.run([SURGE, 'run', os.path.join(DECKS, deck)] + list(args), cwd=WORK, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode:
        sys.exit(out.stdout[-3000:])
    return out.stdout


def grab(txt, pat):
    return float(re.search(pat, txt).group(1))


def diag(name):
    with h5py.File(os.path.join(WORK, name + '.h5'), 'r') as f:
        return {k: f['diagnostics'][k][:] for k in f['diagnostics']}


fig, ax = plt.subplots(2, 2, figsize=(11, 8))
# 1. Landau damping
txt = run('landau.yaml', '-sim_diag_every', '1', '-sim_output', 'landau')
g, gt = grab(txt, r'gamma measured (\S+)'), grab(txt, r'gamma measured \S+\s+theory (\S+)')
w, wt = grab(txt, r'omega measured (\S+)'), grab(txt, r'omega measured \S+\s+theory (\S+)')
print('landau: gamma %.6f (theory %.6f), omega %.6f (theory %.6f)' % (g, gt, w, wt))
d = diag('landau')
a = ax[0, 0]
a.semilogy(d['time'], d['field_energy'], lw=1, label='surge, 32x32 p=2')
t = np.linspace(0, 25, 100)
i0 = np.argmin(abs(d['time'] - 3))
a.semilogy(t, d['field_energy'][:i0 + 40].max() * np.exp(2 * gt * (t - 3)) * 1.05, 'k--', lw=1,
           label='theory $e^{2\\gamma t}$, $\\gamma$=%.4f' % gt)
a.set_title('Landau damping $k\\lambda_D$=0.5: $\\gamma$=%.5f ($%.5f$), $\\omega$=%.5f (%.5f)' % (g, gt, w, wt), fontsize=9)
a.set_xlabel('t $\\omega_{pe}$'); a.set_ylabel('field energy'); a.legend(fontsize=8)
# 2. two-stream
txt = run('twostream.yaml', '-sim_diag_every', '1', '-sim_output', 'twostream')
g2, g2t = grab(txt, r'gamma measured (\S+)'), grab(txt, r'gamma measured \S+\s+theory (\S+)')
print('twostream: gamma %.6f (theory %.6f)' % (g2, g2t))
d = diag('twostream')
a = ax[0, 1]
a.semilogy(d['time'], d['field_energy'], lw=1, label='surge, 64x32 p=2')
i0 = np.argmin(abs(d['time'] - 15))
t = np.linspace(5, 30, 50)
a.semilogy(t, d['field_energy'][i0] * np.exp(2 * g2t * (t - 15)), 'k--', lw=1, label='kinetic root $\\gamma$=%.4f' % g2t)
a.set_title('two-stream: growth %.4f vs theory %.4f' % (g2, g2t), fontsize=9)
a.set_xlabel('t $\\omega_{pe}$'); a.set_ylabel('field energy'); a.legend(fontsize=8)
# 3. spatial convergence (free streaming)
a = ax[1, 0]
conv = {}
for p in (1, 2, 3):
    ns = [8, 16, 32, 64] if p < 3 else [8, 16, 32]
    errs = []
    for n in ns:
        txt = run('nonlinear_landau.yaml', '-vlasov_field', 'none', '-vlasov_exact', 'freestream', '-vlasov_order', str(p),
                  '-vlasov_cells', '%d,%d' % (n, n), '-sim_t_end', '2', '-sim_output', 'fs', '-sim_field_every', '0')
        errs.append(grab(txt, r'relative L2 error (\S+)'))
    conv[p] = (ns, errs)
    orders = [np.log2(errs[i] / errs[i + 1]) for i in range(len(errs) - 1)]
    print('freestream p=%d: errors %s orders %s' % (p, ['%.3e' % e for e in errs], ['%.2f' % o for o in orders]))
    a.loglog(ns, errs, 'o-', label='p=%d (order %.2f)' % (p, orders[-1]))
    a.loglog(ns, errs[0] * (np.array(ns) / ns[0]) ** -(p + 1.0), 'k:', lw=0.8)
a.set_xlabel('cells per direction (N x N)'); a.set_ylabel('relative L2 error'); a.legend(fontsize=8)
a.set_title('free streaming, t=2: order p+1 (dotted)', fontsize=9)
# 4. energy error vs dt
a = ax[1, 1]
dts, errs = [0.016, 0.008, 0.004, 0.002], []
for dt in dts:
    txt = run('nonlinear_landau.yaml', '-vlasov_cells', '16,32', '-sim_dt', str(dt), '-sim_t_end', '3.2', '-sim_output', 'eo', '-sim_field_every', '0')
    errs.append(abs(grab(txt, r'total_energy\s+\S+\s+\(relative change (\S+)\)')))
orders = [np.log2(errs[i] / errs[i + 1]) for i in range(len(errs) - 1)]
print('energy error vs dt: %s orders %s' % (['%.3e' % e for e in errs], ['%.2f' % o for o in orders]))
a.loglog(dts, errs, 'o-', label='nonlinear Landau (A=0.5), p=2')
a.loglog(dts, errs[0] * (np.array(dts) / dts[0]) ** 3, 'k:', label='$dt^3$')
a.set_xlabel('dt'); a.set_ylabel('|relative total-energy error| at t=3.2'); a.legend(fontsize=8)
a.set_title('energy error is SSP-RK3 only: orders %s' % ', '.join('%.2f' % o for o in orders), fontsize=9)
fig.tight_layout()
fig.savefig(os.path.join(ROOT, 'docs', 'vlasov_verification.png'), dpi=110)

# phase space of the nonlinear runs (cell averages of f written by the solver for 1x1v)
fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
txt = run('nonlinear_landau.yaml', '-sim_output', 'nl')
print('nonlinear landau: ' + ' | '.join(l for l in txt.splitlines() if 'total_energy' in l or 'number_elc' in l))
txt = run('twostream.yaml', '-sim_t_end', '45', '-sim_output', 'tsnl', '-vlasov_fit', 'none')
print('two-stream to t=45: ' + ' | '.join(l for l in txt.splitlines() if 'total_energy' in l or 'number_elc' in l))
dn = diag('nl')
ax[0].semilogy(dn['time'], dn['field_energy'])
ax[0].set_title('nonlinear Landau (A=0.5): field energy', fontsize=9); ax[0].set_xlabel('t')
for a, (name, lo, hi) in zip(ax[1:], [('nl', (0, -6), (4 * np.pi, 6)), ('tsnl', (0, -3), (4 * np.pi, 3))]):
    with h5py.File(os.path.join(WORK, name + '.h5'), 'r') as f:
        snaps = f['fields/f_elc']
        last = sorted(snaps.keys(), key=int)[-1]
        fv = snaps[last][:]
        tt = snaps[last].attrs.get('time', None)
    fv = fv.reshape(fv.shape[0], -1) if fv.ndim > 2 else fv
    a.imshow(fv, origin='lower', aspect='auto', extent=[lo[0], hi[0], lo[1], hi[1]], cmap='viridis')
    a.set_title('%s: f(x, v) cell averages at t=%s' % ('nonlinear Landau' if name == 'nl' else 'two-stream',
                ('%.1f' % float(np.ravel(tt)[0])) if tt is not None else 'end'), fontsize=9)
    a.set_xlabel('x'); a.set_ylabel('v')
fig.tight_layout()
fig.savefig(os.path.join(ROOT, 'docs', 'vlasov_phase_space.png'), dpi=110)
print('wrote docs/vlasov_verification.png, docs/vlasov_phase_space.png')
