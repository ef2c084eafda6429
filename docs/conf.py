"""Sphinx configuration of the riccati_verify documentation (build: see docs/index.md)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from riccati_verify.core.version import __version__  # noqa: E402

project = "riccati_verify"
author = "riccati_verify maintainers"
copyright = "riccati_verify maintainers"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "_kinds",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "notebooks/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 3

smartquotes = False   # "--json" stays two hyphens
html_theme = "furo"
html_title = f"riccati_verify {release}"

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
nitpicky = False


# ---------------------------------------------------------------------------------------------
# The package's docstrings and MATH.md are written as plain text with formulas (|x|, v[μ](x),
# indented equations), not as reStructuredText or links.  Two build-time renderings keep them
# as written instead of letting docutils read formulas as markup (the sources stay unchanged).

import re  # noqa: E402

# v[μ](x) is a formula, not a Markdown link: only URLs, anchors and files are link targets
_NOT_A_LINK = re.compile(r"(?<![\\!])\[([^\]\n]*)\]\((?!https?:|mailto:|#)(?![^)\s]*\.(?:md|html|py|json|ipynb)\b)"
                         r"([^)\s]*)\)")


def _formula_brackets(app, docname, source):
    source[0] = _NOT_A_LINK.sub(r"\\[\1\\](\2)", source[0])


_MARKUP_START = (":", ".. ", "- ", "* ", "+ ")


def _plain_docstring(app, what, name, obj, options, lines):
    """After napoleon: escape '|' (a substitution in reST) and set indented formula lines off
    by blank lines (reST wants a blank line around a block quote)."""
    out: list[str] = []
    prev_indent, prev_text, in_field = None, "", False
    for line in lines:
        text = line.strip()
        if not text:
            out.append(line)
            prev_indent, prev_text = None, ""
            continue
        indent = len(line) - len(line.lstrip())
        starts_markup = text.startswith(_MARKUP_START) or bool(re.match(r"\d+\.\s", text))
        if indent == 0 or starts_markup:
            in_field = text.startswith(":") or starts_markup and indent == 0
        if not text.startswith(".."):
            line = line.replace("|", r"\|")
        if prev_indent is not None and indent != prev_indent and not starts_markup and not in_field \
                and not prev_text.startswith(".."):
            out.append("")
        out.append(line)
        prev_indent, prev_text = indent, text
    lines[:] = out


def setup(app):
    app.connect("source-read", _formula_brackets)
    app.connect("autodoc-process-docstring", _plain_docstring, priority=600)
