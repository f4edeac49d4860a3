"""notebook_edit: replace/insert/delete cells and keep nbformat 4 JSON valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.notebook_edit import TOOL

NOTEBOOK: dict[str, Any] = {
    "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n"]},
        {
            "cell_type": "code",
            "execution_count": 7,
            "id": "calc",
            "metadata": {"tags": ["keep"]},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]}],
            "source": ["print(1 + 1)"],
        },
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def nb_edit(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps({"path": "n.ipynb", **args}), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "n.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    return ToolContext(workspace=tmp_path)


def _load(tmp_path: Path) -> dict[str, Any]:
    nb: dict[str, Any] = json.loads((tmp_path / "n.ipynb").read_text())
    assert nb["nbformat"] == 4 and nb["metadata"] == NOTEBOOK["metadata"]
    for cell in nb["cells"]:
        assert {"cell_type", "metadata", "source"} <= cell.keys()
        assert isinstance(cell["source"], list)
        if cell["cell_type"] == "code":
            assert isinstance(cell["outputs"], list) and "execution_count" in cell
        else:
            assert "outputs" not in cell and "execution_count" not in cell
    return nb


def test_replace_code_cell_clears_outputs(ctx: ToolContext, tmp_path: Path) -> None:
    res = nb_edit(ctx, cell_number=1, new_source="x = 2\nprint(x)")
    assert not res.is_error, res.content
    cell = _load(tmp_path)["cells"][1]
    assert cell["source"] == ["x = 2\n", "print(x)"]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["metadata"] == {"tags": ["keep"]} and cell["id"] == "calc"
    assert "Replaced code cell 1" in res.content


def test_replace_by_id_and_retype(ctx: ToolContext, tmp_path: Path) -> None:
    assert not nb_edit(ctx, cell_id="calc", new_source="Text", cell_type="markdown").is_error
    cell = _load(tmp_path)["cells"][1]
    assert cell["cell_type"] == "markdown" and cell["source"] == ["Text"]


def test_insert_and_append(ctx: ToolContext, tmp_path: Path) -> None:
    assert not nb_edit(
        ctx, edit_mode="insert", cell_number=-1, cell_type="code", new_source="import os"
    ).is_error
    assert not nb_edit(ctx, edit_mode="insert", cell_type="markdown", new_source="end").is_error
    cells = _load(tmp_path)["cells"]
    assert [c["source"] for c in cells] == [["import os"], ["# Title\n"], ["print(1 + 1)"], ["end"]]
    assert cells[0]["outputs"] == [] and len(cells[0]["id"]) == 8


def test_delete(ctx: ToolContext, tmp_path: Path) -> None:
    res = nb_edit(ctx, edit_mode="delete", cell_id="intro")
    assert "Deleted markdown cell 0" in res.content and "1 cells total" in res.content
    assert [c["id"] for c in _load(tmp_path)["cells"]] == ["calc"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"cell_number": 5, "new_source": "x"}, "out of range"),
        ({"cell_id": "nope", "new_source": "x"}, "no cell with id"),
        ({"new_source": "x"}, "give cell_number or cell_id"),
        ({"edit_mode": "insert", "new_source": "x"}, "cell_type"),
        ({"cell_number": 0}, "new_source is required"),
        ({"edit_mode": "bogus"}, "must be one of"),
    ],
)
def test_errors_leave_file_alone(
    ctx: ToolContext, tmp_path: Path, args: dict[str, object], needle: str
) -> None:
    before = (tmp_path / "n.ipynb").read_text()
    res = nb_edit(ctx, **args)
    assert res.is_error and needle in res.content
    assert (tmp_path / "n.ipynb").read_text() == before


def test_not_a_notebook(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    (tmp_path / "n.ipynb").write_text("{not json")
    assert "not valid JSON" in nb_edit(ctx, cell_number=0, new_source="x").content
    (tmp_path / "n.ipynb").write_text('{"cells": 3}')
    assert "not a Jupyter notebook" in nb_edit(ctx, cell_number=0, new_source="x").content
