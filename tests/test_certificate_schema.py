"""The published JSON schema of the certificates (riccati_verify/certify/schemas/
certificate.schema.json): one branch per kind the checker knows, with the keys that kind's
checker declares, and every certificate the producers write validates against it (checked by
jsonschema; the trusted checker keeps its own parser and does not read the schema)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the [test] extra) validates against the schema")

from riccati_verify.certify.certificate import certificate_schema  # noqa: E402
from riccati_verify.checker.verify import key_sets, known_kinds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "tests" / "data" / "certificates").glob("*.json"))


@pytest.fixture(scope="module")
def schema():
    s = certificate_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.fixture(scope="module")
def validator(schema):
    return jsonschema.Draft202012Validator(schema)


def _branches(schema) -> dict:
    """kind -> the properties of its branch (the `then` of an if/then on claim.kind)."""
    out = {}
    for rule in schema["allOf"]:
        if "if" in rule:
            kind = rule["if"]["properties"]["claim"]["properties"]["kind"]["const"]
            assert rule["then"]["properties"]["claim"]["properties"]["kind"]["const"] == kind
            out[kind] = rule["then"]["properties"]
    assert sorted(out) == sorted(schema["properties"]["claim"]["properties"]["kind"]["enum"])
    return out


def test_one_branch_per_kind_with_the_checkers_keys(schema):
    """A new kind, or a key added to a checker, fails here until the schema describes it (the
    schema may name a key a checker dropped: it then accepts what the stricter checker refuses)."""
    branches = _branches(schema)
    assert set(known_kinds()) <= set(branches)
    for kind in known_kinds():
        props = branches[kind]
        claim_keys, witness_keys = key_sets(kind)
        assert set(props["claim"]["properties"]) >= claim_keys, kind
        assert set(props["witness"]["properties"]) >= witness_keys, kind
        assert props["claim"]["additionalProperties"] is False and props["witness"]["additionalProperties"] is False


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_certificate_validates(validator, path):
    """tests/data/certificates: one certificate of every kind, written by the command line
    (tests/data/make_certificates.py)."""
    doc = json.loads(path.read_text())
    errors = [e.message[:200] for e in validator.iter_errors(doc)]
    assert errors == [], errors


def test_the_trajectory_flow_branch_has_the_checkers_flow_keys(schema, validator):
    """The schema's trajectory_convergence witness.flow names exactly the keys the checker reads
    (FLOW_KEYS), so a certificate of the d = 8 deep flow (metric, local frame) validates, and a key the
    checker refuses is refused here too."""
    from riccati_verify.certify.roa import DEEP_FLOW
    from riccati_verify.checker.check_trajectory_convergence import FLOW_KEYS

    flow = _branches(schema)["trajectory_convergence"]["witness"]["properties"]["flow"]
    assert set(flow["properties"]) == FLOW_KEYS and flow["additionalProperties"] is False
    doc = json.loads((ROOT / "tests" / "data" / "certificates" / "trajectory_convergence.json").read_text())
    doc["witness"]["flow"] = dict(DEEP_FLOW, metric_from=0)
    assert [e.message[:200] for e in validator.iter_errors(doc)] == []
    for bad in ({"local_frame": "true"}, {"metric": "euclid"}, {"local_frame_from": 33}, {"max_steps": 10}):
        d = copy.deepcopy(doc)
        d["witness"]["flow"].update(bad)
        assert not validator.is_valid(d), bad


def test_the_shipped_certificates_cover_every_kind():
    assert set(known_kinds()) <= {json.loads(p.read_text())["claim"]["kind"] for p in SHIPPED}


def test_fresh_certificates_validate(validator, tmp_path):
    """Produced now, by the library and by the command line (with a float input, so that the
    optional input record is present)."""
    from riccati_verify import Gaussian, Params, blowup_time
    from riccati_verify.app.cli import main

    res = blowup_time(Params.from_arrays(A=[[1]], B=[[1]], V=[[1]]), Gaussian.from_arrays(mean=[0], cov=[[1]]),
                      digits=20)
    validator.validate(res.certificate)
    p, c = tmp_path / "p.json", tmp_path / "c.json"
    p.write_text(json.dumps({"A": [[1]], "B": [[0.5]], "V": 1, "mean": [0], "cov": [[1]]}))
    assert main(["blowup", str(p), "--digits", "15", "--cert", str(c), "--json"]) == 0
    doc = json.loads(c.read_text())
    assert doc["input"]["exact"] is False
    validator.validate(doc)


def _tampered():
    base = json.loads((ROOT / "tests" / "data" / "certificates" / "lyapunov_stability.json").read_text())

    def edit(f):
        d = copy.deepcopy(base)
        f(d)
        return d

    return {
        "float in the witness": edit(lambda d: d["witness"].__setitem__("mu", 0.5)),
        "decimal in a witness matrix": edit(lambda d: d["witness"]["X"][0].__setitem__(0, "0.5")),
        "version as a string": edit(lambda d: d.__setitem__("version", "1")),
        "version 2": edit(lambda d: d.__setitem__("version", 2)),
        "another format": edit(lambda d: d.__setitem__("format", "something-else")),
        "unknown envelope key": edit(lambda d: d.__setitem__("note", "x")),
        "unknown claim key": edit(lambda d: d["claim"].__setitem__("extra", True)),
        "unknown witness key": edit(lambda d: d["witness"].__setitem__("extra", "1")),
        "missing witness key": edit(lambda d: d["witness"].pop("X")),
        "missing claim key": edit(lambda d: d["claim"].pop("mean_stable")),
        "enum value": edit(lambda d: d["claim"].__setitem__("equilibrium", "positive")),
        "unknown kind": edit(lambda d: d["claim"].__setitem__("kind", "no_such_kind")),
        "exact but float entries named": edit(lambda d: d.__setitem__("input", {"exact": True, "float_entries": ["A[0][0]"]})),
        "not exact, none named": edit(lambda d: d.__setitem__("input", {"exact": False, "float_entries": []})),
        "missing method": edit(lambda d: d.pop("method")),
    }


@pytest.mark.parametrize("what", sorted(_tampered()))
def test_the_schema_rejects(validator, what):
    assert not validator.is_valid(_tampered()[what]), what


def test_errors_name_the_kinds_own_fault(validator):
    """The kind selects its branch, so the error is the fault itself, not 'valid under none'."""
    doc = _tampered()["unknown witness key"]
    assert [e.message for e in validator.iter_errors(doc)] == ["Additional properties are not allowed ('extra' was unexpected)"]


def test_a_good_input_record_is_accepted(validator):
    doc = json.loads((ROOT / "tests" / "data" / "certificates" / "lyapunov_stability.json").read_text())
    doc["input"] = {"exact": False, "float_entries": ["B[0][0]"]}
    assert validator.is_valid(doc)


@pytest.mark.slow
def test_regenerated_certificates_validate(validator, tmp_path):
    """The producers' current output, not the shipped copies: tests/data/make_certificates.py run
    into a temporary folder (every kind), each certificate validated (a few minutes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_certificates", ROOT / "tests" / "data" / "make_certificates.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # the output folder as main_'s argument: its default was bound when the module was defined, so
    # patching mod.OUT (as this test did until session 20) let it rewrite the committed corpus
    shipped = {p.name: p.read_bytes() for p in (ROOT / "tests" / "data" / "certificates").glob("*.json")}
    assert mod.main_(tmp_path) == 0
    assert {p.name: p.read_bytes() for p in (ROOT / "tests" / "data" / "certificates").glob("*.json")} == shipped
    made = sorted(tmp_path.glob("*.json"))
    assert set(known_kinds()) <= {json.loads(p.read_text())["claim"]["kind"] for p in made}
    for p in made:
        errors = [e.message[:200] for e in validator.iter_errors(json.loads(p.read_text()))]
        assert errors == [], (p.name, errors)
