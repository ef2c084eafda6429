"""Consistent defaults and readable messages: the N(0, I) default of blowup and flow, verify on
an incomplete certificate, no Python None in text output, readable tolerances, the digits asked."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest

SCALAR = {"A": [[1]], "B": [[1]], "V": 1}
N01 = {"mean": [0], "cov": [[1]]}


@pytest.mark.parametrize("args", [("blowup", "--digits", "12"), ("flow", "--time", "1/8")])
def test_missing_state_defaults_to_standard_gaussian_and_says_so(cli, write_json, args):
    name, *rest = args
    rest = [str(float(Fraction(x))) if "/" in x else x for x in rest]
    default = cli(name, write_json(SCALAR, "a.json"), *rest, "--json")
    given = cli(name, write_json(SCALAR | N01, "b.json"), *rest, "--json")
    assert default.returncode == given.returncode == 0, default.stderr + default.stdout
    d, g = json.loads(default.stdout), json.loads(given.stdout)
    assert d.pop("state") == "default N(0, I)" and g.pop("state") == "given"
    d.pop("seconds", None), g.pop("seconds", None)
    assert d == g                      # the same computation as on an explicit N(0, I)
    text = cli(name, write_json(SCALAR, "a.json"), *rest).stdout
    assert "N(0, I)" in text and "no 'mean' and 'cov'" in text


def test_verify_incomplete_certificate_is_bad_input_naming_what_is_missing(cli, write_json):
    r = cli("verify", write_json({"format": "riccati-verify-certificate", "version": 1, "claim": {"kind": "blowup"}}))
    assert r.returncode == 2 and r.stdout == ""
    for key in ("witness", "params", "method", "tool_version"):
        assert repr(key) in r.stderr
    assert "None" not in r.stderr


def test_check_text_has_no_python_none():
    from riccati_verify.app.commands.check import _text

    # what classify_regime returns for a general-V blow-up: no enclosure, an undecided witness
    r = SimpleNamespace(regime="blowup", certified=False, status="not certified", method="numerical", state="given",
                        hypotheses=[SimpleNamespace(holds=False, name="Re λ(A) > 0",
                                                    witness={"inertia_re_pos_neg": None, "method": "inertia"}),
                                    SimpleNamespace(holds=None, name="V = vI", witness={})],
                        equilibrium=None, seed_prediction=None, agrees_with_seed=None, note="",
                        blowup={"lower": None, "upper": None, "rigorous": False, "method": "Taylor estimate"})
    text = _text(r)
    assert "None" not in text
    assert "blow-up time: no enclosure computed (not rigorous; Taylor estimate)" in text
    r.blowup = {"estimate": "0.52", "rigorous": False, "method": "Domb-Sykes"}
    assert "about 0.52 (an estimate" in _text(r)


@pytest.mark.parametrize("exact", ["1/1000000000000000000000000000000", "-25/1000", "7/100", "120/10", "0/100"])
def test_decimal_powers_rewrites_exactly(exact):
    from riccati_verify.app.output import decimal_powers

    out = decimal_powers(f"within {exact} of")
    shown = out.split()[1]
    assert "/" not in shown and Fraction(shown) == Fraction(exact)   # Fraction parses 1e-30 exactly


def test_decimal_powers_leaves_other_rationals():
    from riccati_verify.app.output import decimal_powers

    assert decimal_powers("2/3 and a/10 and 1/10.5") == "2/3 and a/10 and 1/10.5"


def test_flow_prints_the_digits_asked(cli, write_json):
    # dm/dt = -m, dΣ/dt = -2Σ (B = V = 0): m(1) = e^-1, Σ(1) = e^-2, independent of the code
    r = cli("flow", write_json({"A": [[-1]], "B": [[0]], "V": 0, "mean": [1], "cov": [[1]]}), "--time", "1",
            "--digits", "30")
    assert r.returncode == 0, r.stderr
    mean = re.search(r"mean = \[([-0-9.e]+)\]", r.stdout).group(1)
    assert len(mean.replace("0.", "", 1)) >= 30       # 30 significant digits of 0.3678...
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(mean) - mpmath.exp(-1)) < mpmath.mpf(10) ** -30
    assert "not certified" in r.stdout


def test_every_option_has_help_and_the_program_a_description():
    import argparse

    from riccati_verify.app.cli import build_parser

    parser = build_parser(None)         # every subcommand, complete
    assert parser.description and "riccati-verify" not in parser.description.split(":")[0]
    missing = []
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(__import__("riccati_verify.app.commands", fromlist=["COMMANDS"]).COMMANDS)
    for name, p in [("riccati-verify", parser), *sub.choices.items()]:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                continue
            if not a.help or a.help == argparse.SUPPRESS or not a.help.strip():
                missing.append(f"{name} {'/'.join(a.option_strings) or a.dest}")
    assert not missing, missing


@pytest.mark.parametrize("lo, hi", [("0.346573590279972654708616060729018", "0.346573590279972654708616060729158"),
                                    ("1/3", "1/2"), ("2", "3"), ("0.99999999", "1.00000001"), ("-1/7", "-1/8")])
def test_enclosure_text_contains_the_enclosure_and_is_not_degenerate(lo, hi):
    from riccati_verify.app.output import enclosure_text

    a, b = re.fullmatch(r"\(([-0-9.]+), ([-0-9.]+)\]", enclosure_text(lo, hi)).groups()
    assert Fraction(a) <= Fraction(lo) < Fraction(hi) <= Fraction(b)     # rounded outward
    assert Fraction(a) < Fraction(b)
    assert Fraction(b) - Fraction(a) <= 100 * (Fraction(hi) - Fraction(lo))  # and still tight


@pytest.mark.parametrize("value", ["abc", "0", "100"])
def test_a_bad_thread_count_in_the_environment_is_bad_input_for_every_command(cli, write_json, monkeypatch, value):
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", value)
    # a d = 1 check never reaches a threaded product: the setting is refused at start anyway
    r = cli("check", write_json(SCALAR | N01, "a.json"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (f"riccati-verify check: error: RICCATI_VERIFY_THREADS must be an integer "
                                f"from 1 to 64, got {value!r}")
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "1")
    assert cli("check", write_json(SCALAR | N01, "a.json")).returncode in (0, 1)
