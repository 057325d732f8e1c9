"""The docs site builds (`mkdocs build --strict`), and every code block of the docs and the
README does what it shows: Python blocks run (a page's blocks in order, in one process),
YAML blocks parse (and a whole job validates), shell blocks name commands and files that
exist."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.S | re.M)


def _blocks(page: Path, language: str) -> list[str]:
    found = []
    for indent, lang, body in BLOCK.findall(page.read_text()):
        if lang == language:
            found.append("\n".join(line[len(indent):] for line in body.splitlines()))
    return found


def _ids(pages: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in pages]


def test_the_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_docs_site_builds_strictly(tmp_path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "nn" / "index.html").exists()


PYTHON_PAGES = [p for p in PAGES if _blocks(p, "python")]
STARTS_RAY = {ROOT / "docs" / "guides" / "distributed.md"}  # a local cluster: seconds


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p in STARTS_RAY
                                  else p for p in PYTHON_PAGES], ids=_ids(PYTHON_PAGES))
def test_a_page_s_python_blocks_run(page, tmp_path) -> None:
    script = tmp_path / "page.py"
    script.write_text("\n\n".join(_blocks(page, "python")))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


YAML_PAGES = [p for p in PAGES if _blocks(p, "yaml")]


@pytest.mark.parametrize("page", YAML_PAGES, ids=_ids(YAML_PAGES))
def test_a_page_s_yaml_blocks_parse_and_jobs_validate(page) -> None:
    yaml = pytest.importorskip("yaml")
    from lamina.train.job_yaml import read_yaml
    from lamina.train.jobfile import validate

    for text in _blocks(page, "yaml"):
        value = read_yaml(text)
        assert value is not None and yaml.safe_load(text) is not None
        if isinstance(value, dict) and {"data", "model"} <= set(value):
            validate({"name": "docs", **value})


SHELL_PAGES = [p for p in PAGES if _blocks(p, "bash")]
COMMANDS = {"pip", "lamina", "python", "pytest", "tensorboard", "make", "ray", "env",
            "mkdocs"}


@pytest.mark.parametrize("page", SHELL_PAGES, ids=_ids(SHELL_PAGES))
def test_a_page_s_shell_blocks_name_real_commands_and_files(page) -> None:
    for text in _blocks(page, "bash"):
        for line in text.splitlines():
            line = line.split("#")[0].strip()
            if not line:
                continue
            for command in re.split(r"&&|\|\|", line):
                words = shlex.split(command)
                assert words[0] in COMMANDS, line
                for word in words[1:]:
                    if re.match(r"^(examples|benchmarks)/\S+\.(py|yaml)$", word):
                        assert (ROOT / word).exists(), f"{page.name}: {word} does not exist"


def test_ci_runs_the_readme_s_test_command() -> None:
    commands = [b.strip() for b in _blocks(ROOT / "README.md", "bash")
                if b.strip().startswith("pip install -e '.[test]'")]
    assert len(commands) == 1
    assert commands[0] in (ROOT / ".ci" / "run").read_text().splitlines()
