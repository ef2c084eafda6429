"""The certificate mutator of the fuzzing campaign: one tampered copy of a valid certificate.

Every random choice goes through a `Chooser`, so the same mutator is driven by hypothesis
(`HypothesisChooser`: shrinking, the CI slice) or by a seeded `random.Random` (`RandomChooser`:
the long campaign, reproducible from its seed).  Mutations:

* numeric perturbations of one leaf: ±1 in the last place of a decimal, ±10^-k relative or
  absolute, sign, ×2, ÷2, 0, ×10^±300, and extreme values (1e±400, 420-digit integers, 1/0,
  non-numbers);
* claim-targeted numeric edits: a bracket end, a time, a tolerance, a bound or a horizon moved
  by a tiny relative amount either way (true claims turn false at the sharpest edge);
* structural edits: a key deleted, an unknown key added, a part retyped, a list shortened or
  lengthened, two list entries swapped (an asymmetric covariance, reordered segments);
* swaps between certificates: the claim, witness or params of another certificate, or one key
  of the claim / witness / params taken from another certificate;
* claim flips: a boolean negated, an enumerated value replaced by another of its kind.
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction

EXTREMES = ["1e400", "-1e400", "1e-400", "0", "-1", "1/3", "1e-300", "1" * 420, "9" * 1000, "1/0", "abc",
            "1e401", "0.1e-399", 1e308, -0.0, True, None, [], {}, "", " 1 ", "+2", "1/" + "7" * 400, 2 ** 70,
            1.5, "NaN", "1/3e2"]

ENUMS = {
    "regime": ["equilibrium", "collapse", "growth", "blowup"],
    "scope": ["all_pd_states", "initial_state"],
    "equilibrium": ["positive_definite", "zero", "any"],
    "limit": ["equilibrium", "zero"],
    "control_class": ["congruence", "full"],
    "route": ["radon-monotone", "radon-cover", "diagonal-closed-form", "opposite-sign", "a-zero", "lyapunov",
              "zero-covariance"],
    "criterion": ["mean", "spectrum", "displacement"],
    "V": ["positive_definite", "negative_definite"],
    "B": ["positive_definite", "negative_definite"],
    "kind": ["blowup", "no_blowup", "cone_collapse", "equilibrium", "lyapunov_stability", "riccati_regime",
             "trajectory_convergence", "reachability", "unreachable_in_time", "unreachable_rank"],
}
CLAIM_NUMBERS = ("lower", "upper", "time", "tolerance", "max_norm", "horizon", "rate_lower", "rate_upper")


class RandomChooser:
    """Choices from a seeded random.Random."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def choice(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class HypothesisChooser:
    """Choices drawn from hypothesis' `st.data()` (so failures shrink)."""

    def __init__(self, data):
        self.data = data

    def choice(self, seq):
        from hypothesis import strategies as st

        return seq[self.data.draw(st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return self.data.draw(st.integers(lo, hi))


def leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,))
    else:
        yield path, doc


def lists(doc, path=()):
    if isinstance(doc, list):
        yield path, doc
        for i, v in enumerate(doc):
            yield from lists(v, path + (i,))
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from lists(v, path + (k,))


def get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def put(doc, path, value):
    get(doc, path[:-1])[path[-1]] = value


def _frac(x) -> Fraction | None:
    if isinstance(x, bool) or x is None:
        return None
    try:
        return Fraction(x) if isinstance(x, (int, float)) else Fraction(str(x).strip())
    except (ValueError, ZeroDivisionError, TypeError):
        return None


def _text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def perturb(x, ch) -> object:
    """A numeric perturbation of one leaf (a non-number becomes an extreme value)."""
    q = _frac(x)
    if q is None:
        return ch.choice(EXTREMES)
    op = ch.choice(["ulp", "rel", "abs", "neg", "double", "half", "zero", "big", "tiny", "one"])
    k = ch.integer(1, 60)
    sign = ch.choice([1, -1])
    if op == "ulp" and isinstance(x, str) and "." in x:
        digits = len(x.split(".")[1].split("e")[0].split("E")[0])
        q += sign * Fraction(1, 10 ** digits)
    elif op in ("ulp", "rel"):
        q += sign * q * Fraction(1, 10 ** k) if q else sign * Fraction(1, 10 ** k)
    else:
        q = {"abs": q + sign * Fraction(1, 10 ** k), "neg": -q, "double": 2 * q, "half": q / 2,
             "zero": Fraction(0), "big": q * 10 ** 300, "tiny": q / 10 ** 300, "one": Fraction(1)}[op]
    return _text(q)


def _claim_number(d, ch) -> str:
    """Move a numeric claim field by a tiny relative amount (the sharpest edge of its truth)."""
    keys = [k for k in CLAIM_NUMBERS if _frac(d["claim"].get(k)) is not None]
    if not keys:
        return "noop"
    key = ch.choice(keys)
    q = _frac(d["claim"][key])
    lo, up = _frac(d["claim"].get("lower")), _frac(d["claim"].get("upper"))
    width = (up - lo) if (lo is not None and up is not None and up > lo) else (abs(q) or Fraction(1)) / 10 ** 6
    step = ch.choice([width / 10 ** ch.integer(0, 6), width * ch.integer(1, 10), abs(q) / 10 ** ch.integer(1, 80)
                      or Fraction(1, 10 ** 20)])
    q += ch.choice([1, -1]) * step
    d["claim"][key] = _text(q)
    return f"claim_number {key}"


def mutate(doc: dict, ch, corpus: dict[str, dict]) -> tuple[dict, str]:
    """One tampered copy of `doc` and a description of the mutation."""
    d = copy.deepcopy(doc)
    op = ch.choice(["perturb", "perturb", "perturb", "claim_number", "claim_number", "extreme", "delete",
                    "add_key", "retype", "shape", "reorder", "swap_part", "swap_key", "flip", "flip"])
    if op in ("perturb", "extreme"):
        ls = [(p, x) for p, x in leaves(d) if p and p[0] in ("claim", "witness", "params")]
        if not ls:
            return d, "noop"
        path, x = ch.choice(ls)
        put(d, path, perturb(x, ch) if op == "perturb" else ch.choice(EXTREMES))
        return d, f"{op} {'/'.join(map(str, path))}"
    if op == "claim_number":
        return d, _claim_number(d, ch)
    if op == "delete":
        part = ch.choice([("claim",), ("witness",), ("params",), ()])
        obj = get(d, part)
        if isinstance(obj, dict) and obj:
            k = ch.choice(sorted(obj))
            del obj[k]
            return d, f"delete {'/'.join(part + (k,))}"
        return d, "noop"
    if op == "add_key":
        part = ch.choice([("claim",), ("witness",), ("params",), ()])
        get(d, part)[ch.choice(["zz_unknown", "statement", "positive_definite", "max_norm", "horizon",
                                "kernel_convention", "b"])] = ch.choice(EXTREMES + ["exp(<x,By>)"])
        return d, f"add_key {'/'.join(part)}"
    if op == "retype":
        part = ch.choice(["claim", "witness", "params", "version", "format"])
        d[part] = ch.choice(EXTREMES)
        return d, f"retype {part}"
    if op in ("shape", "reorder"):
        ls = [(p, x) for p, x in lists(d) if x]
        if not ls:
            return d, "noop"
        path, x = ch.choice(ls)
        if op == "reorder":
            if len(x) < 2:
                return d, "noop"
            i, j = ch.integer(0, len(x) - 1), ch.integer(0, len(x) - 1)
            x[i], x[j] = x[j], x[i]
            return d, f"reorder {'/'.join(map(str, path))} {i}<->{j}"
        if ch.choice([True, False]):
            x.pop(ch.integer(0, len(x) - 1))
        else:
            x.insert(ch.integer(0, len(x)), copy.deepcopy(ch.choice(x)))
        return d, f"shape {'/'.join(map(str, path))}"
    if op == "swap_part":
        name = ch.choice(sorted(corpus))
        part = ch.choice(["claim", "witness", "params"])
        d[part] = copy.deepcopy(corpus[name][part])
        return d, f"swap_part {part} from {name}"
    if op == "swap_key":
        name = ch.choice(sorted(corpus))
        part = ch.choice(["claim", "witness", "params"])
        src = corpus[name].get(part)
        if not isinstance(src, dict) or not src or not isinstance(d.get(part), dict):
            return d, "noop"
        k = ch.choice(sorted(src))
        d[part][k] = copy.deepcopy(src[k])
        return d, f"swap_key {part}/{k} from {name}"
    # flip: a boolean negated, or an enumerated value replaced
    cands = [(p, x) for p, x in leaves(d.get("claim", {})) if isinstance(x, bool) or
             (p and p[-1] in ENUMS and isinstance(x, str))]
    cands += [(("..w",) + p, x) for p, x in leaves(d.get("witness", {})) if p and p[-1] in ("route", "criterion")]
    if not cands:
        return d, "noop"
    p, x = ch.choice(cands)
    where, p = ("witness", p[1:]) if p[0] == "..w" else ("claim", p)
    new = (not x) if isinstance(x, bool) else ch.choice([e for e in ENUMS[p[-1]] if e != x] or [x])
    put(d[where], p, new)
    return d, f"flip {where}/{'/'.join(map(str, p))} -> {new}"
