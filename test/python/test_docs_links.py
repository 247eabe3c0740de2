"""Relative links in README.md and docs/ resolve inside the repository: a
clone alone has no ../shared."""

import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCUMENTS = ["README.md"] + [os.path.join("docs", f) for f in sorted(os.listdir(
    os.path.join(ROOT, "docs"))) if f.endswith(".md")]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_relative_links_resolve_inside_the_repository(document):
    text = open(os.path.join(ROOT, document)).read()
    base = os.path.dirname(os.path.join(ROOT, document))
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path = os.path.normpath(os.path.join(base, target))
        assert path.startswith(ROOT + os.sep) and os.path.exists(path), \
            f"{document} links to {target}, which is not in the repository"
