"""The docs hold together: every page in the mkdocs nav exists, and every CLI command is documented."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_nav_page_exists():
    nav = re.findall(r":\s*([\w\-/]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert nav, "mkdocs.yml has no nav"
    missing = [p for p in nav if not (ROOT / "docs" / p).exists()]
    assert missing == []


def test_every_docs_page_is_in_the_nav():
    nav = set(re.findall(r":\s*([\w\-/]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - nav == set()


def test_every_command_is_mentioned_in_the_docs():
    from groupspec.cli import cli

    text = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    for name in cli.commands:
        assert f"groupspec {name}" in text, f"`groupspec {name}` is not documented"


def test_readme_states_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert "make verify" in text and "make test" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
