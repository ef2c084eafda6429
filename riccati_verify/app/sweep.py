"""Phase-diagram sweeps: the regime classification over a family of parameters.

A sweep is described by a SPEC (untrusted JSON, validated here) and evaluated
point by point on Dask.  Each finished point is appended to a CSV file and
fsync'ed, so an interrupted sweep resumes without recomputing finished points
and without losing any.  The CSV is tidy: a header row, then one row per point
with one column per parameter (exact rationals); the metadata (the hash of the
normalised spec, the classifier, the column meanings) is in the sidecar
``FILE.meta.json``, and resuming into a file made by a different spec is refused.

Families
--------
``scalar_grid``  d = 1, the (a, vβ) plane at fixed σ0: A = a, V = v, B = vβ/v.
``random``       random rational (A, B, V, Σ0) in dimension d, V = vI or general; with
                 "structure": "riccati_definite", A = M + cI with c > ‖M‖_F (so Re λ(A) > 0)
                 and B = ±(GGᵀ + I/10): every point of that family has a §7 closed form.

Reference (closed forms, MATH.md §6 and §7)
-------------------------------------------
d = 1 is decided exactly by ``scalar_regime``; for V = vI the cases of §7 that
have a closed-form verdict are decided by ``riccati_reference_regime`` (exact
rational arithmetic).  The swept classifier is *not* the reference: it is
``riccati_verify.certify.stability.classify_regime`` when that module is installed, or
the numerical ``flow`` classifier (moment-ODE integration to a horizon).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io as _io
import json
import math
import os
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import parse_entry, problem_to_dict
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = [
    "BLOWUP", "CLASSIFIERS", "COLLAPSE", "COLUMNS", "EQUILIBRIUM", "FAMILIES", "GROWTH",
    "MAX_AXIS", "columns", "meta_path", "MAX_HORIZON", "MAX_POINTS", "MAX_RANDOM_DIM", "REGIMES", "Spec",
    "SweepSummary", "UNDETERMINED", "append_rows", "dask_client", "write_parquet", "certificate_dir", "evaluate_chunk",
    "missing_points", "open_output", "parse_spec", "persist", "plot_diagram", "point",
    "read_rows", "resolve_classifier", "riccati_reference_regime", "run_sweep", "scalar_regime",
    "single_threaded_blas", "stability_classifier", "summarize",
]

EQUILIBRIUM, BLOWUP, COLLAPSE, GROWTH, UNDETERMINED = (
    "equilibrium", "blowup", "collapse", "growth", "undetermined")
REGIMES = (EQUILIBRIUM, BLOWUP, COLLAPSE, GROWTH, UNDETERMINED)

MAX_POINTS = 1_000_000
MAX_AXIS = 2_000
MAX_RANDOM_DIM = 8
MAX_HORIZON = 1_000.0
FAMILIES = ("scalar_grid", "random")
CLASSIFIERS = ("auto", "stability", "flow")
FORMAT = "riccati-verify-sweep"
COLUMNS = ("regime", "certified", "reference", "agree", "note", "seconds", "certificate")
"""The result columns; `columns(spec)` puts "index" and the point's parameter columns before them."""


# --------------------------------------------------------------------------- spec

@dataclass(frozen=True)
class Spec:
    """A validated sweep description (exact rationals for every parameter)."""

    family: str
    classifier: str
    doc: dict            # the normalised JSON form (hashed into the output header)
    n_points: int

    @property
    def digest(self) -> str:
        """A hash of the normalised spec, kept in the output header: resuming into another spec's file is refused."""
        return hashlib.sha256(json.dumps(self.doc, sort_keys=True).encode()).hexdigest()[:16]


def _exact_str(x: Fraction) -> str:
    return exact.frac_to_str(x)


def _axis(doc: Any, name: str) -> dict:
    if not isinstance(doc, dict) or set(doc) - {"min", "max", "num"} or not {"min", "max", "num"} <= set(doc):
        raise InputError(f"spec '{name}' must be an object {{\"min\", \"max\", \"num\"}}")
    lo, hi = parse_entry(doc["min"], f"{name}.min"), parse_entry(doc["max"], f"{name}.max")
    num = doc["num"]
    if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= MAX_AXIS:
        raise InputError(f"spec '{name}.num' must be an integer in 1..{MAX_AXIS}")
    if hi < lo or (num == 1 and hi != lo):
        raise InputError(f"spec '{name}': need min <= max (and min == max when num = 1)")
    return {"min": _exact_str(lo), "max": _exact_str(hi), "num": num}


def _axis_values(ax: dict) -> list[Fraction]:
    lo, hi, n = Fraction(ax["min"]), Fraction(ax["max"]), ax["num"]
    return [lo] if n == 1 else [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def _int_field(doc: dict, key: str, default: int, lo: int, hi: int) -> int:
    x = doc.get(key, default)
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise InputError(f"spec '{key}' must be an integer in {lo}..{hi}")
    return x


def _positive(doc: dict, key: str, default: str, hi: Fraction | None = None) -> str:
    x = parse_entry(doc.get(key, default), key)
    if x <= 0 or (hi is not None and x > hi):
        raise InputError(f"spec '{key}' must be positive" + (f" and at most {hi}" if hi is not None else ""))
    return _exact_str(x)


def parse_spec(doc: Any) -> Spec:
    """Validate an untrusted spec document; every violation is an InputError naming the field."""
    if not isinstance(doc, dict):
        raise InputError("a sweep spec must be a JSON object")
    family = doc.get("family")
    if family not in FAMILIES:
        raise InputError(f"spec 'family' must be one of {', '.join(FAMILIES)}")
    classifier = doc.get("classifier", "auto")
    if classifier not in CLASSIFIERS:
        raise InputError(f"spec 'classifier' must be one of {', '.join(CLASSIFIERS)}")
    common = {"family", "classifier", "horizon", "certificates"}
    norm: dict = {"family": family, "classifier": classifier,
                  "horizon": _positive(doc, "horizon", "20", Fraction(int(MAX_HORIZON)))}
    if not isinstance(doc.get("certificates", False), bool):
        raise InputError("spec 'certificates' must be true or false")
    if doc.get("certificates") and classifier == "flow":
        raise InputError("spec 'certificates' needs the 'stability' classifier (the flow classifier certifies nothing)")
    norm["certificates"] = doc.get("certificates", False)
    if family == "scalar_grid":
        allowed = common | {"a", "vbeta", "sigma0", "v"}
        extra = set(doc) - allowed
        if extra:
            raise InputError(f"unknown spec keys for scalar_grid: {', '.join(sorted(map(str, extra)))}")
        norm["a"] = _axis(doc.get("a"), "a")
        norm["vbeta"] = _axis(doc.get("vbeta"), "vbeta")
        norm["sigma0"] = _positive(doc, "sigma0", "1")
        v = parse_entry(doc.get("v", 1), "v")
        if v == 0:
            raise InputError("spec 'v' must be nonzero (B = vbeta / v)")
        norm["v"] = _exact_str(v)
        n = norm["a"]["num"] * norm["vbeta"]["num"]
    else:
        allowed = common | {"dim", "count", "seed", "scale", "V", "structure"}
        extra = set(doc) - allowed
        if extra:
            raise InputError(f"unknown spec keys for random: {', '.join(sorted(map(str, extra)))}")
        norm["dim"] = _int_field(doc, "dim", 2, 1, MAX_RANDOM_DIM)
        norm["count"] = _int_field(doc, "count", 100, 1, MAX_POINTS)
        norm["seed"] = _int_field(doc, "seed", 0, 0, 2**32 - 1)
        norm["scale"] = _positive(doc, "scale", "1", Fraction(100))
        if doc.get("V", "scalar") not in ("scalar", "general"):
            raise InputError("spec 'V' must be 'scalar' (V = vI) or 'general'")
        norm["V"] = doc.get("V", "scalar")
        if doc.get("structure", "any") not in ("any", "riccati_definite"):
            raise InputError("spec 'structure' must be 'any' or 'riccati_definite'")
        norm["structure"] = doc.get("structure", "any")
        n = norm["count"]
    if n > MAX_POINTS:
        raise InputError(f"the sweep has {n} points, more than {MAX_POINTS}")
    return Spec(family, classifier, norm, n)


# --------------------------------------------------------------------------- points

def point(spec: Spec, index: int) -> tuple[Params, Gaussian, dict]:
    """The parameters of point `index` (deterministic: random draws are seeded by (seed, index))."""
    doc = spec.doc
    if spec.family == "scalar_grid":
        na = doc["a"]["num"]
        a = _axis_values(doc["a"])[index % na]
        vb = _axis_values(doc["vbeta"])[index // na]
        v, s0 = Fraction(doc["v"]), Fraction(doc["sigma0"])
        params = Params(((a,),), ((vb / v,),), ((v,),), (Fraction(0),))
        return params, Gaussian((Fraction(0),), ((s0,),)), {"a": _exact_str(a), "vbeta": _exact_str(vb)}
    d, scale = doc["dim"], float(Fraction(doc["scale"]))
    rng = np.random.default_rng([doc["seed"], index])
    q = lambda M: tuple(tuple(Fraction(float(x)).limit_denominator(64) for x in r) for r in M)
    A, B = q(scale * rng.standard_normal((d, d))), q(scale * rng.standard_normal((d, d)))
    if doc.get("structure") == "riccati_definite":
        # |λ(M)| ≤ ‖M‖_F < c, so every eigenvalue of M + cI has positive real part (exactly)
        c = math.isqrt(math.ceil(sum(x * x for r in A for x in r))) + 1
        A = exact.add(A, exact.identity(d, c))
        H = q(rng.standard_normal((d, d)))
        sign = 1 if rng.random() < 0.5 else -1
        B = exact.scale(sign, exact.add(exact.matmul(H, exact.transpose(H)), exact.identity(d, Fraction(1, 10))))
    if doc["V"] == "scalar":
        V = exact.identity(d, Fraction(float(scale * rng.standard_normal())).limit_denominator(64))
    else:
        V = q(scale * rng.standard_normal((d, d)))
    G = q(rng.standard_normal((d, d)))
    S0 = exact.add(exact.matmul(G, exact.transpose(G)), exact.identity(d, Fraction(1, 10)))
    params = Params(A, B, V, (Fraction(0),) * d)
    state = Gaussian((Fraction(0),) * d, S0)
    return params, state, {"seed": doc["seed"], "draw": index, **_flat(problem_to_dict(params, state))}


def _flat(doc: dict) -> dict:
    """A parameter document as one column per entry: A_i_j, b_i, mean_i, cov_i_j, ..."""
    out = {}
    for k, v in doc.items():
        if k == "name":
            continue
        if isinstance(v, list):
            for i, r in enumerate(v):
                if isinstance(r, list):
                    out.update({f"{k}_{i}_{j}": x for j, x in enumerate(r)})
                else:
                    out[f"{k}_{i}"] = r
        else:
            out[k] = v
    return out


def point_columns(spec: Spec) -> tuple[str, ...]:
    """The columns that name a point: one per parameter (a, vbeta; or seed, draw and every entry)."""
    if spec.family == "scalar_grid":
        return ("a", "vbeta")
    return tuple(point(spec, 0)[2])


def columns(spec: Spec) -> tuple[str, ...]:
    """Every column of the spec's results file, in order."""
    return ("index",) + point_columns(spec) + COLUMNS


# --------------------------------------------------------------------------- closed forms (reference)

def scalar_regime(a: Fraction, vbeta: Fraction, sigma0: Fraction) -> tuple[str, str]:
    """Exact regime of σ̇ = 2aσ + 2vβσ², σ(0) = σ0 > 0 (MATH.md §6), with the reason.

    u = 1/σ solves u̇ = −2a u − 2vβ, so σ(t) = 1/u(t) is explicit; the cases
    below read off its behaviour.
    """
    c, s = vbeta, sigma0
    if c > 0 and a + c * s > 0:
        return BLOWUP, "vβ > 0 and a + vβσ0 > 0"
    if a + c * s == 0 and c != 0:
        return EQUILIBRIUM, "σ0 = −a/(vβ) is stationary (unstable when vβ > 0)"
    if c > 0:
        return COLLAPSE, "vβ > 0, a + vβσ0 < 0: σ → 0"
    if c == 0:
        if a > 0:
            return GROWTH, "vβ = 0, a > 0: σ = σ0 e^{2at}"
        if a < 0:
            return COLLAPSE, "vβ = 0, a < 0: σ = σ0 e^{2at} → 0"
        return EQUILIBRIUM, "a = vβ = 0: σ is constant"
    if a > 0:
        return EQUILIBRIUM, "a > 0, vβ < 0: σ → σ* = −a/(vβ)"
    if a < 0:
        return COLLAPSE, "a < 0, vβ < 0: σ → 0 exponentially"
    return COLLAPSE, "a = 0, vβ < 0: σ = σ0/(1 + 2|vβ|σ0 t) → 0 algebraically"


def _all_re_positive(A: exact.Matrix) -> bool:
    """Every eigenvalue of A has Re λ > 0, decided exactly: AᵀX + XA = I has a PD solution.

    If some λ_i + λ_j = 0 the Kronecker system is singular, and then not all
    real parts are positive; otherwise the unique solution is PD iff −A is Hurwitz.
    """
    d = len(A)
    K = [[Fraction(0)] * (d * d) for _ in range(d * d)]
    for i in range(d):
        for j in range(d):
            row = i * d + j
            for k in range(d):
                K[row][k * d + j] += A[k][i]      # (AᵀX)_{ij} = Σ_k A_{ki} X_{kj}
                K[row][i * d + k] += A[k][j]      # (XA)_{ij} = Σ_k X_{ik} A_{kj}
    rhs = [Fraction(int(i == j)) for i in range(d) for j in range(d)]
    try:
        x = exact.solve(tuple(map(tuple, K)), rhs)
    except ValueError:
        return False
    X = tuple(tuple(x[i * d + j] for j in range(d)) for i in range(d))
    return exact.is_pd(exact.sym_part(X))


def riccati_reference_regime(params: Params, state: Gaussian) -> tuple[str, str] | None:
    """Closed-form verdicts for V = vI (MATH.md §7), exact; None where §7 gives none (the
    A Hurwitz cases depend on Σ0: the d = 2 tile plots draw that boundary)."""
    if params.dim == 1:
        return scalar_regime(params.A[0][0], params.V[0][0] * params.B[0][0], state.cov[0][0])
    v = params.V_scalar
    if not exact.is_pd(state.cov):
        return None
    zero = lambda M: all(x == 0 for r in M for x in r)
    if zero(params.B) or zero(params.V) or (v is not None and zero(exact.scale(v, exact.sym_part(params.B)))):
        # no quadratic term: Σ(t) = e^{At}Σ0e^{Aᵀt}, decided by the exact inertia of A (Routh)
        inertia = exact.routh_inertia(params.A)
        if inertia is None:
            return None
        if inertia[0] > 0:
            return GROWTH, "linear flow and A has an eigenvalue with Re > 0: ‖Σ(t)‖ → ∞, no blow-up"
        return (COLLAPSE, "linear flow and A Hurwitz: Σ(t) → 0") if inertia[1] == params.dim else None
    if v is None:
        return None
    vBs = exact.scale(v, exact.sym_part(params.B))
    zero_A = all(x == 0 for r in params.A for x in r)
    if exact.is_pd(vBs):
        if zero_A:
            return BLOWUP, "A = 0, vB_s ≻ 0: T* = 1/(2 v λmax(B_s Σ0))"
        if _all_re_positive(params.A):
            return BLOWUP, "vB_s ≻ 0 and Re λ(A) > 0"
    if exact.is_pd(exact.scale(-1, vBs)) and _all_re_positive(params.A):
        return EQUILIBRIUM, "vB_s ≺ 0 and Re λ(A) > 0: P(t) → P* ≻ 0 globally"
    if not zero_A and _all_re_positive(params.A):
        # −A Hurwitz with vB_s not definite: P(t) → P*, whose sign decides
        P = exact.lyapunov_solve(params.A, exact.scale(-2, vBs))
        plus, minus, _ = exact.ldl_inertia(P)
        if minus > 0:
            return BLOWUP, "Re λ(A) > 0 and P* has a negative eigenvalue: P(t) → P* turns indefinite"
        if plus == params.dim and exact.is_psd(exact.scale(-1, vBs)):
            return EQUILIBRIUM, "Re λ(A) > 0, vB_s ⪯ 0 and P* ≻ 0: P(t) → P* globally"
        if plus == params.dim and exact.is_psd(exact.sub(state.cov, exact.matmul(exact.matmul(state.cov, P),
                                                                                   state.cov))):
            return EQUILIBRIUM, "Re λ(A) > 0, P* ≻ 0 and P0 − P* ⪰ 0 (Σ0-dependent): P(t) ⪰ P*, → P*"
        return None
    if zero_A or not _all_re_positive(exact.scale(-1, params.A)):
        return None
    # A Hurwitz: P(t) − P* = e^{−Aᵀt}(P0 − P*)e^{−At} with AᵀP* + P*A = −2vB_s, and P0 − P*
    # (P0 = Σ0⁻¹) is congruent to Σ0 − Σ0P*Σ0, whose inertia decides from the given Σ0
    if exact.is_psd(exact.scale(-1, vBs)):
        return COLLAPSE, "A Hurwitz and vB_s ⪯ 0: P(t) ⪰ e^{−Aᵀt}P0e^{−At} → ∞"
    P = exact.lyapunov_solve(params.A, exact.scale(-2, vBs))
    D = exact.sub(state.cov, exact.matmul(exact.matmul(state.cov, P), state.cov))
    plus, minus, _ = exact.ldl_inertia(D)
    if minus > 0:
        return BLOWUP, "A Hurwitz and P0 − P* has a negative eigenvalue (Σ0-dependent): P(t) turns indefinite"
    if plus == params.dim and exact.is_psd(P):
        return COLLAPSE, "A Hurwitz, P* ⪰ 0 and P0 − P* ≻ 0 (Σ0-dependent): P(t) → ∞"
    return None


# --------------------------------------------------------------------------- classifiers (swept)

def _flow_regime(params: Params, state: Gaussian, horizon: float) -> tuple[str, bool, str]:
    """Numerical regime from the moment ODE on [0, horizon]; never certified.

    Blow-up vs fast growth when the norm bound is hit: the logarithmic growth
    rate ‖Σ̇‖/‖Σ‖ of a finite-time blow-up is unbounded, whereas exponential
    growth has rate at most 2‖A‖ + 2‖V‖‖B‖‖Σ‖ dominated by 2‖A‖ only when the
    quadratic term is not driving; a rate above 4‖A‖ + 1 is taken as blow-up.
    """
    from riccati_verify.numeric.flow import integrate_moments, moment_rhs

    A, B, V, b = float_view(params)
    S0 = np.array(float_view(state)[1])
    n0 = max(float(np.linalg.norm(S0, 2)), 1e-300)
    r = integrate_moments(params, state, horizon, rtol=1e-9, atol=1e-14 * n0, n_samples=21)
    S = (r.cov + r.cov.T) / 2
    nS = float(np.linalg.norm(S, 2))
    dS = moment_rhs(A, B, V, b, r.mean, S)[1]
    rate = float(np.linalg.norm(dS, 2)) / max(nS, 1e-300)
    if r.blowup:
        if rate > 4 * float(np.linalg.norm(A, 2)) + 1:
            return BLOWUP, False, f"norm bound hit at t = {r.time:.6g} with log-rate {rate:.3g}"
        return GROWTH, False, f"norm bound hit at t = {r.time:.6g}, log-rate {rate:.3g} (exponential)"
    if nS < 1e-6 * n0:
        return COLLAPSE, False, f"‖Σ(T)‖ = {nS:.3g} < 1e-6 ‖Σ0‖"
    lam_min = float(np.linalg.eigvalsh(S)[0])
    if rate < 1e-6 and lam_min > 1e-6 * nS:
        return EQUILIBRIUM, False, f"Σ(T) PD, ‖Σ̇‖/‖Σ‖ = {rate:.3g}"
    if nS > 1e6 * n0:
        return GROWTH, False, f"‖Σ(T)‖/‖Σ0‖ = {nS / n0:.3g}"
    return UNDETERMINED, False, f"no regime settled by T = {horizon:g} (log-rate {rate:.3g})"


def stability_classifier() -> Callable | None:
    """`riccati_verify.certify.stability.classify_regime` when that module is installed, else None."""
    try:
        from riccati_verify.certify import stability
    except ImportError:
        return None
    return getattr(stability, "classify_regime", None)


def _field(res: Any, key: str, default=None):
    if isinstance(res, dict):
        return res.get(key, default)
    return getattr(res, key, default)


def _stability_regime(params: Params, state: Gaussian) -> tuple[str, bool, str, dict | None]:
    fn = stability_classifier()
    res = fn(params, state)
    if isinstance(res, str):
        return res, False, "", None
    regime = _field(res, "regime")
    regime = getattr(regime, "value", regime)
    note = "; ".join(str(x) for x in (_field(res, "method", ""), _field(res, "note", "")) if x)
    return str(regime), bool(_field(res, "certified", False)), note, _field(res, "certificate")


def resolve_classifier(name: str) -> str:
    """The classifier to run: 'auto' picks 'stability' where it is installed, else 'flow'."""
    if name == "auto":
        return "stability" if stability_classifier() is not None else "flow"
    if name == "stability" and stability_classifier() is None:
        raise InputError("classifier 'stability' needs riccati_verify.certify.stability.classify_regime, "
                         "which this installation does not have; use \"classifier\": \"flow\"")
    return name


def evaluate_chunk(doc: dict, classifier: str, indices: list[int]) -> list[dict]:
    """Evaluate points (runs on a Dask worker): one row per index."""
    spec = parse_spec(doc)
    horizon = float(Fraction(spec.doc["horizon"]))
    rows = []
    for i in indices:
        t0 = time.perf_counter()
        params, state, coords = point(spec, i)
        cert = None
        try:
            if classifier == "stability":
                regime, certified, note, cert = _stability_regime(params, state)
            else:
                regime, certified, note = _flow_regime(params, state, horizon)
        except InputError as e:       # a point the classifier rejects is undetermined, not a crash
            regime, certified, note = UNDETERMINED, False, f"rejected: {e}"
        ref = riccati_reference_regime(params, state)
        rows.append({
            "index": i, **coords,
            "regime": regime, "certified": int(certified),
            "reference": ref[0] if ref else "",
            "agree": "" if ref is None else int(ref[0] == regime),
            "note": note if ref is None or ref[0] == regime else f"{note} | reference: {ref[1]}",
            "seconds": f"{time.perf_counter() - t0:.6f}",
            "certificate": "", "_certificate": cert if spec.doc["certificates"] and certified else None,
        })
    return rows


def certificate_dir(out: Path) -> Path:
    """The folder next to the results file that holds the points' certificates."""
    return Path(str(out) + ".certs")


def persist(out: Path, rows: list[dict]) -> None:
    """Write the points' certificates (each fsync'ed), then their rows: a row never names a missing file."""
    from riccati_verify.app.output import with_input_record

    for r in rows:
        cert = r.pop("_certificate", None)
        if cert:
            cert = with_input_record(cert)        # the spec's floats, when the command line read one
            d = certificate_dir(out)
            d.mkdir(exist_ok=True)
            path = d / f"point-{r['index']}.json"
            with open(path, "w") as f:
                f.write(json.dumps(cert, indent=1) + "\n")
                f.flush()
                os.fsync(f.fileno())
            r["certificate"] = path.name
    append_rows(out, rows)


# --------------------------------------------------------------------------- durable, resumable output

def meta_path(out: Path) -> Path:
    """The sidecar JSON holding a results file's metadata (spec, its hash, classifier, columns)."""
    return Path(str(out) + ".meta.json")


def _meta(spec: Spec, classifier: str) -> dict:
    return {"format": FORMAT, "spec_sha256": spec.digest, "classifier": classifier, "spec": spec.doc,
            "columns": list(columns(spec)),
            "notes": {"index": "the point's index in the spec (random draws are seeded by (seed, index))",
                      "parameters": "exact rationals p/q, one column per parameter entry",
                      "reference": "closed-form regime (MATH.md §6, §7) where one exists, else empty",
                      "agree": "1 when the classifier's regime equals the reference, 0 when not, empty "
                               "without a reference"}}


def _fsync(path: Path, text: str, mode: str) -> None:
    with open(path, mode, newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def open_output(path: Path, spec: Spec, classifier: str) -> set[int]:
    """Create the output (sidecar metadata, then the CSV header row) or validate an existing
    one; return the indices already finished.  A line cut short by a kill is removed (its
    point was not finished)."""
    meta = _meta(spec, classifier)
    mp = meta_path(path)
    if not path.exists() or path.stat().st_size == 0:
        _fsync(mp, json.dumps(meta, indent=1) + "\n", "w")
        buf = _io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(columns(spec))
        _fsync(path, buf.getvalue(), "w")
        return set()
    try:
        old = json.loads(mp.read_text())
    except (OSError, ValueError):
        raise InputError(f"'{path}' exists without its metadata file '{mp}' (or it is unreadable); "
                         "use another --out file") from None
    if not isinstance(old, dict) or old.get("format") != FORMAT or old.get("spec_sha256") != spec.digest \
            or old.get("classifier") != classifier:
        raise InputError(f"'{path}' was written by a different sweep or classifier "
                         f"(spec {str(old.get('spec_sha256'))[:16] if isinstance(old, dict) else '?'}); use another --out file")
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with open(path, "r+b") as f:
            f.truncate(cut)
            f.flush(); os.fsync(f.fileno())
    return {int(r["index"]) for r in read_rows(path)}


def read_rows(path: Path) -> list[dict]:
    """The finished rows of a results file."""
    return list(csv.DictReader(_io.StringIO(Path(path).read_text(encoding="utf-8"))))


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append finished points and force them to disk before reporting progress."""
    with open(path, encoding="utf-8") as f:
        fields = next(csv.reader(f))          # the file's own header row fixes the column order
    buf = _io.StringIO()
    csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore").writerows(rows)
    _fsync(path, buf.getvalue(), "a")


# --------------------------------------------------------------------------- driver

@dataclass
class SweepSummary:
    """What a sweep run did: counts per regime, comparisons with the reference, disagreements, timing."""

    n_points: int
    computed_now: int
    resumed: int
    classifier: str
    counts: dict
    compared: int
    disagreements: list = field(default_factory=list)
    duplicates: int = 0
    contradictions: int = 0   # disagreements where the classifier gave a verdict (not 'undetermined')
    seconds: float = 0.0
    workers: int = 0


def _chunks(todo: list[int], size: int) -> list[list[int]]:
    return [todo[k:k + size] for k in range(0, len(todo), size)]


def run_sweep(spec: Spec, out: str | Path, *, workers: int = 2, scheduler: str | None = None,
              chunk: int | None = None, progress: Callable[[int, int], None] | None = None,
              connect_timeout: float = 20.0) -> SweepSummary:
    """Evaluate every unfinished point of `spec` and append it to `out`.

    workers = 0 evaluates in this process (no Dask); otherwise an embedded
    LocalCluster with `workers` single-threaded processes, or the scheduler at
    `scheduler`.
    """
    t0 = time.perf_counter()
    out = Path(out)
    classifier = resolve_classifier(spec.classifier)
    done = open_output(out, spec, classifier)
    todo = [i for i in range(spec.n_points) if i not in done]
    nw = max(workers, 1)
    size = chunk or max(1, min(500, math.ceil(len(todo) / (nw * 8)) if todo else 1))
    finished = len(done)
    if progress:
        progress(finished, spec.n_points)
    if todo and workers == 0 and scheduler is None:
        with single_threaded_blas():
            for ch in _chunks(todo, size):
                persist(out, evaluate_chunk(spec.doc, classifier, ch))
                finished += len(ch)
                if progress:
                    progress(finished, spec.n_points)
    elif todo:
        for n_rows in _dask_map(spec, classifier, _chunks(todo, size), out, workers, scheduler,
                                connect_timeout):
            finished += n_rows
            if progress:
                progress(finished, spec.n_points)
    summary = summarize(out, spec, classifier)
    summary.computed_now, summary.resumed = len(todo), len(done)
    summary.seconds, summary.workers = time.perf_counter() - t0, workers
    return summary


def single_threaded_blas():
    """One BLAS thread, as Dask workers use: on tiny matrices, BLAS threads spinning on a
    shared 2-core machine made the in-process sweep 20x slower (measured)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


@contextlib.contextmanager
def dask_client(workers: int, scheduler: str | None, connect_timeout: float = 20.0):
    """A Dask client: on the scheduler at `scheduler`, or on an embedded LocalCluster of
    `workers` single-threaded processes (closed on exit).  InputError when dask[distributed]
    is missing or the scheduler cannot be reached."""
    import logging

    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InputError("the sweep needs dask[distributed]: pip install 'dask[distributed]'") from None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError, ValueError) as e:
                raise InputError(f"cannot reach the Dask scheduler at '{scheduler}': {e}") from None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        with client:
            yield client
    finally:
        if cluster is not None:
            cluster.close()


def _dask_map(spec: Spec, classifier: str, chunks: list[list[int]], out: Path,
              workers: int, scheduler: str | None, connect_timeout: float = 20.0):
    from dask.distributed import as_completed

    with dask_client(workers, scheduler, connect_timeout) as client:
        futures = client.map(evaluate_chunk, [spec.doc] * len(chunks), [classifier] * len(chunks),
                             chunks, pure=False)
        for fut in as_completed(futures):
            rows = fut.result()
            persist(out, rows)
            yield len(rows)


def summarize(out: Path, spec: Spec, classifier: str) -> SweepSummary:
    """Counts per regime and every disagreement with the closed form, from the file itself."""
    rows = read_rows(out)
    seen: set[int] = set()
    dup = 0
    counts = {r: 0 for r in REGIMES}
    compared, disagreements = 0, []
    for r in rows:
        i = int(r["index"])
        if i in seen:
            dup += 1
            continue
        seen.add(i)
        counts[r["regime"]] = counts.get(r["regime"], 0) + 1
        if r["agree"] != "":
            compared += 1
            if r["agree"] == "0":
                disagreements.append({"index": i, "point": {k: r[k] for k in point_columns(spec)}, "regime": r["regime"],
                                      "reference": r["reference"], "note": r["note"]})
    contradictions = sum(1 for x in disagreements if x["regime"] != UNDETERMINED)
    return SweepSummary(len(seen), 0, 0, classifier, counts, compared, disagreements, dup, contradictions)


def missing_points(out: Path, spec: Spec) -> list[int]:
    """Indices of the spec's points that the results file does not hold yet."""
    seen = {int(r["index"]) for r in read_rows(out)}
    return [i for i in range(spec.n_points) if i not in seen]


def write_parquet(out: Path, path: str | Path) -> Path:
    """The rows of a results file as Parquet (pyarrow): index, certified as integers, seconds as
    float64, every other column (exact rationals included) as strings; the sidecar metadata
    goes into the schema metadata."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet output needs pyarrow, which is not installed (pip install pyarrow); "
                         "the CSV holds the same rows") from None
    rows = read_rows(out)
    with open(out, encoding="utf-8") as f:
        names = next(csv.reader(f))
    typed = {"index": pa.int64(), "certified": pa.int8(), "seconds": pa.float64()}
    cols = {}
    for c in names:
        vals = [r[c] for r in rows]
        if c in typed:
            conv = float if c == "seconds" else int
            cols[c] = pa.array([conv(v) if v != "" else None for v in vals], typed[c])
        else:
            cols[c] = pa.array(vals, pa.string())
    table = pa.table(cols).replace_schema_metadata({"riccati-verify": meta_path(out).read_text()})
    pq.write_table(table, str(path))
    return Path(path)


# --------------------------------------------------------------------------- plot

_COLORS = {EQUILIBRIUM: "tab:green", BLOWUP: "tab:red", COLLAPSE: "tab:blue",
           GROWTH: "tab:orange", UNDETERMINED: "lightgray"}


def _cell_edges(v: list[float]) -> np.ndarray:
    """Edges of the cells centred on the sorted grid values `v` (a lone value gets width 1)."""
    if len(v) == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = [(x + y) / 2 for x, y in zip(v, v[1:])]
    return np.array([2 * v[0] - mid[0], *mid, 2 * v[-1] - mid[-1]])


def plot_diagram(out: Path, spec: Spec, png: str | Path) -> Path:
    """The phase diagram: regimes per point, closed-form boundary, disagreements marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.colors
    import matplotlib.patches
    import matplotlib.pyplot as plt

    rows = read_rows(out)
    fig, ax = plt.subplots(figsize=(8.5, 5))
    if spec.family == "scalar_grid":
        a = np.array([float(Fraction(r["a"])) for r in rows])
        c = np.array([float(Fraction(r["vbeta"])) for r in rows])
        reg = [r["regime"] for r in rows]
        # one cell per grid point, edges half-way between neighbours: a mesh tiles the plane
        # exactly (square scatter markers sized in points left white seams between columns)
        xs = [float(x) for x in _axis_values(spec.doc["a"])]
        ys = [float(y) for y in _axis_values(spec.doc["vbeta"])]
        code = {name: k for k, name in enumerate(REGIMES)}
        Z = np.full((len(ys), len(xs)), np.nan)
        col = {x: i for i, x in enumerate(xs)}
        row = {y: j for j, y in enumerate(ys)}
        for x, y, name in zip(a, c, reg):
            Z[row[y], col[x]] = code[name]
        cmap = matplotlib.colors.ListedColormap([_COLORS[name] for name in REGIMES]).with_extremes(bad="white")
        ax.pcolormesh(_cell_edges(xs), _cell_edges(ys), np.ma.masked_invalid(Z), cmap=cmap,
                      vmin=-0.5, vmax=len(REGIMES) - 0.5, shading="flat")
        for name in REGIMES:
            if name in reg:
                ax.add_patch(matplotlib.patches.Rectangle((xs[0], ys[0]), 0, 0, color=_COLORS[name], label=name))
        bad = np.array([r["agree"] == "0" for r in rows])
        if bad.any():
            ax.scatter(a[bad], c[bad], s=30, facecolors="none", edgecolors="k", label="disagrees")
        s0 = float(Fraction(spec.doc["sigma0"]))
        lo_a, hi_a = float(Fraction(spec.doc["a"]["min"])), float(Fraction(spec.doc["a"]["max"]))
        lo_c, hi_c = float(Fraction(spec.doc["vbeta"]["min"])), float(Fraction(spec.doc["vbeta"]["max"]))
        aa = np.linspace(lo_a, hi_a, 200)
        cc = -aa / s0
        keep = (cc >= max(lo_c, 0)) & (cc <= hi_c)
        ax.plot(aa[keep], cc[keep], "k-", lw=1, label="a + vβσ0 = 0 (closed form)")
        if lo_c < 0 <= hi_c or lo_c < 0:
            ax.plot([0, 0], [lo_c, min(0, hi_c)], "k--", lw=1, label="a = 0, vβ < 0 (closed form)")
        ax.set_xlabel("a"); ax.set_ylabel("vβ")
        ax.set_title(f"d = 1 phase diagram, σ0 = {spec.doc['sigma0']} ({len(rows)} points)")
    else:
        labels = list(REGIMES)
        ref = [r["reference"] or "no closed form" for r in rows]
        got = [r["regime"] for r in rows]
        refs = sorted(set(ref))
        M = np.array([[sum(1 for x, y in zip(ref, got) if x == rr and y == g) for g in labels] for rr in refs])
        ax.imshow(M, cmap="Blues")
        for i in range(len(refs)):
            for j in range(len(labels)):
                ax.text(j, i, str(M[i, j]), ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(labels)), labels, rotation=30)
        ax.set_yticks(range(len(refs)), refs)
        ax.set_xlabel("computed regime"); ax.set_ylabel("closed form (MATH.md §7)")
        ax.set_title(f"random family d = {spec.doc['dim']}, V {spec.doc['V']} ({len(rows)} points)")
    if ax.get_legend_handles_labels()[0]:        # the random family's count matrix has no legend
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png
