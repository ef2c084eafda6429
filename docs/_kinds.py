"""Sphinx extension: writes reference/kinds.md, one section per certificate kind the checker
knows (`riccati_verify.checker.verify.known_kinds`), so that a new kind is documented from its
checker's docstring and declared keys without editing these pages."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "kinds.md"
EXAMPLES = HERE.parent / "tests" / "data" / "certificates"


def render() -> str:
    from riccati_verify.checker.verify import known_kinds

    lines = ["# Certificate kinds", "",
             "One section per kind the independent checker knows, generated from the checker module: "
             "what a valid certificate of the kind proves (the module's docstring), the keys its claim "
             "and witness may have, and, where the repository ships one, an example.", ""]
    from riccati_verify.certify.certificate import certificate_schema

    branches = {r["if"]["properties"]["claim"]["properties"]["kind"]["const"]: r["then"]
                for r in certificate_schema()["allOf"] if "if" in r}
    for kind in known_kinds():
        mod = importlib.import_module(f"riccati_verify.checker.check_{kind}")
        lines += [f"## `{kind}`", "", "```{eval-rst}",
                  f".. automodule:: riccati_verify.checker.check_{kind}", "   :no-members:", "```", "",
                  f"- claim keys (besides `kind`): {', '.join(f'`{k}`' for k in sorted(mod.CLAIM_KEYS)) or 'none'}",
                  f"- witness keys: {', '.join(f'`{k}`' for k in sorted(mod.WITNESS_KEYS)) or 'none'}", ""]
        if kind in branches:
            lines += ["Its branch of the JSON schema (`certify/schemas/certificate.schema.json`; the envelope "
                      "and the `$defs` it refers to: {doc}`certificates`):", "",
                      "```json", json.dumps(branches[kind], indent=1, ensure_ascii=False), "```", ""]
        example = EXAMPLES / f"{kind}.json"
        if example.is_file():
            text = json.dumps(json.loads(example.read_text()), indent=1, ensure_ascii=False)
            if len(text) <= 6000:
                lines += [f"Example (`tests/data/certificates/{kind}.json`):", "", "```json", text, "```", ""]
            else:
                lines += [f"Example: `tests/data/certificates/{kind}.json` ({len(text):,} characters).", ""]
    return "\n".join(lines)


def _write(app) -> None:
    OUT.parent.mkdir(exist_ok=True)
    text = render()
    if not OUT.is_file() or OUT.read_text() != text:   # unchanged: keep the mtime, no rebuild
        OUT.write_text(text)


def setup(app):
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
