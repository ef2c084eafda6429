"""The oracle-decided fuzzing campaign (issue 18 item 4): tampered certificates of every kind,
re-checked by `verify_certificate` and judged by the independent oracle (`oracle.judge`).

    python tests/fuzz/campaign.py [--cases 10000] [--seed 0] [--oracle-seconds 20]

Counts: tried; the oracle's verdicts on the tampered claims (false / true / undecided); the
checker's (rejected / accepted); false accepts (accepted, oracle says false: a soundness bug);
accepted-undecided (listed for review); crashes (an exception escaping `verify_certificate`, or
a result that is not a CheckResult).  The bar: 0 false accepts, 0 crashes.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "fuzz"

from fuzz.mutator import RandomChooser, mutate  # noqa: E402
from fuzz.oracle import FALSE, TRUE, UNDECIDED, Judgement, judge  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "certificates"


def corpus() -> dict[str, dict]:
    """The seed corpus: one valid certificate of every kind (tests/data/certificates)."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def judged(doc, seconds: float) -> Judgement:
    """The oracle's verdict within `seconds` (undecided when it runs out of time)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        return judge(doc)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return judge(doc)
    except _Timeout:
        return Judgement(UNDECIDED, f"oracle timeout ({seconds:g} s)")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_case(doc, oracle_seconds: float = 20.0) -> dict:
    """One tampered certificate: the checker's verdict (or the crash) and the oracle's."""
    from riccati_verify.checker import CheckResult, verify_certificate

    t0 = time.perf_counter()
    crash = None
    try:
        res = verify_certificate(doc)
        if not isinstance(res, CheckResult) or not isinstance(res.valid, bool) or not isinstance(res.reason, str):
            crash, valid = f"verify_certificate returned {res!r}"[:300], False
        else:
            valid = res.valid
    except BaseException as e:  # noqa: BLE001 - every escape is a crash of the campaign
        if isinstance(e, KeyboardInterrupt):
            raise
        crash, valid = f"{type(e).__name__}: {e}"[:300], False
    dt = time.perf_counter() - t0
    j = judged(doc, oracle_seconds)
    return {"valid": valid, "crash": crash, "truth": j.truth, "why": j.reason, "verify_s": dt,
            "oracle_s": time.perf_counter() - t0 - dt}


class Tally:
    """The campaign's counts, and the cases to review."""

    def __init__(self):
        self.c = Counter()
        self.false_accepts: list[str] = []
        self.accepted_undecided: list[str] = []
        self.crashes: list[str] = []
        self.worst_verify_s = 0.0
        self.worst_case = ""
        self.slowest: list[tuple[float, str]] = []     # (verify + oracle seconds, case), the 5 slowest

    def add(self, what: str, r: dict) -> None:
        c = self.c
        c["tried"] += 1
        c[{FALSE: "false_claims", TRUE: "true_claims", UNDECIDED: "undecided"}[r["truth"]]] += 1
        if r["why"].startswith(("oracle error", "oracle timeout")):
            c["oracle_errors" if r["why"].startswith("oracle error") else "oracle_timeouts"] += 1
        self.slowest = sorted(self.slowest + [(r["verify_s"] + r.get("oracle_s", 0.0), what)])[-5:]
        if r["verify_s"] > self.worst_verify_s:
            self.worst_verify_s, self.worst_case = r["verify_s"], what
        if r["crash"]:
            c["crashes"] += 1
            self.crashes.append(f"{what}: {r['crash']}")
        elif r["valid"]:
            c["accepted"] += 1
            if r["truth"] == FALSE:
                c["false_accepts"] += 1
                self.false_accepts.append(f"{what}: {r['why']}")
            elif r["truth"] == UNDECIDED:
                c["accepted_undecided"] += 1
                self.accepted_undecided.append(f"{what}: {r['why']}")
            else:
                c["accepted_true"] += 1
        else:
            c["rejected"] += 1
            if r["truth"] == FALSE:
                c["rejected_false"] += 1

    def line(self) -> str:
        c = self.c
        return (f"tried {c['tried']}; oracle: {c['false_claims']} false claims, {c['true_claims']} true, "
                f"{c['undecided']} undecided ({c['oracle_timeouts']} oracle timeouts, {c['oracle_errors']} oracle "
                f"errors); checker: rejected {c['rejected']}, accepted {c['accepted']} "
                f"({c['accepted_true']} true, {c['accepted_undecided']} undecided); "
                f"false accepts {c['false_accepts']}; crashes {c['crashes']}; "
                f"worst verify {self.worst_verify_s:.2f} s ({self.worst_case})")


def tampered(cases: int, seed: int):
    """(i, corpus name, tampered document, how) for the campaign's `cases` draws from a seeded
    random.Random: the one sequence that the campaign and its re-judgement replay."""
    ch = RandomChooser(random.Random(seed))
    cor = corpus()
    names = sorted(cor)
    for i in range(cases):
        name = ch.choice(names)
        doc, how = mutate(cor[name], ch, cor)
        yield i, name, doc, how


def campaign(cases: int, seed: int = 0, oracle_seconds: float = 20.0, progress=None) -> Tally:
    """`cases` tampered certificates from a seeded random.Random (reproducible from `seed`)."""
    t = Tally()
    for i, name, doc, how in tampered(cases, seed):
        t.add(f"#{i} {name}: {how}", run_case(doc, oracle_seconds))
        if progress and (i + 1) % 250 == 0:
            progress(f"{i + 1}/{cases}: {t.line()}")
    return t


def rejudge_blowup_general(cases: int, seed: int = 0, progress=None) -> Counter:
    """Replay the seeded campaign and re-judge, at high precision (`oracle.judge_blowup_general_hp`,
    tens of seconds per distinct parameter set), the accepted blowup_general cases that the float
    oracle left undecided.  Counts: replayed, float_undecided, accepted, then true / false / undecided."""
    from riccati_verify.checker import verify_certificate
    from fuzz.oracle import judge_blowup_general, judge_blowup_general_hp, Undecided

    c = Counter()
    for i, name, doc, how in tampered(cases, seed):
        if not (isinstance(doc.get("claim"), dict) and doc["claim"].get("kind") == "blowup_general"):
            continue
        c["replayed"] += 1
        try:
            judge_blowup_general(doc)
            continue
        except Undecided as e:
            if "float resolution" not in str(e):
                continue
        except Exception:  # noqa: BLE001 - ill-formed: decided by the campaign already
            continue
        c["float_undecided"] += 1
        if not verify_certificate(doc).valid:
            continue
        c["accepted"] += 1
        try:
            r = judge_blowup_general_hp(doc)
        except Undecided:
            r = UNDECIDED
        c[r] += 1
        if r == FALSE:
            print(f"  FALSE ACCEPT #{i} {name}: {how}", flush=True)
        if progress:
            progress(f"#{i} {how}: {r}  {dict(c)}")
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oracle-seconds", type=float, default=20.0)
    ap.add_argument("--rejudge-blowup-general", action="store_true",
                    help="replay the campaign; re-judge its accepted, float-undecided blowup_general cases at high precision")
    a = ap.parse_args(argv)
    if a.rejudge_blowup_general:
        c = rejudge_blowup_general(a.cases, a.seed, progress=lambda m: print(m, flush=True))
        print(f"blowup_general re-judgement (seed {a.seed}, {a.cases} cases): {dict(c)}")
        return 1 if c[FALSE] else 0
    t0 = time.perf_counter()
    t = campaign(a.cases, a.seed, a.oracle_seconds, progress=lambda m: print(m, flush=True))
    print(f"fuzz campaign (seed {a.seed}, {time.perf_counter() - t0:.0f} s): {t.line()}")
    for s, w in t.slowest:
        print(f"  slow case ({s:.1f} s): {w}")
    for w in t.false_accepts:
        print(f"  FALSE ACCEPT {w}")
    for w in t.crashes:
        print(f"  CRASH {w}")
    why = Counter(w.split(": ", 2)[-1][:70] for w in t.accepted_undecided)
    for w, n in why.most_common():
        print(f"  accepted, oracle undecided ({n}): {w}")
    return 1 if t.c["false_accepts"] or t.c["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
