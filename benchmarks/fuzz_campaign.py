"""The standing fuzzing campaign (issue 18): tampered certificates of every kind and hostile
parameter files, each run with a per-case time and memory limit, and the counts.

    python benchmarks/fuzz_campaign.py [--cases 10000] [--seed 0] [--time-limit 20] [--memory-mb 2048]

Certificates: every file in tests/data/certificates/ is mutated (numeric perturbations and
extreme magnitudes of one leaf, structural edits, swaps of a part between certificates, claim
flips) and re-checked by `verify_certificate` in a child process under RLIMIT_AS and a wall-clock
limit.  Parameter files: hostile variants of a valid file go through `load_problem_text` and the
float-range check of the commands.  A *crash* is an exception escaping the entry point, a killed
child or a timeout; an *accept* of a mutated certificate is counted and listed.  The bar is
0 crashes and 0 timeouts.  This script is the crash-and-limits campaign (hostile parameter files,
per-case RLIMIT_AS and wall-clock limits); whether an accepted tampered certificate's claim is
still true is decided by the independent oracle of the oracle-decided campaign,
tests/fuzz/campaign.py.  `hostile_params`, `run_params` and `campaign` are imported by
tests/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "certificates"

EXTREMES = ["1e400", "-1e400", "1e-400", "0", "-1", "1/3", "1e-300", "1" * 420, "9" * 1000, "1/0", "abc",
            "1e401", "0.1e-399", 1e308, -0.0, True, None, [], {}, "", " 1 ", "+2", "1/" + "7" * 400]


def certificates() -> dict[str, dict]:
    """The seed corpus: one valid certificate of every kind."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))}


def _leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, path + (i,))
    else:
        yield path, doc


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _set(doc, path, value):
    _get(doc, path[:-1])[path[-1]] = value


def _perturb(x, rng: random.Random):
    from fractions import Fraction

    try:
        q = Fraction(str(x)) if not isinstance(x, bool) else None
    except (ValueError, ZeroDivisionError):
        q = None
    if q is None:
        return rng.choice(EXTREMES)
    c = rng.choice(["eps", "neg", "double", "zero", "half", "big", "tiny"])
    q = {"eps": q + Fraction(1, 10 ** rng.randint(1, 40)), "neg": -q, "double": 2 * q, "zero": Fraction(0),
         "half": q / 2, "big": q * 10 ** 300, "tiny": q / 10 ** 300}[c]
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def mutate(doc: dict, rng: random.Random, corpus: dict[str, dict]) -> tuple[dict, str]:
    """One tampered copy of `doc` and a description of the mutation."""
    d = copy.deepcopy(doc)
    leaves = list(_leaves(d))
    op = rng.choice(["perturb", "perturb", "extreme", "delete", "add_key", "retype", "swap", "flip", "shape"])
    if op in ("perturb", "extreme") and leaves:
        path, x = rng.choice(leaves)
        if not path:
            return d, "noop"
        _set(d, path, _perturb(x, rng) if op == "perturb" else rng.choice(EXTREMES))
        return d, f"{op} {'/'.join(map(str, path))}"
    if op == "delete":
        parts = [("claim",), ("witness",), ("params",), ()]
        part = rng.choice(parts)
        obj = _get(d, part)
        if isinstance(obj, dict) and obj:
            k = rng.choice(sorted(obj))
            del obj[k]
            return d, f"delete {'/'.join(part + (k,))}"
        return d, "noop"
    if op == "add_key":
        part = rng.choice([("claim",), ("witness",), ()])
        _get(d, part)["zz_unknown"] = rng.choice(EXTREMES)
        return d, f"add_key {'/'.join(part)}"
    if op == "retype":
        part = rng.choice(["claim", "witness", "params", "version", "format"])
        d[part] = rng.choice(EXTREMES)
        return d, f"retype {part}"
    if op == "swap":
        other = corpus[rng.choice(sorted(corpus))]
        part = rng.choice(["claim", "witness", "params"])
        d[part] = copy.deepcopy(other[part])
        return d, f"swap {part}"
    if op == "flip":
        bools = [(p, x) for p, x in _leaves(d.get("claim", {})) if isinstance(x, bool)]
        if bools:
            p, x = rng.choice(bools)
            _set(d["claim"], p, not x)
            return d, f"flip claim/{'/'.join(map(str, p))}"
        return d, "noop"
    lists = [(p, x) for p, x in _walk_lists(d)]
    if lists:
        p, x = rng.choice(lists)
        if rng.random() < 0.5:
            x.pop()
        else:
            x.append(copy.deepcopy(x[-1]) if x else "0")
        return d, f"shape {'/'.join(map(str, p))}"
    return d, "noop"


def _walk_lists(doc, path=()):
    if isinstance(doc, list):
        if doc:
            yield path, doc
        for i, v in enumerate(doc):
            yield from _walk_lists(v, path + (i,))
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from _walk_lists(v, path + (k,))


BASE_PARAMS = {"A": [["1/2", 1], [-1, "1/2"]], "B": [[-1, 0], [0, "-1/2"]], "V": "1/2", "b": ["1/10", 0],
               "mean": [1, 0], "cov": [[1, "1/4"], ["1/4", "1/2"]]}


def hostile_params(rng: random.Random) -> str:
    """JSON text of a hostile variant of a valid parameter file."""
    d = copy.deepcopy(BASE_PARAMS)
    op = rng.choice(["leaf", "leaf", "shape", "key", "text", "dup"])
    if op == "leaf":
        path, _ = rng.choice(list(_leaves(d)))
        _set(d, path, rng.choice(EXTREMES))
    elif op == "shape":
        k = rng.choice(sorted(d))
        d[k] = rng.choice([[], [[]], [[1, 2, 3]], [[1]] * 70, "x", 3, [[[1]]]])
    elif op == "key":
        d[rng.choice(["zz", "A", "kernel_convention", "name"])] = rng.choice(EXTREMES)
    elif op == "dup":
        return json.dumps(d)[:-1] + ', "A": [[1]]}'
    text = json.dumps(d)
    if op == "text":
        cut = rng.randrange(len(text))
        text = text[:cut] + rng.choice(["", "]", "{", "NaN", "Infinity", "\x00", "[" * 5000]) + text[cut:]
    return text


def run_params(text: str) -> str:
    """'ok', 'refused' or raises (a crash): the parameter path of every command."""
    from riccati_verify.app.commands._common import in_float_range
    from riccati_verify.core.errors import InputError
    from riccati_verify.core.io import load_problem_text

    try:
        in_float_range(load_problem_text(text))
        return "ok"
    except InputError:
        return "refused"


def run_certificate(doc: dict) -> bool:
    """The checker's verdict; raises only on a crash (which verify_certificate must never do)."""
    from riccati_verify.checker import CheckResult, verify_certificate

    res = verify_certificate(doc)
    if not isinstance(res, CheckResult) or not isinstance(res.reason, str):
        raise TypeError(f"verify_certificate returned {res!r}")
    return res.valid


def _child(job, memory_mb, q):
    import resource

    try:
        lim = memory_mb * 2 ** 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    except (ValueError, OSError):
        pass
    kind, payload = job
    try:
        q.put(("ok", run_certificate(payload) if kind == "cert" else run_params(payload)))
    except BaseException as e:  # noqa: BLE001 - the campaign records every escape
        q.put(("crash", f"{type(e).__name__}: {e}"[:300]))


def _limited(job, time_limit: float, memory_mb: int):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(job, memory_mb, q))
    t0 = time.perf_counter()
    p.start()
    p.join(time_limit)
    if p.is_alive():
        p.kill()
        p.join()
        return "timeout", time.perf_counter() - t0
    try:
        return q.get(timeout=1), time.perf_counter() - t0
    except Exception:  # noqa: BLE001
        return ("crash", f"child exited {p.exitcode}"), time.perf_counter() - t0


def campaign(cases: int, seed: int, time_limit: float, memory_mb: int, out=sys.stdout) -> dict:
    rng = random.Random(seed)
    corpus = certificates()
    counts = {"tried": 0, "certificates": 0, "parameter_files": 0, "rejected": 0, "accepted_mutants": 0,
              "crashes": 0, "timeouts": 0, "worst_s": 0.0}
    accepted = []
    for i in range(cases):
        if i % 4 == 3:
            job, what = ("params", hostile_params(rng)), "params"
            counts["parameter_files"] += 1
        else:
            name = rng.choice(sorted(corpus))
            doc, how = mutate(corpus[name], rng, corpus)
            job, what = ("cert", doc), f"{name}: {how}"
            counts["certificates"] += 1
        counts["tried"] += 1
        res, dt = _limited(job, time_limit, memory_mb)
        counts["worst_s"] = max(counts["worst_s"], round(dt, 2))
        if res == "timeout":
            counts["timeouts"] += 1
            print(f"TIMEOUT {what}", file=out)
        elif res[0] == "crash":
            counts["crashes"] += 1
            print(f"CRASH {what}: {res[1]}", file=out)
        elif job[0] == "cert":
            if res[1]:
                counts["accepted_mutants"] += 1
                accepted.append(what)
            else:
                counts["rejected"] += 1
    counts["accepted_list"] = sorted(set(accepted))
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--memory-mb", type=int, default=2048)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    c = campaign(a.cases, a.seed, a.time_limit, a.memory_mb)
    print(f"fuzz campaign (seed {a.seed}, {time.perf_counter() - t0:.0f} s): tried {c['tried']} "
          f"({c['certificates']} tampered certificates, {c['parameter_files']} hostile parameter files); "
          f"rejected {c['rejected']}; accepted mutants {c['accepted_mutants']} (listed for the oracle); "
          f"crashes {c['crashes']}; timeouts {c['timeouts']}; worst case {c['worst_s']} s")
    for w in c["accepted_list"]:
        print(f"  accepted: {w}")
    return 1 if c["crashes"] or c["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
