"""The interactive figures' builders (lnpower.interactive): their data,
the ends of the rho slider, the colour key, and HTML that fetches nothing."""

import json
import re
import sys

import numpy as np
import pytest
import torch

from lnpower import inference, tasks, theory
from lnpower import interactive as ia
from lnpower.claims import Result
from lnpower.config import INFERENCE_LOOPS, TrainConfig
from lnpower.history import History
from lnpower.plots import COLORS

L = 4


@pytest.fixture(scope="module")
def rho_inputs():
    samples, points = {}, {}
    for i, (name, task) in enumerate(
        (("Task 1", tasks.Task("sphere", 4, 8)),
         ("Task 2", tasks.Task("rotated", m=(1, 2, 5))))
    ):  # fmt: skip
        samples[name] = theory.draw(task, 400, i)
        points[name] = task.sample(12, tasks.generator(10 + i))
    return samples, points


@pytest.fixture(scope="module")
def rho(rho_inputs):
    return ia.rho_data(*rho_inputs, L, rhos=ia.rho_grid(per_decade=1))


def test_rho_grid_reaches_both_ends_and_infinity():
    g = ia.rho_grid()
    assert g[0] == -1e4 and g[-2] == 1e4 and np.isinf(g[-1])
    assert 0.0 in g and (np.diff(g[:-1]) > 0).all()
    assert (g < 0).sum() == (np.isfinite(g) & (g > 0)).sum()


def test_per_loop_factor_is_R_for_positive_rho_and_the_slowest_below():
    lam = np.array([[4.0, 2.0, 0.5], [3.0, 3.0, 1.0]])
    top = tasks.top_mask(lam)
    for rho in (0.0, 0.3, 7.0):
        want = inference.contraction(lam[:, 0], np.array([2.0, 1.0]), rho)
        assert np.allclose(ia.per_loop_factor(lam, top, rho), want)
    assert np.allclose(ia.per_loop_factor(lam, top, np.inf), [0.5, 1 / 3])
    # rho = -1: mu = (-3, -1, 0.5): the second eigenvalue's |mu| is the
    # largest below the top one; rho = -0.2: mu = (0.2, 0.6, 0.9), the
    # smallest eigenvalue's (R alone would say 3)
    assert ia.per_loop_factor(lam, top, -1.0)[0] == pytest.approx(1 / 3)
    assert ia.per_loop_factor(lam, top, -0.2)[0] == pytest.approx(4.5)


def test_rho_data_shapes(rho):
    n = len(ia.rho_grid(per_decade=1))
    assert len(rho["curves"]) == 2 * n and len(rho["loops"]) == 2 * n
    assert all(len(r["err"]) == INFERENCE_LOOPS for r in rho["loops"])
    assert {r["task"] for r in rho["limits"]} == {"Task 1", "Task 2"}
    for task in ("Task 1", "Task 2"):
        ks = [r["k"] for r in rho["curves"] if r["task"] == task]
        assert ks == list(range(n))


def test_rho_data_has_the_negative_and_the_infinite_end(rho, rho_inputs):
    samples, points = rho_inputs
    for task in ("Task 1", "Task 2"):
        rows = [r for r in rho["curves"] if r["task"] == task]
        assert rows[0]["rho"] == -1e4 and rows[0]["x"] == -1e4
        assert any(r["rho"] is not None and -1 < r["rho"] < 0 for r in rows)
        end = rows[-1]
        assert end["rho"] is None and end["x"] == ia.INFINITY
        assert end["label"].startswith("∞")
        limit = next(r for r in rho["limits"] if r["task"] == task)
        pm = theory.power_method_loss(samples[task], L).value
        assert end["loss"] == limit["loss"] == pytest.approx(pm, rel=1e-3)
        # rho = 1e4 is within reach of the limit, rho = 1 is not there yet
        near = next(r for r in rows if r["rho"] == 1e4)
        one = next(r for r in rows if r["rho"] == 1.0)
        assert abs(near["loss"] - pm) < abs(one["loss"] - pm)
        assert one["loss"] == pytest.approx(
            theory.looped_loss(samples[task], 1.0, L), rel=1e-3
        )
        # the last loop curve is the power method's on the same points
        X, a = points[task]
        P = tasks.principal_projector(X)[0]
        y = inference.power_method(X, a, INFERENCE_LOOPS)
        want = np.median(inference.sin_angle(y, P).numpy(), axis=1)
        got = next(
            r["err"] for r in rho["loops"]
            if r["task"] == task and r["k"] == end["k"]
        )  # fmt: skip
        assert np.allclose(got, want, rtol=1e-3)


def _walk(node):
    """Every dict in a Vega-Lite specification."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_rho_explorer_controls_and_colour_key(rho):
    spec = ia.rho_explorer(rho, L).to_dict()
    params = {p["name"]: p for p in spec["params"]}
    n = len(ia.rho_grid(per_decade=1))
    assert params["k"]["bind"]["input"] == "range"
    assert (params["k"]["bind"]["min"], params["k"]["bind"]["max"]) == (
        0,
        n - 1,
    )
    assert params["task"]["bind"]["input"] == "radio"
    start = next(r for r in rho["curves"] if r["k"] == params["k"]["value"])
    assert start["rho"] == 1.0
    scales = [
        d["scale"]
        for d in _walk(spec)
        if d.get("field") == "task" and "scale" in d
    ]
    assert scales and all(
        s["range"] == [COLORS["Task 1"], COLORS["Task 2"]] for s in scales
    )
    marks = [d["mark"] for d in _walk(spec) if isinstance(d.get("mark"), dict)]
    dashed = [m for m in marks if "strokeDash" in m]
    assert len(dashed) == 3  # two limits and the power method's curve
    assert all(m["color"] == COLORS["power method"] == "black" for m in dashed)


def _history(steps, seed=0, d=3):
    g = torch.Generator().manual_seed(seed)
    h = History(config=TrainConfig(d=d, n=8, steps=max(steps)))
    h.snapshots = {
        s: (torch.randn(2 * d, 2 * d, generator=g) * s, torch.eye(2 * d) * s)
        for s in steps
    }
    return h


def test_encode_is_each_matrix_over_its_max_one_character_an_entry():
    assert len(ia.ALPHABET) == 2 * ia.LEVELS + 1 == 91
    assert not set("\"'\\ ") & set(ia.ALPHABET)  # safe in a JS string
    M = torch.tensor([[2.0, -1.1], [0.0, 0.03]])
    codes = ia.encode(M)
    assert len(codes) == 4
    assert np.allclose(ia.decode(codes, 2), [[1, -25 / 45], [0, 1 / 45]])
    assert ia.decode(ia.encode(torch.zeros(3, 3)), 3).max() == 0


def test_snapshot_data_every_run_task_step_and_matrix():
    steps = [0, 1, 10, 100]
    runs = {
        "LN": {"Task 1": _history(steps), "Task 2": _history(steps, 1)},
        "no LN": {"Task 1": _history(steps, 2)},
    }
    data = ia.snapshot_data(runs)
    assert data["steps"] == steps
    assert len(data["rows"]) == 3 * len(steps) * 2
    for row in data["rows"]:
        M = ia.decode(row["codes"], row["size"])
        assert row["size"] == 6 and M.shape == (6, 6)
        assert np.abs(M).max() == (0 if row["k"] == 0 else 1)
    W = runs["no LN"]["Task 1"].snapshots[10][0]
    row = next(
        r for r in data["rows"]
        if (r["run"], r["task"], r["k"], r["m"]) == ("no LN", "Task 1", 2, "W")
    )  # fmt: skip
    got = ia.decode(row["codes"], 6)  # row-major: (i, j) at i * 6 + j
    assert np.abs(got - (W / W.abs().max()).numpy()).max() <= 0.5 / 45
    other = {
        "a": {"Task 1": _history(steps)},
        "b": {"Task 1": _history([0, 5])},
    }
    with pytest.raises(ValueError, match="other logged steps"):
        ia.snapshot_data(other)


def test_snapshot_scrubber_controls_and_colours():
    steps = [0, 1, 10, 100]
    data = ia.snapshot_data(
        {
            "LN": {"Task 1": _history(steps)},
            "no LN": {"Task 1": _history(steps, 1)},
        }
    )
    spec = ia.snapshot_scrubber(data, ", seed 0").to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["k"]["bind"]["input"] == "range"
    assert params["k"]["bind"]["max"] == 3
    assert params["k"]["value"] == 3  # opens at the end of training (Fig. 4)
    assert params["run"]["bind"]["options"] == ["LN", "no LN"]
    assert params["run"]["value"] == "LN"
    assert params["task"]["bind"]["options"] == ["Task 1"]
    colour = [
        d["scale"] for d in _walk(spec)
        if d.get("field") == "value" and "scale" in d
    ]  # fmt: skip
    want = {"domain": [-1, 1], "reverse": True, "scheme": "redblue"}
    assert colour == [want, want]


def test_vega_html_fetches_nothing_and_is_stable(rho, monkeypatch):
    chart = ia.rho_explorer(rho, L)
    html = ia.vega_html(chart)
    assert ia.vega_html(chart) == html  # the same chart, the same page
    assert 'class="lnpower-interactive lnpower-vega"' in html
    assert not re.search(r"https?://(?!vega\.github\.io/schema)", html)
    script = html.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert "</" not in script  # the specification cannot end the script
    spec = json.loads(
        re.search(r"spec = (\{.*\});\n", script).group(1).replace("<\\/", "</")
    )
    assert spec == chart.to_dict()
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert "cdn.jsdelivr.net" in ia.show(chart).html  # Colab: Altair's HTML


def _result(i, **kw):
    base = dict(
        id=f"claim-{i}", where="§5", statement="<b>s</b>", paper="p",
        measured=0.5, tolerance="t", status="reproduced", detail="",
        chapter="book/with_ln", source="paper", ref="thm-4-1",
    )  # fmt: skip
    return Result(**{**base, **kw})


def test_claims_frame_and_table(monkeypatch):
    results = [
        _result(0),
        _result(1, id="fig4-growth-sixth-epochs", source="book",
                status="not reproduced", chapter="book/experiments_layer",
                detail="the gap <x>, per seed: median 0.3 over 5 seeds",
                ensemble={"seeds": 5, "median": 0.3, "q10": 0.1,
                          "q90": 0.5, "fraction": 0.0}),
    ]  # fmt: skip
    frame = ia.claims_frame(results, {"not reproduced": "#cf222e"})
    assert list(frame["reading of T"]) == [
        ia.ITERATION_READING,
        ia.EPOCH_READING,
    ]
    assert list(frame["chapter"]) == ["with_ln", "experiments_layer"]
    assert list(frame["source"]) == ["paper", "book"]
    assert "&lt;b&gt;" in frame["statement"][0]  # escaped
    assert frame["measured"][1] == (
        "the gap &lt;x&gt;, per seed: median 0.3 over 5 seeds"
    )  # the labelled detail, escaped
    assert "#cf222e" in frame["status"][1]
    html = ia.claims_table(frame).html
    # DataTables from the page's classic script, not a module (file://)
    assert "window.lnpowerDataTables" in html and "searchPanes" in html
    assert 'type="module"' not in html and "import " not in html
    assert "unpkg" not in html and "<link" not in html
    # no static preview (the chapter's own table follows), no link outside
    assert "_fallback" not in html and "hidden=" not in html
    assert "itables.org" not in html and ia.TABLE_NOTE in html
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert "unpkg" in ia.claims_table(frame).html


def test_the_sites_scripts_are_classic():
    """_ext/interactive.py turns ITables' module into a classic script whose
    top-level names stay its own (Sphinx's pages declare ``_``)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "_ext" / "interactive.py"
    spec = importlib.util.spec_from_file_location("site_interactive", path)
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    script = ext.classic("const _=1;var b=2;export{_ as ITable,b as c};", "x")
    assert script.startswith("(function () {") and "export" not in script
    assert "window.x={ITable:_,c:b};" in script
    for bad in ("import a from 'a';export{a};", "const a=1;"):
        with pytest.raises(ValueError):
            ext.classic(bad, "x")
