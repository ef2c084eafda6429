"""Parameter files: exact parsing, validation (every error path), round trips."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from riccati_verify.core import io
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params

GOOD = {"A": [[0, 1], [-1, 0]], "B": [["1/2", 0], [0, 1]], "V": "0.1", "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def test_exact_strings_and_scalar_v():
    prob = io.problem_from_dict(GOOD)
    p = prob.params
    assert p.V == ((Fraction(1, 10), 0), (0, Fraction(1, 10)))
    assert p.B[0][0] == Fraction(1, 2)
    assert p.b == (0, 0)  # missing b means zero
    assert p.exact_input and prob.state.exact_input
    assert p.V_scalar == Fraction(1, 10)


def test_float_is_taken_exactly_but_marked():
    p = io.problem_from_dict({**GOOD, "V": 0.1}).params
    assert p.V[0][0] == Fraction(0.1) != Fraction(1, 10)
    assert not p.exact_input


def test_other_kernel_convention_transposes_B():
    doc = {**GOOD, "B": [[1, 2], [3, 4]], "kernel_convention": "exp(<x,By>)"}
    assert io.problem_from_dict(doc).params.B == ((1, 3), (2, 4))


BAD = [
    ({**GOOD, "A": [[0, 1], [-1]]}, "not square"),
    ({**GOOD, "A": [[0, 1, 2], [1, 2, 3]]}, "not square"),
    ({**GOOD, "B": [[1]]}, "'B' is 1x1 but 'A' is 2x2"),
    ({**GOOD, "b": [1]}, "'b' has length 1"),
    ({**GOOD, "V": "abc"}, "malformed rational"),
    ({**GOOD, "V": "1/0"}, "zero denominator"),
    ({**GOOD, "V": "1e999999"}, "exponent"),
    ({**GOOD, "V": "1" * 1001}, "longer than"),
    ({**GOOD, "V": True}, "expected a number"),
    ({**GOOD, "V": None}, "expected a number"),
    ({**GOOD, "cov": [[1, 2], [0, 1]]}, "not symmetric"),
    ({**GOOD, "cov": [[1, 2], [2, 1]]}, "not positive semidefinite"),
    ({**GOOD, "cov": [[1, 0], [0, "-1/1000000000000"]]}, "not positive semidefinite"),
    ({**GOOD, "mean": [0]}, "'cov' is 2x2 but 'mean' has length 1"),
    ({**GOOD, "extra": 1}, "unknown key"),
    ({k: v for k, v in GOOD.items() if k != "V"}, "missing key"),
    ({k: v for k, v in GOOD.items() if k != "cov"}, "'mean' and 'cov' must be given together"),
    ({**GOOD, "A": [[0] * 65] * 65}, "dimension bound"),
    ({**GOOD, "kernel_convention": "other"}, "kernel_convention"),
    ([1, 2], "JSON object"),
    ({}, "neither parameters"),
]


@pytest.mark.parametrize("doc,message", BAD, ids=[m for _, m in BAD])
def test_each_validation_error_is_clear(doc, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        io.problem_from_dict(doc)


@pytest.mark.parametrize("text,message", [
    ('{"A": [[NaN]], "B": [[1]], "V": 1}', "non-finite"),
    ('{"A": [[Infinity]], "B": [[1]], "V": 1}', "non-finite"),
    ('{"A": [[1e400]], "B": [[1]], "V": 1}', "not finite"),
    ("{not json", "not valid JSON"),
    ('{"A": [[' + "9" * 500 + ']], "B": [[1]], "V": 1}', "integer literal"),
    ("[" * 100000 + "]" * 100000, "nested too deeply|larger than"),
])
def test_hostile_json(text, message):
    with pytest.raises(InputError, match=message):
        io.load_problem_text(text)


def test_file_size_bound(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(" " * (io.MAX_FILE_BYTES + 1) + "{}")
    with pytest.raises(InputError, match="larger than"):
        io.load_problem(p)


def test_cli_errors_are_one_line_exit_2(cli, write_json):
    for doc, message in BAD[:12] + [("{not json", "not valid JSON")]:
        r = cli("flow", write_json(doc), "--time", "1")
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert message.split("(")[0].lower()[:12] in r.stderr.lower()


def test_cli_usage_errors(cli, write_json):
    p = write_json(GOOD)
    for args in (["flow", p], ["flow", p, "--time", "0"], ["flow", p, "--time", "nan"], ["derive", "--dim", "9"],
                 ["nosuchcommand"]):
        r = cli(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0, args


fractions = st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**9)


@st.composite
def problems(draw):
    d = draw(st.integers(1, 4))
    mat = st.lists(st.lists(fractions, min_size=d, max_size=d), min_size=d, max_size=d)
    F = draw(mat)
    cov = [[sum(F[i][k] * F[j][k] for k in range(d)) for j in range(d)] for i in range(d)]  # F Fᵀ ⪰ 0
    return Params.from_arrays(draw(mat), draw(mat), draw(mat), draw(st.lists(fractions, min_size=d, max_size=d))), \
        Gaussian.from_arrays(draw(st.lists(fractions, min_size=d, max_size=d)), cov)


@given(problems())
def test_exact_round_trip(pg):
    params, state = pg
    text = json.dumps(io.problem_to_dict(params, state, "rt"))
    back = io.load_problem_text(text)
    assert back.params == params and back.state == state and back.name == "rt"
    assert back.params.exact_input


@pytest.mark.parametrize("text", ["\u0663/\u0664", "\u0661", "1/\u0662", "0.\u0665"])
def test_numbers_are_ascii_digits_only(text):
    """Python's \\d and int() take any Unicode digit: '٣/٤' read as 3/4, so a certificate could show
    digits a reader does not see as the values checked (review s17).  Only ASCII digits are numbers."""
    from riccati_verify.core.errors import InputError
    from riccati_verify.core.io import parse_entry

    with pytest.raises(InputError):
        parse_entry(text, "x")
