"""The house style of the figures (lnpower.plots): what the text promises
about every figure."""

import matplotlib

matplotlib.use("Agg")

import re  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lnpower import plots  # noqa: E402
from lnpower.config import TrainConfig  # noqa: E402
from lnpower.history import History  # noqa: E402


def history(seed=0, steps=50, d=4, n=8):
    rng = np.random.default_rng(seed)
    h = History(config=TrainConfig(d=d, n=n, steps=steps))
    h.steps = [0, 1, 5, 10, 50]
    h.train_loss = list(1 / (1 + np.array(h.steps)) + 0.01)
    h.test_loss = [x * 1.01 for x in h.train_loss]
    h.w = list(np.linspace(0, 1, steps + 1) + rng.uniform(0, 0.01, steps + 1))
    h.v = list(np.linspace(1, 1.5, steps + 1))
    return h


def labelled(ax):
    return bool(ax.get_xlabel()) and bool(ax.get_ylabel())


def test_every_axis_labelled_and_legible():
    fig, ax = plots.losses({"a": history()}, test=True)
    assert (
        labelled(ax) and ax.get_xscale() == "log"
    )  # no symlog: no negative steps
    assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 8
    fig, ax = plots.growth({"Task 1": history()}, 0.25)
    assert labelled(ax)
    fig, ax = plots.error_vs_loops(
        {"x": [0.5, 0.2, 0.1], "power method": [0.4, 0.1, 0.02]}
    )
    assert labelled(ax)


def test_references_are_dotted_and_drawn_above_the_data():
    fig, ax = plots.growth({"Task 1": history()}, 0.25)
    ref = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    data = [ln for ln in ax.get_lines() if ln.get_linestyle() != ":"]
    assert ref and all(
        r.get_zorder() > d.get_zorder() for r in ref for d in data
    )


def test_power_method_black_and_dashed():
    fig, ax = plots.error_vs_loops(
        {"T = 100": [0.5, 0.3], "power method": [0.4, 0.1]}
    )
    (pm,) = [ln for ln in ax.get_lines() if ln.get_label() == "power method"]
    assert pm.get_linestyle() == "--" and pm.get_color() in ("k", "black")


def test_bounds_clipped_at_one():
    fig, ax = plots.subplots()
    L = np.arange(1, 6)
    plots.bounds(
        ax,
        L,
        0.01 * np.ones(5),
        np.array([5.0, 3, 1.5, 0.9, 0.5]),
        0.2 * np.ones(5),
        "x",
        "C0",
    )
    dotted = [ln.get_ydata() for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(dotted) == 2  # the two bounds
    np.testing.assert_array_equal(dotted[1], [1.0, 1, 1, 0.9, 0.5])


def test_fig3_one_colour_per_configuration_in_every_panel():
    runs = {
        (t, d, n): history(seed=d + n, d=d, n=n)
        for t in ("sphere", "rotated")
        for d, n in ((4, 8), (4, 16))
    }
    fig, axes = plots.fig3(runs)
    colours = [
        {
            ln.get_label().rsplit(",", 1)[0]: ln.get_color()
            for ln in ax.get_lines()
        }
        for ax in axes
    ]
    assert colours[0] == colours[1]


@pytest.mark.parametrize("key", ["Task 1", "Task 2", "LN", "looped model"])
def test_fixed_colours(key):
    assert plots.color(key) == plots.COLORS[key]


def test_a_colour_outside_the_key_is_refused():
    with pytest.raises(ValueError, match="no colour in the key"):
        plots.color(2000)


def key_colours():
    from matplotlib.colors import to_rgb

    return {to_rgb(c) for c in (*plots.COLORS.values(),
                                 *plots.WEIGHT_COLORS.values())}  # fmt: skip


def test_snapshots_take_their_models_hue():
    """A snapshot of the LN layer is a lighter LN green, darker the later,
    never a task's or another model's colour."""
    from matplotlib.colors import rgb_to_hsv, to_rgb

    curves = [{100: [0.5, 0.3], 300: [0.4, 0.2], 2000: [0.3, 0.1],
               "power method": [0.2, 0.05]}]  # fmt: skip
    fig, ax = plots.error_bands(curves, model="LN")
    lines = {ln.get_label(): to_rgb(ln.get_color()) for ln in ax.lines}
    hue = rgb_to_hsv(to_rgb(plots.COLORS["LN"]))
    shades = [lines[f"T = {T}"] for T in (100, 300, 2000)]
    for c in shades:
        assert c not in key_colours() or c == to_rgb(plots.COLORS["LN"])
        assert abs(rgb_to_hsv(c)[0] - hue[0]) < 0.02
    value = [rgb_to_hsv(c)[1] for c in shades]  # saturation grows with T
    assert value[0] < value[1] < value[2]
    assert lines["power method"] == (0.0, 0.0, 0.0)


def test_families_other_than_models_use_no_model_colour():
    from matplotlib.colors import to_rgb

    runs = {
        (t, d, n): history(seed=d + n, d=d, n=n)
        for t in ("sphere", "rotated")
        for d, n in ((4, 8), (4, 16))
    }
    fig, axes = plots.fig3(runs)
    used = {to_rgb(ln.get_color()) for ax in axes for ln in ax.get_lines()}
    assert not (used - {(0.0, 0.0, 0.0)}) & key_colours()
    fig, ax = plots.error_vs_loops({"a": [0.5, 0.1], "b": [0.4, 0.2]})
    used = {to_rgb(ln.get_color()) for ln in ax.get_lines()}
    assert not used & key_colours()


def test_a_band_is_promised_only_where_it_shows():
    fig, ax = plots.subplots()
    x = np.arange(5.0)
    plots.band(ax, x, [x + 1, x + 1.001, x + 0.999], "k", "narrow")
    plots.finish(ax, "x", "y")
    assert plots.BAND not in ax.get_legend_handles_labels()[1]
    fig, ax = plots.subplots()
    plots.band(ax, x, [x + 1, x + 2, x + 3], "k", "wide")
    plots.finish(ax, "x", "y")
    assert plots.BAND in ax.get_legend_handles_labels()[1]
    fig, ax = plots.subplots()  # wide at one point only, on a log axis
    ys = [10.0**-x, 10.0**-x, 10.0**-x * np.r_[1, 1, 1, 1, 1.05]]
    plots.band(ax, x, ys, "k", "narrow on a log axis")
    ax.set_yscale("log")
    plots.finish(ax, "x", "y")
    assert plots.BAND not in ax.get_legend_handles_labels()[1]


HUES = re.compile(
    r"""((?<!\[)["']C\d["']"""  # the default cycle, not a dict's key
    r"""|f["']C\{"""  # the default cycle, by index
    r"""|["']#[0-9a-fA-F]{6}["']"""  # a hex code
    r"""|color\s*=\s*["'](?![k0w]|gray|0\.)[a-z]+["'])"""  # a named hue
)


def test_notebooks_take_colours_from_the_key():
    """A figure's colours come from lnpower.plots (the key, a model's
    snapshot shades, the shades of one colour map), never from a choice made
    in a chapter: no default-cycle colour ("C0"), hex code or named hue in a
    notebook's code (black, white and greys for references are neutral)."""
    import json
    from pathlib import Path

    found = []
    for nb in sorted((Path(__file__).parents[1] / "book").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                found += [f"{nb.name}: {m}" for m in
                          HUES.findall("".join(cell["source"]))]  # fmt: skip
    assert found == []


def test_style_restores_only_its_own_settings():
    """Jupyter's inline backend switches on interactive mode when the first
    figure is drawn; if leaving the style undid that (as ``rc_context``
    does), no later figure would be shown."""
    was = matplotlib.is_interactive()
    try:
        with plots.style():
            matplotlib.interactive(not was)
            assert (
                matplotlib.rcParams["legend.fontsize"]
                == plots.STYLE["legend.fontsize"]
            )
        assert matplotlib.is_interactive() is (not was)
        assert (
            matplotlib.rcParams["legend.fontsize"]
            != plots.STYLE["legend.fontsize"]
            or matplotlib.rcParamsDefault["legend.fontsize"]
            == plots.STYLE["legend.fontsize"]
        )
    finally:
        matplotlib.interactive(was)
