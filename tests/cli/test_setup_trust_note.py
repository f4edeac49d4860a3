"""``reasonix setup --local`` in a folder not yet trusted says what that means (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.cli.main import main


@pytest.mark.usefixtures("untrusted")
def test_a_local_setup_in_an_untrusted_folder_says_to_trust_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["setup", "--local", "--preset", "ollama", "--model", "qwen2.5-coder:7b", "--no-test"]
    assert main(argv) == 0
    assert "reasonix trust" in capsys.readouterr().err
    assert main(["trust"]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert "reasonix trust" not in capsys.readouterr().err
