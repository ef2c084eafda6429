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

5. (--stall-search N) A seeded search for training that stalls at a worse stationary point: N
   students with heads N(0, spread²) (default 1) trained without noise against proofs/training_deep's d = 2 teacher
   (16 heads, T = 1, min L = 0), `numeric.training.stall_search`; the outcome of every try.
   The rigorous bounds of proofs/training_wellposed and the validated d = 2 NTK are timed too.

Usage: nice python benchmarks/bench_training.py [--heads 16,64,256,1024,4096] [--steps 50] [--repeat 5]
       [--stall-search 16 --stall-steps 300 --stall-spread 1 --stall-seed S --stall-heads 16] [--only-stall]
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


def stall(tries: int, steps: int, seed: int, spread: float, heads: int) -> None:
    from riccati_verify.proofs.training_deep import ntk_teacher, teacher_heads
    from riccati_verify.proofs.training_wellposed import DEEP, SHALLOW
    from riccati_verify.certify.training_wellposed import wellposedness

    for name, doc in (("shallow", SHALLOW), ("deep T = 1/4", DEEP)):
        t0 = time.process_time()
        r = wellposedness(doc)
        print(f"well-posedness bounds, {name}: certified {r['certified']}, X_bar {float(r['X_bar']):.4g}, "
              f"Lip_theta <= {float(r['lip_theta'].mid() + r['lip_theta'].rad()):.4g}, {time.process_time() - t0:.2f} s CPU")
    t0 = time.process_time()
    n = ntk_teacher()
    print(f"validated d = 2 NTK (16 heads, T = 1): proved {n['proved']}, lambda_min(W^1/2 K W^1/2) >= "
          f"{float(n['lambda_min_W_at_least']):.6f}, {n['steps']} Taylor steps, {time.process_time() - t0:.2f} s CPU")
    spec, teacher, _ = teacher_heads()
    first = 0 if heads == 16 else 1
    teacher = [(V[first:first + heads], B[first:first + heads]) for V, B in teacher]
    t0 = time.process_time()
    res = T.stall_search(spec.model, teacher, tries=tries, spread=spread, steps=steps, seed=seed, progress=True)
    print(f"stall search: {res['tries']} seeded tries (seed {seed}), {heads} heads, spread {res['spread']}, {steps} GD steps of "
          f"{res['step']}, {time.process_time() - t0:.1f} s CPU: {res['counts']}; draws skipped (flow blows up "
          f"at the start): {res['skipped_draws']}")
    for r in res["runs"]:
        extra = (f", polished L {r['polished_loss']:.3g} |grad| {r['polished_grad_norm']:.2g}"
                 if "polished_loss" in r else "")
        print(f"  try {r['try']}: {r['outcome']}: L {r['loss_start']:.3g} -> {r['loss_end']:.3g} "
              f"after {r['steps_run']} steps{extra} {r['note'][:60]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", default="16,64,256,1024,4096")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--stall-search", type=int, default=0, metavar="N")
    ap.add_argument("--stall-steps", type=int, default=300)
    ap.add_argument("--stall-seed", type=int, default=20261206)
    ap.add_argument("--stall-spread", type=float, default=1.0)
    ap.add_argument("--stall-heads", type=int, default=16,
                    help="teacher (and student) heads: H of the 16, from the second on when H < 16 (the first "
                         "head alone blows up on [0, 1])")
    ap.add_argument("--only-stall", action="store_true", help="only the stall search and the rigorous bounds")
    a = ap.parse_args()
    if a.stall_search:
        stall(a.stall_search, a.stall_steps, a.stall_seed, a.stall_spread, a.stall_heads)
    if a.only_stall:
        return
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
