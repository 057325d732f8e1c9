"""The `lamina` command's launcher: a Ctrl-C while lamina is still being imported ends in
one line and the shell's exit status, not a traceback from inside an import."""

from __future__ import annotations

import importlib

import lamina_cli


def test_a_ctrl_c_during_the_imports_is_one_line(monkeypatch, capsys) -> None:
    def interrupted(name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert lamina_cli.main() == 130
    assert capsys.readouterr().err == "lamina: interrupted while starting\n"


def test_the_launcher_runs_the_command(monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.argv", ["lamina", "env"])
    monkeypatch.setenv("LAMINA_CLI_RESTARTED", "1")  # no re-exec inside the test process
    try:
        lamina_cli.main()
    except SystemExit as e:
        assert e.code == 0
    assert "lamina" in capsys.readouterr().out
