"""Stage 1 of a `blowup_general` certificate: the chain of rescaled Lohner segments from Σ0 to t1,
on one core or, speculatively, on two (trusted core: imports the standard library, python-flint,
`riccati_verify.core`, the checker's own flow modules and `check_equilibrium`'s rational reader only).

**The chain.**  Segment k divides the enclosure by 2^{e_k} (exact) and runs `_lohner.enclose_lohner`
with V replaced by 2^{E_k}V, E_k = e_0 + … + e_k (`check_blowup_general`, stage 1).  When a cut
(s, τ) is planned (`cut_point`), segment s runs as two flows, [0, τ] and [τ, duration_s], the second
continuing from the first's parallelepiped (`enclose_lohner`'s `start`): the same proof with one more
step boundary.  The cut is planned from the witness alone, so a run on one core and a run on two
check the same chain.

**The speculative second half.**  With two CPUs (`core.threads.thread_count()` ≥ 2) and n = d(d+1)/2
below `core.threads.THREAD_MIN_N` (beyond, the chain's products use flint's threads instead), a second
process B starts before the chain: it marches the midpoint Taylor series (`march`: no enclosure,
no proof) from Σ0 to the cut, puts the box Z of half-width 2^-(tol_s − SLACK_BITS)·max(1, |Σ|)
around that point, and runs the validated segments from Z to t1.  This process (A) meanwhile runs
the chain to the cut: enclosure X.  If X ⊆ Z (entry by entry: exact upper bounds of |X_ij − centre_ij|
against Z's half-width, compared as rationals), every true Σ(τ)
lies in Z, and B's own validated flows then enclose Σ(t1): a proof in which the march only placed
Z.  `candidates` yields that enclosure first; when the caller's entry test or bracket fails on it
(B's start part scales down to X's share of Z, `_lohner` point 7, but its errors r were made on
the whole box Z, so its enclosure can be wider than the chain's), or X ⊄ Z, or B failed, A continues the chain
from X and yields the chain's enclosure.  A does not wait for B: at the cut it goes on with its own
second half and polls B after every step, and B's answer counts when it arrives first and is accepted
(then A stops; if the caller refuses B's enclosure, A runs its second half after all).  So the verdict
on two cores is the chain's verdict, or an
acceptance by B's second proof; B's work runs on the other core and can only save time.  (B's
flow must fit the step budget the chain had left, but it stops at its own width limit, not the
caller's, and whether it answers in time depends on the machine: two cores can accept a witness that
one core's chain refuses, never on a weaker proof.)  The cut,
the march, Z's radius and the cost model are heuristics: they move the wall time, never soundness.
"""

from __future__ import annotations

import json
import math
import os
import select
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.threads import ENV, THREAD_MIN_N, thread_count
from riccati_verify.checker._lohner import _Coords, enclose_lohner
from riccati_verify.checker.check_equilibrium import parse_fraction
from riccati_verify.checker._reduced_riccati import WitnessError
from riccati_verify.checker._validated_flow import _centre_step, _Field, _horner, _max_abs, _step_log2_guesses

__all__ = ["Segment", "SLACK_BITS", "candidates", "cut_point", "march"]

SLACK_BITS = 40
"""Z's half-width is 2^-(tol_s − SLACK_BITS) of the state, generous on purpose: Z only has to contain
the chain's enclosure at the cut, and B's answer scales down to the part of Z that enclosure fills
(`_lohner` point 7).  At 30 digits the chain's radius at the cut was 2^-(tol_s − 6.7), 2^-(tol_s − 26.9)
and 2^-(tol_s − 32.2) of the state on general_instance(4, 0, 1), (4, 0, 15) and (3, 0, 11): a slack of
18 missed the last two.  At most tol_s/3: at tol_s = 56 (a 10-digit d = 2 certificate) a box 2^-16 wide
made B's flow fail its width limit."""
MARCH_MARGIN = 16
"""Bits by which B's march stays below its box: segment k is marched at 2^-(tol_k − slack + MARCH_MARGIN)
per step (tol_k already provides for the growth of an error up to t1)."""
BOXES = ("picard", "high_order", "defect")
"""The optional witness["flow"]["box"] of `check_blowup_general`: the flow's a-priori mode (`_lohner` points
1, 1' and 8); absent means "picard", the box of the certificates written before the key existed."""
ANSWER_SECONDS = 30.0
"""Seconds to read B's answer once it has begun to write it (it writes one JSON text and exits)."""
MAX_ANSWER_BYTES = 1 << 24
"""The longest answer B may send (a d = 5 answer at 4096 bits is under 2 MB); a longer one is no answer."""
MAX_NUMBER_CHARS = 2 * 4300 + 2
"""The longest "p/q" text of one rational in a job or an answer (the writer emits nothing else): two integers
within CPython's default int-to-text limit of 4300 digits, past which neither `_q` nor the parser works
(`candidates` then starts no second process; an answer that long is no answer)."""
B_WIDTH_LIMIT = 2.0 ** -8
"""B's flow stops only past this relative radius (a work saver): its set includes the whole start box,
which the parent scales down to the part its own enclosure fills, so the caller's limit, made for
the chain's width, would stop B where its answer is still tight enough."""
MARCH_COST = 0.08
"""B's march over a span, with its start, as a fraction of the validated flow's time over that span (one
centre series per step, steps about 2.7 times longer, and `MARCH_MARGIN` bits instead of the flow's
tolerance).  general_instance(4, 0, 15) at 30 digits, checker wall s: 8.8 with 0.15 (this process the
last to finish), 8.65 with 0.08, 8.5 with 0.04 (B the last, by 0.1-0.4 s); (4, 0, 1): 2.0, 2.25, 2.0."""
STEP_WORK = 1000
"""The cost model's per-step constant, in units of order²: a Lohner step at d = 4 took 9.5, 7.7, 5.8
and 4.8 ms at orders 48, 40, 30 and 20 (about 2.7 ms + 0.003 ms·order²), with about 22 steps per bit
of growth of ‖Σ‖ in every segment (general_instance(4, 0, 15))."""
MIN_WORK = 20 * (48 ** 2 + STEP_WORK)
"""No second process below this much modelled work (about one second of flow at d = 4)."""
MIN_GROWTH_BITS = 1.0


@dataclass(frozen=True)
class Segment:
    """One parsed stage-1 segment: its duration, the exponent of the division before it, its Taylor
    order and per-step tolerance (bits)."""

    duration: Fraction
    rescale: int
    order: int
    tol_bits: int


def _growth_bits(segs: list[Segment], remaining: Fraction | None) -> list[float]:
    """log2 of how much ‖Σ‖ grows over each segment, from the durations: near a blow-up T* − t_k ≈
    duration_k, so segment k covers log2(duration_k/duration_{k+1}) bits; the last one
    log2(duration/remaining), remaining ≈ T* − t1 (a hint from the claim), else one bit."""
    out = []
    for k, seg in enumerate(segs):
        nxt = segs[k + 1].duration if k + 1 < len(segs) else remaining
        g = _log2(seg.duration / nxt) if nxt is not None and nxt > 0 else MIN_GROWTH_BITS
        out.append(max(MIN_GROWTH_BITS, g))
    return out


def _log2(x: Fraction) -> float:
    """log2 of a positive rational of any size (a witness's durations may exceed the float range)."""
    return math.log2(x.numerator) - math.log2(x.denominator)


def cut_point(segs: list[Segment], remaining: Fraction | None = None) -> tuple[int, Fraction] | None:
    """(s, τ): cut segment s at τ ∈ (0, duration_s) so that the chain up to the cut and B's march plus
    the rest take about the same time (cost ∝ growth bits × (order² + STEP_WORK)); None when the
    modelled work is below MIN_WORK.  A heuristic on the witness only (module docstring)."""
    g = _growth_bits(segs, remaining)
    w = [gk * (seg.order ** 2 + STEP_WORK) for gk, seg in zip(g, segs)]
    total = sum(w)
    if total < MIN_WORK:
        return None
    target, acc = total / (2 - MARCH_COST), 0.0
    for s, (ws, seg) in enumerate(zip(w, segs)):
        if acc + ws >= target:
            x = (target - acc) / ws
            # T* − t falls geometrically through a segment: the fraction x of its growth is reached at
            # duration·(1 − 2^(−g·x)); rounded down to a short dyadic multiple of the duration
            bits = min(math.ceil(g[s] * x) + 12, 60)      # 1 − 2^(−g·x) rounds to 1 beyond: no cut
            q = Fraction(math.floor((1 - 2.0 ** (-g[s] * x)) * 2 ** bits), 2 ** bits)
            if 0 < q < 1:
                return s, seg.duration * q
            return None
        acc += ws
    return None


def march(S: arb_mat, A, B, V, duration: Fraction, order: int, tol_bits: int, max_steps: int) -> arb_mat | None:
    """The midpoint Taylor series of Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ from mid(S) over `duration`, at the
    ambient precision, with the flow's step rule at 2^-tol_bits per step: a point near Σ(duration), no
    enclosure (None after max_steps steps)."""
    d = S.nrows()
    F, zero = _Field(A, B, V, [Fraction(0)] * d), arb_mat(d, 1)
    S, t, tol = S.mid(), Fraction(0), 2.0 ** -tol_bits
    for _ in range(max_steps):
        if t >= duration:
            return S
        ms, Ss = F.coefficients(zero, S, order)
        h = _centre_step(_step_log2_guesses(ms, Ss, order, tol * max(1.0, _max_abs(S))), duration - t)
        if h <= 0:
            h = duration - t
        S, t = _horner(Ss, balls.arb_of(h)).mid(), t + h
    return S if t >= duration else None


def _pieces(segs: list[Segment], cut) -> list[tuple[int, Fraction, Fraction]]:
    """The chain's flows (k, a, b): segment k from a to b; the cut segment in two pieces."""
    out = []
    for k, seg in enumerate(segs):
        if cut is not None and cut[0] == k:
            out += [(k, Fraction(0), cut[1]), (k, cut[1], seg.duration)]
        else:
            out.append((k, Fraction(0), seg.duration))
    return out


def _run(S, pped, A, B, V, segs, pieces, i0, i1, prec, jac_order, box, width_limit, max_steps, note, done=None, base=0,
         keep=False, tick=None):
    """The validated chain over pieces[i0:i1] from S (or the parallelepiped pped: a piece that
    continues a segment), S already divided by the rescales before pieces[i0]: (S, its
    parallelepiped, E, steps) at the end, E the sum of the rescales so far; WitnessError on failure.
    note(text): progress notes; done(k, steps): segment k is finished, after `base` + steps steps in all.
    keep: a segment's rescale divides the parallelepiped (x̂, C and the radii by 2^e: the same set,
    divided exactly) instead of restarting from its box; the second process's split start set
    (`_lohner` point 7) then survives to t1.  tick(): called after every step (it may raise to stop the chain)."""
    k0, a0, _ = pieces[i0]
    E = sum(seg.rescale for seg in segs[:k0]) + (segs[k0].rescale if a0 > 0 else 0)
    steps = 0
    for k, a, b in pieces[i0:i1]:
        seg = segs[k]
        if a == 0:
            E += seg.rescale
            with ctx.workprec(prec):
                f = balls.arb_of(Fraction(1, 2 ** seg.rescale))          # a power of two: exact
                if keep and pped is not None:
                    pped = (pped[0] * f, pped[1]) + tuple(v * f for v in pped[2:])
                else:
                    S, pped = S * f, None
        r = enclose_lohner(None, S, A, B, exact.scale(Fraction(2) ** E, V), None, b - a, order=seg.order,
                           jac_order=jac_order, prec=prec, tol_bits=seg.tol_bits, max_steps=max_steps - steps,
                           covariance_only=True, high_order_box=box == "high_order",
                           defect_remainder=box == "defect", width_limit=width_limit, start=pped,
                           on_step=None if note is None and tick is None else
                           lambda _, n, k=k, so_far=base + steps: _on_step(note, tick, k, len(segs), so_far + n))
        if not r.ok:
            raise WitnessError(f"segment {k}: the validated flow failed ({r.reason})")
        steps += r.steps
        S, pped = r.cov, r.parallelepiped
        if done is not None and b == seg.duration:
            done(k, base + steps)
    return S, pped, E, steps


def _on_step(note, tick, k: int, segments: int, steps: int) -> None:
    if note is not None:
        note(f"seg {k + 1}/{segments} {steps} steps")
    if tick is not None:
        tick()


def _q(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _matrix_text(M) -> list[list[str]]:
    return [[_q(Fraction(x)) for x in row] for row in M]


def _exact(x) -> Fraction:
    """A rational written by `_q` ("p/q" or an integer), read by the witnesses' strict reader
    (`check_equilibrium.parse_fraction`): Fraction alone would also take exponent forms whose cost has
    no bound ("1e2000000") and floats; anything else raises ValueError."""
    if not isinstance(x, str):
        raise ValueError("not a p/q rational")
    return parse_fraction(x, "a second-process number", MAX_NUMBER_CHARS)


def _matrix_of(rows) -> tuple:
    return tuple(tuple(_exact(x) for x in row) for row in rows)


def _ball_text(M: arb_mat) -> list[list[str]]:
    return [[_q(balls.fraction_of_mid(e)), _q(balls.fraction_of_mid(e.rad()))] for e in M.entries()]


def _ball_matrix(rows: int, cols: int, pairs) -> arb_mat:
    """Balls from exact (midpoint, radius) pairs; ball addition, so each contains [m − r, m + r] even
    where a conversion rounds.  A malformed entry raises ValueError."""
    if not isinstance(pairs, list) or len(pairs) != rows * cols:
        raise ValueError("a matrix of the wrong size")
    out = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError("a ball is a (midpoint, radius) pair")
        m, r = _exact(pair[0]), _exact(pair[1])
        if r < 0:
            raise ValueError("a negative radius")
        out.append(balls.arb_of(m) + balls.arb_of(r) * arb(0, 1))
    return arb_mat(rows, cols, out)


def _box_mode(box) -> str:
    """The flow's a-priori mode, one of BOXES."""
    if box not in BOXES:
        raise ValueError(f"unknown flow box {box!r}")
    return box


def _second_half(job: dict) -> dict:
    """B's work: the march to the cut, the box Z there (half-width `half` in every coordinate Σ_ij,
    i ≤ j) and the validated chain from Z to t1, with Z kept as the split start set of `_lohner`
    point 7: the answer is the final (x̂, C, r0, r), from which the parent takes the set for the part
    of Z that its own enclosure fills.  job and answer are JSON (exact rationals as "p/q" strings)."""
    A, B, V, cov = (_matrix_of(job[k]) for k in ("A", "B", "V", "cov"))
    segs = [Segment(_exact(x), int(e), int(o), int(t)) for x, e, o, t in job["segs"]]
    s, tau = int(job["cut"][0]), _exact(job["cut"][1])
    prec, max_steps, d = int(job["prec"]), int(job["max_steps"]), len(cov)
    n = d * (d + 1) // 2
    slack = min(int(job["slack"]), segs[s].tol_bits // 3)
    with ctx.workprec(prec):
        S, E = balls.arb_matrix(cov), 0
        for k in range(s + 1):
            seg = segs[k]
            E += seg.rescale
            # the box is 2^slack times the segment tolerance, so the march may carry that many bits
            # fewer (MARCH_MARGIN below the box), at the flow's rule order ≈ tol/3
            tol_m = seg.tol_bits - slack + MARCH_MARGIN
            S = march(S * balls.arb_of(Fraction(1, 2 ** seg.rescale)), A, B, exact.scale(Fraction(2) ** E, V),
                      seg.duration if k < s else tau, max(8, min(seg.order, tol_m // 3)), tol_m, max_steps)
            if S is None:
                return {"ok": False, "reason": "the march did not reach the cut within the step budget"}
        centre = [[balls.fraction_of_mid(S[i, j]) for j in range(d)] for i in range(d)]
        half = Fraction(2) ** (slack - segs[s].tol_bits) * max(Fraction(1), max(abs(x) for r in centre for x in r))
        xc = _Coords(d, mean=False).to_vector(arb_mat(d, 1), balls.arb_matrix(centre))
        C = arb_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
        start = (xc, C, arb_mat(n, 1, [balls.arb_of(half) * arb(0, 1)] * n), arb_mat(n, 1))
    pieces = _pieces(segs, (s, tau))
    try:
        _, pped, _, steps = _run(None, start, A, B, V, segs, pieces, s + 1, len(pieces), prec, int(job["jac_order"]),
                                 _box_mode(job["box"]), B_WIDTH_LIMIT, max_steps, None, keep=True)
    except WitnessError as e:
        return {"ok": False, "reason": str(e)}
    xc, C, r0, r = pped
    return {"ok": True, "module": _MODULE, "centre": _matrix_text(centre), "half": _q(half), "steps": steps,
            "xc": _ball_text(xc), "C": _ball_text(C), "r0": _ball_text(r0), "r": _ball_text(r)}


def _main() -> None:
    """B's entry point (a fresh interpreter: `python -c`, so no caller's __main__ is re-run): the job on
    stdin, the answer on stdout, both JSON."""
    out = sys.stdout
    sys.stdout = sys.stderr            # nothing else may reach the answer's pipe
    try:
        answer = _second_half(json.loads(sys.stdin.read()))
    except Exception as e:             # noqa: BLE001 - any failure only means "no speculative result"
        answer = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
    out.write(json.dumps(answer))
    out.flush()


_MODULE = os.path.realpath(__file__)
"""This file: B names the file it ran, and an answer from any other is no answer."""


class _Speculation:
    """The second process: a fresh interpreter running `_main` (no flint state or caller code is shared).
    Any failure to start it, feed it or hear from it only means "no speculative result".

    B is part of the trusted core: the parent re-derives nothing of B's flow, it only proves that B's
    start box contains its own enclosure.  So B must run this checker's code: -P keeps the current
    directory off its import path (`python -c` would put it first, so a `riccati_verify` or `flint`
    there would be imported instead), the path is this process's own, and B's answer must name this
    file (`_MODULE`)."""

    def __init__(self, job: dict):
        # one core each (this process and the chain); the same import path as this process
        # ("" on this process's path is the current directory: written out, since -P drops it for B)
        path = os.pathsep.join(os.path.abspath(p) if p else os.getcwd() for p in sys.path)
        env = dict(os.environ, **{ENV: "1", "PYTHONPATH": path})
        self.proc = subprocess.Popen([sys.executable, "-P", "-c",
                                      "from riccati_verify.checker._stage1 import _main; _main()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env)
        try:
            self.proc.stdin.write(json.dumps(job).encode())
            self.proc.stdin.close()
        except OSError:             # it died at once: result() reports no answer
            pass
        self.proc.stdin = None      # written and closed: communicate() only reads the answer

    @classmethod
    def start(cls, job: dict):
        """The process, or None when it cannot be started (no interpreter to run, no processes)."""
        try:
            return cls(job)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None

    def poll(self) -> dict | None:
        """B's answer (as `result`) once B has exited or begun to write it (B writes its one answer at its
        end), else None and B goes on.  A short `communicate` timeout cannot poll: it checks the clock
        before reading what is ready, so it would never read."""
        if self.proc.poll() is None:
            try:
                ready = select.select([self.proc.stdout], [], [], 0)[0]
            except (OSError, ValueError):       # no select on pipes here: wait for B's exit instead
                ready = []
            if not ready:
                return None
        return self.result(timeout=ANSWER_SECONDS)

    def result(self, timeout: float | None = None) -> dict:
        """B's answer; after `timeout` seconds without one, B is stopped and there is none."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return {"ok": False, "reason": f"no answer within {timeout:.0f} s"}
        except (OSError, ValueError):
            out = None
        return self._answer(out)

    def _answer(self, out: bytes | None) -> dict:
        try:
            if out is None or len(out) > MAX_ANSWER_BYTES:
                raise ValueError("no answer, or one too long")
            answer = json.loads(out.decode() or "{}")
        except (OSError, ValueError, RecursionError):
            answer = {}
        if isinstance(answer, dict) and answer.get("ok") is True:
            if answer.get("module") != _MODULE:
                return {"ok": False, "reason": "the second process ran another copy of the checker"}
            return answer
        why = answer.get("reason") if isinstance(answer, dict) else None
        return {"ok": False, "reason": why if isinstance(why, str) else "no answer"}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None and not f.closed:
                f.close()


def _accepted(X: arb_mat, answer: dict, prec: int = 256) -> arb_mat | None:
    """B's enclosure at t1 when its start box Z is proved to contain X (this process's enclosure at the
    cut), else None.  With s ≥ max |X_ij − centre_ij| / half over i ≤ j (s ≤ 1: X ⊆ Z), every
    solution from X lies in x̂ + C(s·r0 + r) at t1 (`_lohner` point 7).  The answer's rationals are
    parsed strictly: a malformed answer is no answer.  Every ball below encloses its exact value at any
    precision; `prec` (the flow's) keeps them as tight as the rationals they are read from."""
    with ctx.workprec(prec):
        try:
            return _accepted_at(X, answer)
        except (KeyError, TypeError, ValueError, ArithmeticError, RecursionError):
            return None


def _accepted_at(X: arb_mat, answer: dict) -> arb_mat | None:
    d = X.nrows()
    n = d * (d + 1) // 2
    centre, half = _matrix_of(answer["centre"]), _exact(answer["half"])
    if len(centre) != d or any(len(r) != d for r in centre) or not half > 0:
        return None
    xc = _ball_matrix(n, 1, answer["xc"])
    C = _ball_matrix(n, n, answer["C"])
    r0 = _ball_matrix(n, 1, answer["r0"])
    r = _ball_matrix(n, 1, answer["r"])
    if not all(e.mid() == 0 for e in r0.entries()):
        return None                  # point 7's scaling needs a start set centred at 0
    co = _Coords(d, mean=False)
    # s ≥ every |X_ij − centre_ij|/half: the bounds are exact points, compared as rationals (a float
    # key would misorder ties within 2^-53 and every bound past 2^1024)
    s = max(balls.fraction_of_mid(abs(X[i, j] - balls.arb_of(centre[i][j])).upper()) for i, j in co.sidx) / half
    if not s <= 1:
        return None
    x = xc + C * (r0 * balls.arb_of(s).upper() + r)
    return co.to_state(x)[1]


class _Overtaken(Exception):
    """B's accepted answer arrived while the chain ran its own second half."""


def candidates(A, B, V, cov, segs: list[Segment], prec: int, jac_order: int, box: str, width_limit,
               max_steps: int, remaining: Fraction | None = None, note=None, parallel: bool | None = None,
               before=None, done=None):
    """Yield enclosures (S(t1)/2^E, E) of stage 1: B's first when it ran and its box Z is proved to
    contain the chain's enclosure at the cut, then the chain's own (module docstring).  The chain's
    failure raises WitnessError.  parallel: None decides by `thread_count()` ≥ 2 and n = d(d+1)/2 below
    `core.threads.THREAD_MIN_N`: from there on the chain's own products run on flint's threads, and on
    general_instance(8, 0, 1) at 15 digits B's box grew past its width limit in the last segment (a
    flow from a whole box wraps at d = 8) after 54 s, while the chain reached the cut in 31 s.  before(): the
    caller's cheaper checks, run here before the chain (while B already works; B is stopped when
    they raise).  note, done: progress callbacks (`_run`)."""
    cut = cut_point(segs, remaining)
    if parallel is None:
        d = len(cov)
        parallel = thread_count() >= 2 and d * (d + 1) // 2 < THREAD_MIN_N
    spec = None
    if cut is not None and parallel:
        try:
            job = {"A": _matrix_text(A), "B": _matrix_text(B), "V": _matrix_text(V),
                   "cov": _matrix_text(cov), "cut": [cut[0], _q(cut[1])], "prec": prec,
                   "segs": [[_q(g.duration), g.rescale, g.order, g.tol_bits] for g in segs],
                   "jac_order": jac_order, "box": box, "max_steps": max_steps, "slack": SLACK_BITS}
        except ValueError:
            # an integer past the interpreter's int-to-text limit (sys.get_int_max_str_digits(), 4300
            # digits by default: a dense frame's exact controls reach it at d = 4): no second process,
            # so two cores still give the chain's verdict
            job = None
        spec = _Speculation.start(job) if job is not None else None
    pieces = _pieces(segs, cut)
    i_cut = cut[0] + 1 if cut is not None else len(pieces)
    try:
        if before is not None:
            before()
        with ctx.workprec(prec):
            S = balls.arb_matrix(cov)
        X, pped, E, steps = _run(S, None, A, B, V, segs, pieces, 0, i_cut, prec, jac_order, box, width_limit,
                                 max_steps, note, done)
        E_all = sum(seg.rescale for seg in segs)       # E from the witness, not from B

        def taken(answer: dict):
            # B's flow within the step budget the chain would have had (the budget means the same on one
            # core and on two), and its start box proved to contain the chain's enclosure at the cut
            b_steps = answer.get("steps")
            within = isinstance(b_steps, int) and not isinstance(b_steps, bool) and 0 <= b_steps <= max_steps - steps
            return _accepted(X, answer, prec) if answer["ok"] and within else None

        def second_half(tick=None):
            return _run(X, pped, A, B, V, segs, pieces, i_cut, len(pieces), prec, jac_order, box, width_limit,
                        max_steps - steps, note, done, steps, tick=tick)

        if spec is not None and i_cut < len(pieces):
            # B may still be at work: the chain goes on with its own second half, and B's answer, the
            # moment it arrives and is accepted, stops it (work only: either enclosure is a proof).
            # Waiting for B instead had cost more than B saved wherever B's flow from a box is slower
            # than the chain's (general_instance(4, 0, 5): 6.9 s of waiting, 10.5 s on two cores
            # against 5.3 s on one)
            heard = []

            def tick():
                if not heard:
                    answer = spec.poll()
                    if answer is not None:
                        heard.append(taken(answer))
                        if heard[0] is not None:
                            raise _Overtaken
            try:
                tick()
                X2, _, E, _ = second_half(tick)
            except _Overtaken:
                yield heard[0], E_all
                # the caller went on (its test refused B's enclosure): the chain's second half after all
                X2, _, E, _ = second_half()
            yield X2, E
            return
        if i_cut < len(pieces):
            X, _, E, _ = second_half()
        yield X, E
    finally:
        if spec is not None:
            spec.close()
