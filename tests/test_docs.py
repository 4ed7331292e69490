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


# ------------------------------------------------------------------------------ the docs build, stay inside, promise only what exists

def test_mkdocs_build_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` passes (broken links and anchors are errors: see `validation` in mkdocs.yml)."""
    import shutil
    import subprocess
    import sys

    mkdocs = Path(sys.executable).with_name("mkdocs")
    assert mkdocs.exists() or shutil.which("mkdocs"), "mkdocs is missing: pip install -e '.[docs]' (make setup does)"
    r = subprocess.run([str(mkdocs) if mkdocs.exists() else "mkdocs", "build", "--strict", "--site-dir",
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").exists()


# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([
    "/wo" + "rk/", r"\.\./sha" + "red", r"\bsha" + r"red/(contracts|protocol|design)\b",
    r"\bcontr" + r"acts/[\w-]+\.md", r"\b(for" + r"mal|sty" + r"le|hist" + r"ory)\.md\b", "/ro" + "ot/", r"/ho" + r"me/\w",
]))


def outside_references(text: str) -> list[str]:
    """Lines of ``text`` that refer to files outside the repository (absolute paths of a build machine, the
    project's sibling folders)."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def committed_text_files() -> list[Path]:
    import subprocess

    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    keep = (".py", ".md", ".yml", ".yaml", ".toml", ".cfg", ".txt", ".json", ".jsonl")
    return [ROOT / n for n in names if (n.endswith(keep) or n in ("Makefile", ".ci/run")) and (ROOT / n).is_file()]


def test_nothing_refers_to_files_outside_the_repository() -> None:
    found = []
    for path in committed_text_files():
        if path == Path(__file__).resolve():
            continue
        for line in outside_references(path.read_text(encoding="utf-8", errors="replace")):
            found.append(f"{path.relative_to(ROOT)}: {line[:160]}")
    assert found == []


def test_help_texts_stay_inside_the_repository() -> None:
    import click

    from groupspec.cli import cli

    def helps(cmd: click.Command, path: list[str]) -> list[tuple[str, str]]:
        ctx = click.Context(cmd, info_name=" ".join(path))
        out = [(" ".join(path), cmd.get_help(ctx))]
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                out += helps(sub, path + [name])
        return out

    found = [(where, line) for where, text in helps(cli, ["groupspec"]) for line in outside_references(text)]
    assert found == []


def test_the_outside_check_catches_what_it_is_for() -> None:
    for bad in ["see /wo" + "rk/shared/x.md", "[t](../../sha" + "red/contracts/trace-format.md)",
                "the contr" + "acts/trace-format.md event", "formal" + ".md §4.2", "/ho" + "me/alice/groupspec"]:
        assert outside_references(bad) == [bad], bad
    assert outside_references("docs/formats.md, coordinator.md §2.6, /tmp/x.jsonl") == []


COMMAND = re.compile(r"(?<![\w.-])groupspec((?: +[a-z][\w-]*){1,2})")


def promised_commands(text: str) -> set[tuple[str, ...]]:
    """`groupspec WORD [WORD]` in code (inline spans and fenced blocks) of a markdown text."""
    code = re.findall(r"```.*?```", text, re.S) + re.findall(r"`[^`\n]+`", re.sub(r"```.*?```", "", text, flags=re.S))
    out = set()
    for chunk in code:
        for m in COMMAND.finditer(chunk):
            before = chunk[max(0, m.start() - 7):m.start()]
            if before.rstrip().endswith(("from", "import", "install", "-p")):
                continue
            out.add(tuple(m.group(1).split()))
    return out


def missing_commands(promised: set[tuple[str, ...]]) -> list[str]:
    """The promised command lines whose sub-command is not in the live click tree."""
    import click

    from groupspec.cli import cli

    bad = []
    for words in sorted(promised):
        cmd: click.Command = cli
        for k, word in enumerate(words):
            if not isinstance(cmd, click.Group):
                break  # the rest are arguments
            sub = cmd.commands.get(word)
            if sub is None:
                bad.append("groupspec " + " ".join(words[:k + 1]))
                break
            cmd = sub
    return bad


def test_no_page_promises_a_command_that_does_not_exist() -> None:
    """Every `groupspec ...` in the docs' code names a command of the live click tree (so commands that land
    later become allowed by themselves, and a page cannot run ahead of them)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the user's pages
    found = {}
    for page in pages:
        for words in promised_commands(page.read_text()):
            found.setdefault(words, page.name)
    assert found, "no command found in the docs: the extraction is broken"
    missing = missing_commands(set(found))
    assert missing == []


def test_the_command_check_catches_a_promise() -> None:
    text = "Run `groupspec nosuch --x` or\n```\n$ groupspec assignor frobnicate y\n$ groupspec check --protocol eager\n```\n"
    promised = promised_commands(text)
    assert {("nosuch",), ("assignor", "frobnicate"), ("check",)} <= promised
    assert missing_commands(promised) == ["groupspec assignor frobnicate", "groupspec nosuch"]
    assert promised_commands("from groupspec import check_assignor; pip install groupspec") == set()


# ------------------------------------------------------------------------------ the home page's quick start is real

def quick_start(text: str) -> list[tuple[str, list[str]]]:
    """The ``$ groupspec ...`` commands of the home page's quick-start block, each with the output lines shown."""
    block = text.split("<!-- quick-start", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:].split("  #")[0].strip(), []))
        elif steps:
            steps[-1][1].append(line.rstrip())
    return [(cmd, shown) for cmd, shown in steps if cmd.startswith("groupspec ")]


def shown_matches(shown: list[str], out: list[str]) -> bool:
    """``shown`` is the output's first lines, or its first lines, a line ``…`` and its last lines."""
    out = [line.rstrip() for line in out]
    if "…" not in shown:
        return shown == out[:len(shown)]
    k = shown.index("…")
    head, tail = shown[:k], shown[k + 1:]
    return out[:len(head)] == head and (not tail or out[-len(tail):] == tail) and len(out) >= len(head) + len(tail)


def test_the_home_page_quick_start_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    import os
    import shlex
    import subprocess
    import sys

    steps = quick_start((ROOT / "docs" / "index.md").read_text())
    assert len(steps) >= 2 and all(shown for _, shown in steps), steps
    exe = str(Path(sys.executable).with_name("groupspec"))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    for cmd, shown in steps:
        r = subprocess.run([exe, *shlex.split(cmd)[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                           env=env)
        assert r.returncode == 0, (cmd, r.stderr)
        assert shown_matches(shown, r.stdout.splitlines()), (cmd, shown, r.stdout)


def test_the_quick_start_comparison_catches_a_page_that_lies() -> None:
    out = ["a", "b", "c", "d"]
    assert shown_matches(["a", "b"], out) and shown_matches(["a", "…", "d"], out)
    assert not shown_matches(["a", "x"], out) and not shown_matches(["a", "…", "c"], out)
    assert not shown_matches(["a", "b", "c", "d", "e"], out)
    text = "<!-- quick-start -->\n```console\n$ pip install x\n$ groupspec a b  # note\nout1\n…\nlast\n```\n"
    assert quick_start(text) == [("groupspec a b", ["out1", "…", "last"])]
