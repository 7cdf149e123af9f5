"""fn.graph.to_html: the graph explorer page of a tg.function's graph
(the page itself is tested in a browser by tests/test_explorer.c and
tests/cli/explorer.sh)."""
import json
import re

import pytest

import tensorgraph as tg
import tensorgraph.nn as nn


def traced():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    @tg.function
    def f(x):
        return model(x).softmax(-1)

    f(tg.randn(5, 8))
    return f


def page_data(path):
    text = path.read_text()
    found = re.search(r'<script type="application/json" id="tg-data">(.*?)</script>', text, re.S)
    assert found, "no data element"
    return json.loads(found.group(1))


def test_to_html_writes_every_level(tmp_path):
    f = traced()
    out = tmp_path / "mlp.html"
    assert f.graph.to_html(out, title="MLP", level=2) is None
    data = page_data(out)
    assert data["title"] == "MLP" and data["initial_level"] == 2
    assert [lv["level"] for lv in data["levels"]] == [0, 1, 2]
    assert len(data["levels"][0]["graph"]["nodes"]) == f.graph.num_nodes
    assert all("error" not in lv and lv["memory"]["naive"] > 0 for lv in data["levels"])
    classes = {n["name"]: n.get("cls") for n in data["levels"][0]["graph"]["nodes"]}
    assert classes["softmax"] == "fwd" and classes["relu_grad"] == "bwd"  # the backward built for grad
    ops = {n["op"] for n in data["levels"][2]["graph"]["nodes"]}
    assert "fused_epilogue" in ops  # linear + relu fused at level 2


def test_nodes_know_their_source_line(tmp_path):
    f = traced()
    f.graph.to_html(tmp_path / "mlp.html")
    nodes = page_data(tmp_path / "mlp.html")["levels"][0]["graph"]["nodes"]
    # the forward, traced (the backward, built later outside the trace, has none)
    ops = [n for n in nodes if n["name"] in ("gemm", "relu", "gemm_1", "softmax")]
    assert len(ops) == 4
    # the innermost frame outside the package: the traced function's line
    line = [i for i, text in enumerate(open(__file__), 1) if "return model(x).softmax(-1)" in text][0]
    assert ops and all(n.get("loc") == f"{__file__}:{line}" for n in ops), [n.get("loc") for n in ops]
    # level 2 keeps it on the nodes it copies
    kept = [n for n in page_data(tmp_path / "mlp.html")["levels"][2]["graph"]["nodes"] if n["op"] == "softmax"]
    assert kept and kept[0].get("loc") == f"{__file__}:{line}"


def test_to_html_errors(tmp_path):
    f = traced()
    with pytest.raises(ValueError, match="level must be 0, 1 or 2"):
        f.graph.to_html(tmp_path / "x.html", level=3)
    with pytest.raises(OSError, match="nothere.json"):
        f.graph.to_html(tmp_path / "x.html", profile=tmp_path / "nothere.json")
    with pytest.raises(TypeError):
        f.graph.to_html(42)
    assert not (tmp_path / "x.html").exists()
