"""Mean-field Langevin training of the head measure (issue 16): throughput and time to a small gap.

1. Training steps per second against H = 16 .. 4096, shallow (examples/train_shallow.json, d = 2)
   and deep (examples/train_deep.json, d = 2, two depth segments), particles only (no H → ∞
   reference, no records beyond the first and last step).
2. The cost of one functional gradient (forward moment solve + costate solve + the head gradients)
   against one forward moment solve, deep model, as a ratio of median wall times.
3. The Lipschitz constant of ρ ↦ ∇δL/δρ (seed 001 Theorem 9.1's drift), measured on perturbed
   measures at the example specs' initial heads, shallow against deep (a lower bound).
4. Time to reach a free-energy gap of 1e-6 in the shallow regime (proofs/training_shallow's example):
   the H → ∞ law of the scheme (`closure_step`, exact for that scheme), and whether particles get
   there at all (their gap has an O(1/H) floor and O(H^-1/2) noise: the last column says where
   the particle gap sits after the same number of steps, averaged over 4 seeds).

Usage: nice python benchmarks/bench_training.py [--heads 16,64,256,1024,4096] [--steps 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from riccati_verify.numeric import training as T


def steps_per_second(path: str, H: int, steps: int) -> float:
    import json

    doc = json.load(open(path))
    doc.update(heads=H, steps=steps, record_every=steps)
    spec = T.spec_from_dict(doc)
    t0 = time.perf_counter()
    T.train(spec, closure=False, fixed_point=False)
    return steps / (time.perf_counter() - t0)


def gradient_forward_ratio(repeat: int) -> tuple[float, float, float]:
    spec = T.load_spec("examples/train_deep.json")
    heads = T.initial_heads(spec, np.random.default_rng(0))
    aggs = [T.aggregates(V, B) for V, B in heads]
    model = spec.model
    tau = model.T / model.segments

    def forward():
        m, S = model.m, model.S
        for Vbar, K in aggs:
            m, S = T._forward(model.A, model.b, Vbar, K, m, S, tau, False, model.rtol, model.atol)

    def grad():
        T.functional_gradient(model, heads)

    tf, tg = [], []
    for _ in range(repeat):
        t0 = time.perf_counter(); forward(); tf.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); grad(); tg.append(time.perf_counter() - t0)
    f, g = statistics.median(tf), statistics.median(tg)
    return f, g, g / f


def time_to_gap(target: float = 1e-6, max_steps: int = 20_000) -> dict:
    from riccati_verify.proofs.training_shallow import example_spec

    spec = T.spec_from_dict(example_spec(heads=16, steps=1))
    d, lam, beta, eta = spec.dim, spec.weight_decay, spec.beta, spec.step
    mu0 = np.concatenate([spec.init_V.ravel(), spec.init_B.ravel()])
    start = [(mu0, spec.init_spread ** 2 * np.eye(spec.head_dim))]
    fp, _, ok = T.closure_fixed_point(spec.model, start, lam, beta, eta, d, tol=1e-14)
    Fstar = T.closure_free_energy(spec.model, fp, lam, beta, d)[0]
    t0 = time.perf_counter()
    st, k = start, 0
    while T.closure_free_energy(spec.model, st, lam, beta, d)[0] - Fstar > target and k < max_steps:
        st, _, _ = T.closure_step(spec.model, st, lam, beta, eta, d)
        k += 1
    wall = time.perf_counter() - t0
    out = {"steps": k, "s": k * eta, "wall_s": wall, "fixed_point_converged": ok}
    gaps = []
    for seed in range(4):
        r = T.train(T.spec_from_dict(example_spec(heads=1024, steps=k, record_every=k, seed=seed)), closure=False,
                    fixed_point=False)
        gaps.append(r.free_energy[-1] - Fstar)
    out["particle_gap_H1024_after_same_steps"] = (float(np.mean(gaps)), float(np.std(gaps, ddof=1) / 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", default="16,64,256,1024,4096")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(f"{'H':>6} {'shallow steps/s':>16} {'deep steps/s':>13}")
    for H in (int(h) for h in a.heads.split(",")):
        sh = steps_per_second("examples/train_shallow.json", H, a.steps)
        dp = steps_per_second("examples/train_deep.json", H, max(5, a.steps // 5))
        print(f"{H:>6} {sh:>16.1f} {dp:>13.1f}")
    f, g, r = gradient_forward_ratio(a.repeat)
    print(f"deep d=2, 2 segments: forward {1e3 * f:.2f} ms, functional gradient {1e3 * g:.2f} ms, ratio {r:.2f}")
    for path in ("examples/train_shallow.json", "examples/train_deep.json"):
        spec = T.load_spec(path)
        lip = T.gradient_lipschitz(spec.model, T.initial_heads(spec, np.random.default_rng(1)), trials=4, seed=2)
        print(f"{spec.regime}: Lipschitz constant of rho -> grad dL/drho (W2), measured lower bound "
              f"{lip['lipschitz_lower_bound']:.3g} (eps {lip['eps']:g}, {lip['trials']} seeded perturbations)")
    t = time_to_gap()
    print(f"shallow example, H -> inf law: gap 1e-6 after {t['steps']} steps (s = {t['s']:.2f}) in {t['wall_s']:.2f} s; "
          f"particles H = 1024 after the same steps: gap {t['particle_gap_H1024_after_same_steps'][0]:.2e} "
          f"+- {t['particle_gap_H1024_after_same_steps'][1]:.1e}")


if __name__ == "__main__":
    main()
