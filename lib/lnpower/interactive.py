"""Figures a reader can play with, on the rendered book with no kernel and
no network: Vega-Lite charts (drawn with Altair) with a slider, and a
filterable, sortable table (DataTables, through ITables).

Each figure is built in two steps: a function that computes its data from
the chapter's own samples or runs (``rho_data``, ``snapshot_data``,
``claims_frame``), and one that draws it (``rho_explorer``,
``snapshot_scrubber``, ``claims_table``). :func:`show` displays a chart:

- on the book's site the chart's specification is written into the page and
  drawn by Vega, Vega-Lite and Vega-Embed, one script that the site ships
  (``_static/lnpower-interactive/``, written by the book's Sphinx extension
  ``_ext/interactive.py``, and loaded only on the pages that need it);
- in Google Colab (which has a network) the same chart is drawn by Altair's
  own HTML, which loads those scripts from a CDN;
- anywhere else (a local Jupyter) the output says where to see it; the
  section's static figures show part of the same data, at fixed positions
  of its controls.

The colours are the book's key (``lnpower.plots.COLORS``): one colour
per task, the power method black and dashed.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from . import inference, tasks, theory
from .config import INFERENCE_LOOPS
from .plots import COLORS, STATUS_COLORS

#: where the built site keeps the scripts, relative to a chapter's page (the
#: chapters are one folder below the site's root)
STATIC = "../_static/lnpower-interactive"
#: Vega, Vega-Lite and Vega-Embed in one script (vl-convert's bundle)
VEGA_JS = "vega.js"
#: DataTables and its extensions as ITables packs them, as a classic script
#: that sets ``window.lnpowerDataTables`` (and ``dt_bundle.css``)
DT_JS = "datatables.js"
DT_GLOBAL = "lnpowerDataTables"
#: the class of every interactive figure's ``div`` (the site's extension
#: and the browser check look for it)
MARKER = "lnpower-interactive"
#: where rho = infinity (the power method) sits on the rho axis
INFINITY = 1e6
#: pixels: a figure's width, within the book's column (688 px wide in a
#: window 1280 px wide)
FIGURE_WIDTH = 640


def in_colab() -> bool:
    """Whether this runs in Google Colab."""
    return "google.colab" in sys.modules


def rho_grid(per_decade: int = 5, lo: int = -2, hi: int = 4) -> np.ndarray:
    """The slider's values of rho: ``-10^hi .. -10^lo``, 0, ``10^lo ..
    10^hi`` (log-spaced, ``per_decade`` a decade) and ``inf``, the power
    method."""
    pos = np.logspace(lo, hi, per_decade * (hi - lo) + 1)
    return np.concatenate([-pos[::-1], [0.0], pos, [np.inf]])


def rho_label(rho: float) -> str:
    """rho as the slider's caption writes it."""
    if np.isinf(rho):
        return "∞ (the power method)"
    if rho == 0:
        return "0"
    text = f"{rho:,.0f}" if abs(rho) >= 1000 else f"{rho:.3g}"
    return text.replace(",", "\u2009").replace("-", "−")


def per_loop_factor(lam: np.ndarray, top: np.ndarray, rho: float):
    """How much one loop of ``I + rho S`` shrinks the part of the query off
    the principal subspace, relative to the part on it, per matrix: the
    largest ``|mu_i/mu_1|`` over the eigenvalues below the top one, ``mu_i
    = 1 + rho lam_i``. For rho >= 0 this is R(rho) = (1 + rho
    lam_{r+1})/(1 + rho lam_1) (Theorems 4.6, 4.7); for rho < 0 the slowest
    direction can be the smallest eigenvalue's; at rho = inf it is the power
    method's lam_{r+1}/lam_1. ``lam`` ``(K, d)`` descending, ``top`` its
    mask of the principal subspace: ``(K,)``."""
    lam = np.asarray(lam, dtype=np.float64)
    if np.isinf(rho):
        mu = lam
    else:
        mu = 1 + rho * lam
    off = np.where(top, 0.0, np.abs(mu)).max(-1)
    with np.errstate(divide="ignore"):
        return off / np.abs(mu[:, 0])


def _sig(x: float, digits: int = 4) -> float:
    """``x`` to ``digits`` significant digits (the page carries less)."""
    return float(f"{x:.{digits}g}")


def rho_data(
    samples: Mapping[str, theory.Sample],
    points: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
    L: int,
    rhos: Sequence[float] | None = None,
    loops: int = INFERENCE_LOOPS,
) -> dict[str, list[dict]]:
    """The data of :func:`rho_explorer`, per task (``"Task 1"``, ...) and
    per value of rho (:func:`rho_grid` unless given; ``inf`` is the power
    method), to four significant digits:

    - ``"curves"``: one row per (task, rho): ``k`` (the slider's position),
      ``rho`` (None at inf), ``label``, ``x`` (where it is drawn: inf at
      :data:`INFINITY`), ``factor`` (the median over ``points`` of
      :func:`per_loop_factor`) and ``loss`` (L_L(rho) on ``samples``,
      :func:`lnpower.theory.looped_loss`; at inf the power method's
      L_L^(inf), :func:`lnpower.theory.power_method_loss`);
    - ``"loops"``: one row per (task, rho): ``err``, the median over
      ``points`` of sin(phi_l) for l = 1..``loops``, the angle between
      ``(I + rho S)^l a`` (``S^l a`` at inf) and the principal subspace
      (:func:`lnpower.inference.power_method`,
      :func:`lnpower.inference.sin_angle`);
    - ``"limits"``: per task, the power method's median factor and
      L_L^(inf).

    ``samples`` maps a task's name to its Monte Carlo sample, ``points`` to
    its test matrices ``(X, a)``."""
    rhos = rho_grid() if rhos is None else np.asarray(rhos, dtype=float)
    curves, loop_rows, limits = [], [], []
    for task, sample in samples.items():
        X, a = (t.double() for t in points[task])
        lam = tasks.spectrum(X)[0].numpy()
        top = tasks.top_mask(lam)
        P = tasks.principal_projector(X)[0]
        pm_loss = theory.power_method_loss(sample, L).value
        for k, rho in enumerate(rhos):
            inf = bool(np.isinf(rho))
            gamma = None if inf else float(rho)
            # 1 + rho lam_i can be 0 on a grid point (Task 2's spectrum is
            # fixed): the loss is still finite, its unused derivative not
            with np.errstate(divide="ignore", invalid="ignore"):
                loss = pm_loss if inf else theory.looped_loss(sample, rho, L)
            if not np.isfinite(loss):
                raise ValueError(f"L_L({rho}) is not finite for {task}")
            factor = np.median(per_loop_factor(lam, top, rho))
            curves.append(
                {
                    "task": task,
                    "k": k,
                    "rho": gamma,
                    "label": rho_label(rho),
                    "x": INFINITY if inf else float(rho),
                    "factor": _sig(factor),
                    "loss": _sig(float(loss)),
                }
            )
            y = inference.power_method(X, a, loops, gamma)
            err = np.median(inference.sin_angle(y, P).numpy(), axis=1)
            loop_rows.append(
                {"task": task, "k": k, "err": [_sig(e) for e in err]}
            )
        factor = np.median(per_loop_factor(lam, top, np.inf))
        limits.append(
            {"task": task, "factor": _sig(factor), "loss": _sig(pm_loss)}
        )
    return {"curves": curves, "loops": loop_rows, "limits": limits}


def _task_colour(tasks_shown: Sequence[str]):
    import altair as alt

    return alt.Color(
        "task:N",
        scale=alt.Scale(
            domain=list(tasks_shown),
            range=[COLORS[t] for t in tasks_shown],
        ),
        legend=None,
    )


def _rho_axis():
    """rho on a symmetric log scale (linear within 0.01 of 0), ticks
    labelled with rho itself, and inf drawn at :data:`INFINITY`."""
    import altair as alt

    ticks = [-1e4, -1, 0, 1, 1e4, INFINITY]
    return alt.X(
        "x:Q",
        title="ρ",
        scale=alt.Scale(
            type="symlog", constant=0.01, domain=[-1e4, 3 * INFINITY]
        ),
        axis=alt.Axis(
            values=ticks,
            labelExpr=(
                f"datum.value >= {INFINITY:g} ? '∞' : "
                "datum.value <= -1e4 ? '−10⁴' : "
                "datum.value >= 1e4 ? '10⁴' : "
                "replace(datum.label, '-', '−')"
            ),
            labelOverlap=False,
            grid=False,
        ),
    )


def _log_y(field: str, title: str, ranges: dict[str, list[float]]):
    """A log axis whose range is the shown task's (``ranges``: task ->
    [low, high])."""
    import altair as alt

    pick = " : ".join(
        f"task == '{t}' ? {json.dumps(r)}" for t, r in ranges.items()
    )
    return alt.Y(
        f"{field}:Q",
        title=title,
        scale=alt.Scale(
            type="log",
            clamp=True,
            nice=False,
            domain=alt.ExprRef(f"{pick} : [0.1, 1]"),
        ),
        axis=alt.Axis(grid=False, tickCount=4, format="~g"),
    )


def _radio(name: str, options: list[str]):
    """A Vega-Lite parameter ``name`` chosen by radio buttons, opening at the
    first of ``options``."""
    import altair as alt

    return alt.param(
        name=name,
        value=options[0],
        bind=alt.binding_radio(options=options, name=f"{name}: "),
    )


def rho_explorer(
    data: dict[str, list[dict]],
    L: int,
    start: float = 1.0,
    width: int = FIGURE_WIDTH,
):
    """Three panels under one slider of rho (and a choice of task): the
    per-loop factor R(rho) (:func:`per_loop_factor`), the error after l =
    1..25 loops of ``I + rho S`` against the power method's (black, dashed),
    and the loss L_L(rho); in the first and last a dot marks the slider's
    rho and a dashed black line the power method's value, which rho -> inf
    (the slider's last position, drawn at ∞) reaches. ``data`` from
    :func:`rho_data`; ``start`` the rho the slider starts at (the nearest
    on the grid); ``width`` the whole figure's, in pixels. Returns an
    Altair chart."""
    import altair as alt

    curves = data["curves"]
    shown = list(dict.fromkeys(r["task"] for r in curves))
    ks = sorted({r["k"] for r in curves})
    labels = json.dumps(
        [next(r["label"] for r in curves if r["k"] == k) for k in ks],
        ensure_ascii=False,
    )
    finite = [r for r in curves if r["rho"] is not None]
    k0 = min(finite, key=lambda r: abs(r["rho"] - start))["k"]
    slider = alt.param(
        name="k",
        value=k0,
        bind=alt.binding_range(min=ks[0], max=ks[-1], step=1, name="ρ: "),
    )
    task = _radio("task", shown)
    colour = _task_colour(shown)
    panel = (width - 3 * 70) // 3
    curve = alt.InlineData(values=curves)
    limits = alt.InlineData(values=data["limits"])
    on_task = "datum.task == task"

    def ranges(rows, field: str, top: float | None = None):
        out = {}
        for t in shown:
            vals = [
                v
                for r in rows
                if r["task"] == t
                for v in np.atleast_1d(r[field])
                if v > 0
            ]
            lo, hi = min(vals), max(vals)
            out[t] = [lo / 1.5, top or hi * 1.5]
        return out

    def landscape(field: str, title: str, ytitle: str, top: float):
        y = _log_y(field, ytitle, ranges(curves, field, top))
        line = (
            alt.Chart(curve)
            .transform_filter(f"{on_task} && datum.rho != null")
            .mark_line(strokeWidth=2)
            .encode(_rho_axis(), y, colour)
        )
        limit = (
            alt.Chart(limits)
            .transform_filter(on_task)
            .mark_rule(color=COLORS["power method"], strokeDash=[6, 4])
            .encode(y=f"{field}:Q")
        )
        dot = (
            alt.Chart(curve)
            .transform_filter(f"{on_task} && datum.k == k")
            .mark_point(filled=True, size=90, opacity=1, stroke="black")
            .encode(_rho_axis(), y, colour)
        )
        return alt.layer(line, limit, dot).properties(
            width=panel, height=190, title=title
        )

    err_y = _log_y("err", "median sin φ_l", ranges(data["loops"], "err", 1))
    lx = alt.X(
        "l:Q",
        title="loops l",
        scale=alt.Scale(domain=[1, INFERENCE_LOOPS]),
        axis=alt.Axis(grid=False),
    )

    def loop_curve(which: str):
        return (
            alt.Chart(alt.InlineData(values=data["loops"]))
            .transform_filter(f"{on_task} && datum.k == {which}")
            .transform_flatten(["err"])
            .transform_window(l="row_number()", groupby=["task", "k"])
        )

    pm = loop_curve(str(ks[-1])).mark_line(
        color=COLORS["power method"], strokeDash=[6, 4]
    )
    now = loop_curve("k").mark_line(point=True, strokeWidth=2)
    loops = alt.layer(
        pm.encode(lx, err_y), now.encode(lx, err_y, colour)
    ).properties(width=panel, height=190, title="error after l loops")
    return (
        alt.hconcat(
            landscape("factor", "per-loop factor", "median R(ρ)", 10),
            loops,
            landscape("loss", f"loss L_{L}(ρ)", f"L_{L}(ρ)", 1),
        )
        .add_params(slider, task)
        .properties(
            title=alt.TitleParams(
                text=alt.ExprRef(f"'ρ = ' + {labels}[k] + ',  ' + task"),
                subtitle="dashed black: the power method (ρ → ∞)",
                anchor="start",
            )
        )
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )


def _normalised(M: torch.Tensor) -> torch.Tensor:
    """``M/||M||_max``, as ``lnpower.plots.heatmaps`` draws it."""
    M = M.detach().cpu().double()
    return M / M.abs().max().clamp_min(1e-300)


# a heat map's entries travel as one printable character each: the 91
# characters of ASCII from "!" to "~" but the quotes and the backslash stand
# for the levels -45..45 of M/||M||_max (steps of 1/45, finer than the eye
# tells colours apart); four times lighter than the numbers in JSON
#: the levels on each side of 0 of a heat map's entries
LEVELS = 45
#: one character per level, -45..45
ALPHABET = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"'\\")


def encode(M: torch.Tensor) -> str:
    """``M/||M||_max``, row by row, one character of :data:`ALPHABET` per
    entry (:func:`decode` reads it back)."""
    levels = torch.round(LEVELS * _normalised(M)).to(torch.int64) + LEVELS
    return "".join(ALPHABET[v] for v in levels.flatten().tolist())


def decode(codes: str, size: int) -> np.ndarray:
    """The ``size x size`` matrix of levels / 45 that :func:`encode` wrote."""
    levels = np.array([ALPHABET.index(c) for c in codes], dtype=float)
    return ((levels - LEVELS) / LEVELS).reshape(size, size)


def snapshot_data(
    runs: Mapping[str, Mapping[str, object]],
) -> dict[str, list]:
    """The data of :func:`snapshot_scrubber`: ``runs`` maps a run's name
    (``"LN layer"``, ...) to its runs per task (a task's name to a
    :class:`~lnpower.history.History`); per run, task and logged step of
    the history's ``snapshots``, W/||W||_max and V/||V||_max
    (:func:`encode`). ``"rows"``: one per (run, task, step, matrix):
    ``{"run", "task", "k", "m", "size", "codes"}``, with ``k`` the step's
    position among the logged steps, ``m`` ``"W"`` or ``"V"`` and ``codes``
    its ``size * size`` entries; ``"steps"``: the logged steps, which every
    history must share (``ValueError`` otherwise)."""
    rows, steps = [], None
    for run, histories in runs.items():
        for task, h in histories.items():
            logged = [int(s) for s in sorted(h.snapshots)]
            if steps not in (None, logged):
                raise ValueError(f"{run}, {task}: other logged steps")
            steps = logged
            for k, step in enumerate(logged):
                for m, M in zip("WV", h.snapshots[step]):
                    rows.append(
                        {
                            "run": run,
                            "task": task,
                            "k": k,
                            "m": m,
                            "size": M.shape[-1],
                            "codes": encode(M),
                        }
                    )
    return {"rows": rows, "steps": steps}


def snapshot_scrubber(data: dict[str, list], note: str = "", px: int = 255):
    """W/||W||_max and V/||V||_max at a logged step of training, chosen by a
    slider, of the run and the task chosen by radio buttons: the heat maps
    of Figs. 4, 6 and 7 (the same colour map, RdBu reversed on [-1, 1],
    lines between the d x d blocks) at every step the runs stored; it opens
    at the first run and task, at the last step. ``data`` from
    :func:`snapshot_data`; ``note`` follows the run and task in the title
    (``", seed 0"``); ``px`` a heat map's side in pixels. Returns an Altair
    chart."""
    import altair as alt

    logged = data["steps"]
    runs = list(dict.fromkeys(r["run"] for r in data["rows"]))
    shown = list(dict.fromkeys(r["task"] for r in data["rows"]))
    slider = alt.param(
        name="k",
        value=len(logged) - 1,
        bind=alt.binding_range(
            min=0, max=len(logged) - 1, step=1, name="training step: "
        ),
    )
    run = _radio("run", runs)
    task = _radio("task", shown)
    size = data["rows"][0]["size"]
    d = size // 2
    source = alt.InlineData(values=data["rows"])
    axis = alt.Axis(
        values=[d / 2, 3 * d / 2],
        labelExpr=f"datum.value < {d} ? '1' : '2'",
        grid=False,
        ticks=False,
    )

    def matrix(m: str):
        base = (
            alt.Chart(source)
            .transform_filter(
                "datum.run == run && datum.task == task && datum.k == k"
            )
            .transform_filter(f"datum.m == '{m}'")
            .transform_calculate(code="split(datum.codes, '')")
            .transform_flatten(["code"])
            .transform_window(n="row_number()")
            .transform_calculate(
                i="floor((datum.n - 1) / datum.size)",
                j="(datum.n - 1) % datum.size",
                value=f"(indexof('{ALPHABET}', datum.code) - {LEVELS})"
                f" / {LEVELS}",
            )
            .transform_calculate(i2="datum.i + 1", j2="datum.j + 1")
        )
        cells = base.mark_rect(strokeWidth=0).encode(
            x=alt.X(
                "j:Q",
                title="block column",
                scale=alt.Scale(domain=[0, size], nice=False),
                axis=axis,
            ),
            x2="j2:Q",
            y=alt.Y(
                "i:Q",
                title="block row",
                scale=alt.Scale(domain=[0, size], nice=False, reverse=True),
                axis=axis,
            ),
            y2="i2:Q",
            color=alt.Color(
                "value:Q",
                scale=alt.Scale(
                    scheme="redblue", reverse=True, domain=[-1, 1]
                ),
                legend=alt.Legend(title=None, gradientLength=px - 40),
            ),
            tooltip=[
                alt.Tooltip("i:Q", title="row"),
                alt.Tooltip("j:Q", title="column"),
                alt.Tooltip("value:Q", format=".2f"),
            ],
        )
        lines = alt.Chart(alt.InlineData(values=[{"at": d}])).mark_rule(
            color="black", strokeWidth=1
        )
        return alt.layer(
            cells,
            lines.encode(x=alt.X("at:Q")),
            lines.encode(y=alt.Y("at:Q")),
        ).properties(width=px, height=px, title=f"{m} / max|{m}|")

    stamps = json.dumps(logged)
    return (
        alt.hconcat(matrix("W"), matrix("V"))
        .add_params(slider, run, task)
        .resolve_scale(color="shared")
        .properties(
            title=alt.TitleParams(
                text=alt.ExprRef(
                    f"run + ', ' + task + {json.dumps(note)} + "
                    "', step t = ' + "
                    f"{stamps}[k] + ' (of {logged[-1]})'"
                ),
                anchor="start",
            )
        )
        .configure_view(stroke="black", strokeWidth=0.5)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )


def _uid(text: str) -> str:
    return "lnpower-" + hashlib.sha256(text.encode()).hexdigest()[:12]


FALLBACK = (
    "This figure is interactive on the book's website and in Google Colab;"
    " the section's static figures show part of the same data, at fixed"
    " positions of its controls."
)


def vega_html(chart, renderer: str = "svg") -> str:
    """The HTML that draws ``chart`` on the book's site: a ``div`` and a
    script that hands the chart's specification to Vega-Embed, which the
    page loads (the site's ``_static/lnpower-interactive/vega.js``). Where
    the script is missing the ``div`` says so."""
    spec = json.dumps(
        chart.to_dict(), separators=(",", ":"), ensure_ascii=False
    ).replace("</", "<\\/")
    uid = _uid(spec)
    return (
        f'<div id="{uid}" class="{MARKER} lnpower-vega">{FALLBACK}</div>\n'
        # the slider's own read-out is its position; the title says rho
        f'<style>#{uid} input[type="range"] + span {{display: none}}</style>\n'
        "<script>(function () {\n"
        f'  var el = document.getElementById("{uid}"), spec = {spec};\n'
        "  function draw() {\n"
        "    if (!window.vegaEmbed) return;\n"
        "    el.textContent = '';\n"
        f'    vegaEmbed(el, spec, {{actions: false, renderer: "{renderer}"}})'
        "\n      .catch(function (e) { console.error(e); });\n"
        "  }\n"
        "  if (window.vegaEmbed) draw();\n"
        "  else window.addEventListener('DOMContentLoaded', draw);\n"
        "})();</script>"
    )


class Interactive:
    """What a chapter's cell returns to show an interactive figure: HTML for
    the book's site, Altair's own HTML in Colab (:func:`show`)."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<interactive figure: {len(self.html)} bytes of HTML>"


def show(chart, renderer: str = "svg") -> Interactive:
    """Display an Altair ``chart``: drawn by the site's scripts on the book's
    site (:func:`vega_html`), or by Altair's HTML, which loads the same
    scripts from a CDN, in Colab."""
    if in_colab():
        return Interactive(chart.to_html())
    return Interactive(vega_html(chart, renderer))


# --- the reproduction table

#: the reading of T of a claim whose id ends in ``-epochs``
EPOCH_READING = "epochs"
#: the reading of T of every other claim
ITERATION_READING = "iterations, or none"
#: the columns the table filters on
FILTERS = ("status", "source", "chapter", "reading of T")


# the filter panes' values wrap in their column instead of widening it
TABLE_STYLE = (
    "<style>.lnpower-datatable .dtsp-searchPane .dtsp-name "
    "{white-space: normal; overflow-wrap: anywhere}</style>"
)


def reading(claim_id: str) -> str:
    """Which reading of the paper's T a claim is checked at: a claim whose
    id ends in ``-epochs`` reads T as 2000 epochs
    (:data:`EPOCH_READING`); every other claim reads it as 2000
    iterations, or does not depend on the horizon
    (:data:`ITERATION_READING`)."""
    return EPOCH_READING if claim_id.endswith("-epochs") else ITERATION_READING


def claims_frame(results: Sequence, colours: Mapping[str, str] | None = None):
    """The claims (:class:`lnpower.claims.Result`, as
    :func:`lnpower.claims.report.check_all` measures them) as a pandas
    DataFrame, one row per claim: ``claim`` (its id, linked to the chapter
    that checks it), ``statement``, ``measured`` (the claim's detail,
    which names each number it gives, and for an ensemble the quantity per
    seed with its spread over the seeds), ``status`` (coloured by
    ``colours``, the book's ``lnpower.plots.STATUS_COLORS`` unless given),
    ``source`` (paper or book), ``chapter`` and ``reading of T``
    (:func:`reading`); the table filters on the last four
    (:data:`FILTERS`)."""
    from html import escape

    import pandas as pd

    colours = STATUS_COLORS if colours is None else colours

    rows = []
    for r in results:
        chapter = r.chapter.split("/")[-1]
        colour = colours.get(r.status, "inherit")
        rows.append(
            {
                "claim": f'<a href="{chapter}.html"><code>{escape(r.id)}'
                "</code></a>",
                "statement": escape(r.statement),
                "measured": escape(r.detail),
                "status": f'<b style="color:{colour}">{r.status}</b>',
                "source": r.source,
                "chapter": chapter,
                "reading of T": reading(r.id),
            }
        )
    return pd.DataFrame(rows)


def claims_table(frame, page_length: int = 10) -> Interactive:
    """The claims (:func:`claims_frame`) as a DataTables table: sortable by
    any column (click its head), searchable, and filtered by status,
    source, chapter and reading of T in four panes above it (DataTables'
    SearchPanes). On the book's site DataTables is the site's own copy,
    loaded by the page (``_static/lnpower-interactive/datatables.js``, a
    classic script, so that a page opened from disk draws the table too);
    in Colab ITables loads it from its CDN."""
    import itables

    columns = list(frame.columns)
    panes = [columns.index(c) for c in FILTERS]
    colab = in_colab()
    where = {} if colab else {"dt_url": f"{STATIC}/{DT_JS}"}
    html = itables.to_html_datatable(
        frame,
        connected=True,
        table_id="lnpower-claims",
        allow_html=True,
        showIndex=False,
        classes="display compact",
        style="width:100%;table-layout:fixed;overflow-wrap:break-word",
        autoWidth=False,
        pageLength=page_length,
        lengthMenu=[10, 25, 100],
        order=[],
        layout={
            "top1": "searchPanes",
            "topStart": "pageLength",
            "topEnd": "search",
        },
        searchPanes={
            "layout": f"columns-{len(panes)}",
            "cascadePanes": True,
            "columns": panes,
            "dtOpts": {"scrollY": "9em"},
        },
        columnDefs=[
            {"searchPanes": {"show": True}, "targets": panes},
            *(
                {"width": f"{w}%", "targets": [i]}
                for i, w in enumerate((15, 24, 13, 14, 9, 14, 11))
            ),
        ],
        **where,
    )
    return Interactive(
        f'<div class="{MARKER} lnpower-datatable" style="font-size:0.8em">'
        f"{html if colab else _on_site(html, 'lnpower-claims')}</div>"
        f"{TABLE_STYLE}"
    )


#: what the table says before DataTables draws it (or where it cannot)
TABLE_NOTE = (
    "This table is interactive where JavaScript runs; the table below lists"
    " every claim."
)


def _on_site(html: str, table_id: str) -> str:
    """ITables' HTML for the book's site: DataTables from the page's
    classic script (``window.lnpowerDataTables``), not imported as a module
    (which a page opened from disk may not do), its style from the page's
    head; without ITables' static preview, which repeats the chapter's full
    table (the first rows, a padlock and a link to itables.org); and with
    :data:`TABLE_NOTE` for the loading message (a logo linked to
    itables.org). ``ValueError`` where ITables writes other HTML (another
    version: the tests say so)."""
    start = f'<table id="{table_id}" hidden="hidden">'
    preview = re.compile(
        rf'\n<div id="{table_id}_fallback">.*?</script>', re.S
    )
    load = re.compile(
        r'<link href="[^"]*" rel="stylesheet">\s*<script type="module">\s*'
        r"import \{ ITable, jQuery as \$ \} from '[^']*';(.*?)</script>",
        re.S,
    )
    if not (start in html and preview.search(html) and load.search(html)):
        raise ValueError("ITables wrote HTML of another form")
    html = preview.sub("", html, count=1)
    html = load.sub(
        lambda m: (
            "<script>(function () {\n"
            f"    if (!window.{DT_GLOBAL}) return;\n"
            f"    const {{ ITable, jQuery: $ }} = window.{DT_GLOBAL};"
            f"{m.group(1)}}})();</script>"
        ),
        html,
        count=1,
    )
    i = html.index(start)
    j = html.index("</table>", i)
    table = re.sub(
        r"<tbody>.*</tbody>",
        f"<tbody><tr><td>{TABLE_NOTE}</td></tr></tbody>",
        html[i:j].replace(' hidden="hidden"', ""),
        flags=re.S,
    )
    return html[:i] + table + html[j:]
