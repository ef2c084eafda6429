"""Regenerate tests/data/certificates/<kind>.json: one certificate of every kind, made by the
command line from the small inputs below.  The files are *inputs* to the checker tests (they
must verify, and load no numerics); no expected value is read from them.

    python tests/data/make_certificates.py [OUT_DIR]

OUT_DIR (default: tests/data/certificates) lets a rerun be compared with the committed files before
it replaces them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from riccati_verify.app.cli import main
from riccati_verify.app.examples import EXAMPLES
from riccati_verify.core.io import problem_to_dict

OUT = Path(__file__).resolve().parent / "certificates"
INPUTS = {
    "scalar_blowup": {"A": [[1]], "B": [[1]], "V": 1, "mean": [0], "cov": [[1]]},
    "opposite_sign": {"A": [["1/2", 1], [0, -1]], "B": [[-1, 0], [0, -2]], "V": "1/2",
                      "mean": [0, 0], "cov": [[1, 0], [0, 1]]},
    "start": {"mean": [0, 0], "cov": [[1, 0], [0, 1]]},
    "target": {"mean": ["1/2", 0], "cov": [[2, "1/2"], ["1/2", 1]]},
    "degenerate": {"mean": [0, 0], "cov": [[1, 0], [0, 0]]},
    # general V (general_instance(2, 0, 2)): blows up at T* ≈ 0.0623
    "general_blowup": {"A": [[-1, -2], [0, -2]], "B": [["-3/2", -1], [0, "1/3"]], "V": [[-1, 0], ["-5/4", "4/3"]],
                       "mean": [0, 0], "cov": [["169/36", "22/9"], ["22/9", "61/36"]]},
    # F(Σ0) = 0 with Σ0 singular and non-zero: a stationary state (σ11 = 1 is σ* = −a/(vβ) of its coordinate)
    "stationary": {"A": [[1, 0], [0, -1]], "B": [[1, 0], [0, 2]], "V": [[-1, 0], [0, 1]], "mean": [0, 0],
                   "cov": [[1, 0], [0, 0]]},
}
RUNS = [
    ("blowup", ["blowup", "{scalar_blowup}"]),
    ("no_blowup", ["blowup", "{opposite_sign}"]),
    ("blowup_general", ["blowup", "{general_blowup}", "--digits", "12"]),
    ("reachability", ["reach", "{start}", "--target", "{target}", "--time", "1"]),
    ("unreachable_rank", ["reach", "{degenerate}", "--target", "{target}", "--time", "1"]),
    ("unreachable_in_time", ["reach", "{start}", "--target", "{target}", "--time", "1/100", "--max-norm", "1"]),
    ("stationary_state", ["check", "{stationary}"]),
]


def main_(out: Path = OUT) -> int:
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = {}
        for name, doc in INPUTS.items():
            files[name] = tmp / f"{name}.json"
            files[name].write_text(json.dumps(doc))
        for ex in EXAMPLES:
            p = tmp / f"ex_{ex.name}.json"
            p.write_text(json.dumps(problem_to_dict(ex.params, ex.state)))
            RUNS.append((None, ["check", str(p)]))
        made = {}
        for kind, argv in RUNS:
            cert = tmp / "cert.json"
            cert.unlink(missing_ok=True)
            main([a.format(**{k: str(v) for k, v in files.items()}) for a in argv] + ["--json", "--cert", str(cert)])
            if cert.exists():
                doc = json.loads(cert.read_text())
                got = doc["claim"]["kind"]
                if kind not in (None, got):
                    print(f"{argv}: expected a {kind} certificate, got {got}", file=sys.stderr)
                    return 1
                made.setdefault(got, doc)
        # `equilibrium` has no --cert on the command line: the library writes it.
        from riccati_verify.certify.stability import enclose_equilibrium, equilibrium_certificate, find_equilibria

        for e in EXAMPLES:
            for rep in find_equilibria(e.params):
                enc = enclose_equilibrium(e.params, rep.cov) if rep.verified else None
                doc = equilibrium_certificate(e.params, enc) if enc is not None else None
                if doc is not None:
                    made.setdefault("equilibrium", doc)
        # `trajectory_convergence`: the library writes it (a d = 2 start just outside the certified region)
        made.setdefault("trajectory_convergence", _trajectory_certificate())
        made.update(_family_certificates())
        from riccati_verify.certify.training import example_nonconvexity_certificate
        made["training_nonconvexity"] = example_nonconvexity_certificate()[0]
        made["all_equilibria"] = _all_equilibria_certificate()
        # a second blowup_general file (stem "<kind>.<variant>"): the turning tail
        made["blowup_general.turning"] = _turning_certificate()
        for kind, doc in made.items():
            (out / f"{kind}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print("made:", sorted(made), file=sys.stderr)
    return 0


def _all_equilibria_certificate() -> dict:
    """The census of a general d = 2 system: four PSD equilibria, R from the a-priori bound."""
    from fractions import Fraction as Q

    from riccati_verify.core.model import Params
    from riccati_verify.certify.equilibria_all import census

    p = Params.from_arrays([[Q(1, 2), Q(1, 3)], [Q(-1, 4), 1]], [[-1, Q(1, 2)], [Q(1, 3), Q(-3, 2)]],
                           [[1, Q(1, 4)], [Q(-1, 2), Q(3, 2)]])
    return census(p, progress=False).certificate


def _trajectory_certificate() -> dict:
    import math
    from fractions import Fraction as Q

    import numpy as np

    from riccati_verify.core import exact
    from riccati_verify.core.model import Gaussian, Params
    from riccati_verify.certify.roa import region_of_attraction, trajectory_certificate
    from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibrium

    p = Params.from_arrays([[1, 1], [-1, 1]], [[1, 0], [0, 1]], [[Q(-1), Q(1, 50)], [0, -1]])
    enc = enclose_equilibrium(p, newton_equilibrium(p, np.eye(2)))
    roa = region_of_attraction(p, enc.center, enc.radius)
    Xf = np.array(roa.stability.X, dtype=float)
    h = np.array([1.0, 0.0, 1.0])
    s = Q(math.sqrt(8 * float(roa.c) / float(h @ Xf @ h))).limit_denominator(10 ** 8)
    state = Gaussian((Q(0), Q(0)), exact.add(enc.center, exact.identity(2, s)))
    return trajectory_certificate(p, state, enc.center, enc.radius, region=roa).certificate


def _turning_certificate() -> dict:
    """A blowup_general certificate with a turning tail (`checker/_turning_tail.py`): d = 2, A = I/2,
    B = diag(1, 4), V = I/2 + 2J (J the rotation by π/2), Σ0 = e1e1ᵀ, 7 digits (verified in ~0.9 CPU s).  A = cI has a closed
    form (tests/test_turning_review.py), and a non-zero A exercises the tail's ball A ⊇ [0, ε̄]·Ã."""
    from fractions import Fraction as Q

    import numpy as np

    from riccati_verify.core.model import Gaussian, Params
    from riccati_verify.certify.blowup.turning import certify_turning

    p = Params.from_arrays([[Q(1, 2), 0], [0, Q(1, 2)]], [[1, 0], [0, 4]], [[Q(1, 2), -2], [2, Q(1, 2)]])
    out = certify_turning(p, Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]]), 7, np.eye(2))
    if not out["ok"]:
        raise RuntimeError(out["reason"])
    return out["certificate"]


FAMILY_BOXES = [
    {"A": [[{"lo": "1/2", "hi": "1"}]], "B": [[{"lo": "1/2", "hi": "1"}]], "V": 1, "mean": [0], "cov": [[1]]},
    {"A": [[{"lo": "1/2", "hi": "1"}, 1], [-1, 0]], "B": [[1, "1/4"], ["1/4", "1/2"]], "V": {"lo": "-1", "hi": "-1/2"},
     "mean": [0, 0], "cov": [[1, 0], [0, 1]]},
    {"A": [["-1/8", 1], [-1, 0]], "B": [[1, "1/4"], ["1/4", "1/2"]], "V": {"lo": "1/2", "hi": "9/16"},
     "mean": [0, 0], "cov": [[1, 0], [0, 1]]},
    {"A": [[{"lo": "99/100", "hi": "101/100"}, 1], [-1, 1]], "B": [[1, 0], [0, 1]],
     "V": [[-1, {"lo": "0", "hi": "1/100"}], [0, -1]], "mean": [0, 0], "cov": [[1, 0], [0, 1]]},
]


def _family_certificates() -> dict:
    """One certificate of each family kind (`certify.family`), from the small boxes above."""
    from riccati_verify.certify.family import certify_family
    from riccati_verify.core.io import box_from_dict

    made = {}
    for doc in FAMILY_BOXES:
        for c in certify_family(box_from_dict(doc)).claims:
            if c.valid:
                made.setdefault(c.kind, c.certificate)
    return made


if __name__ == "__main__":
    sys.exit(main_(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
