"""The built book in a real browser: every page loaded in headless Chromium
(Debian's ``chromium``, driven by Playwright), checked, and photographed;
every internal link resolved.

Per page: no JavaScript error; MathJax has typeset every math element and
reported no error; every image has loaded; as many theorem and exercise
boxes as the source has directives; on notebook pages, a Colab link to
``.../blob/<branch>/book/<name>.ipynb``. What a reader would see cut off or
garbled: no code block, output, table or display equation wider than its
column (content behind a horizontal scrollbar), no image wider than the
page, and no character drawn as a missing-glyph box (a character that no
installed font has). Screenshots of each page's first screen go to
``_build/screenshots/`` (``--full-page``: the whole page, for reading the
book as pictures; it doubles the time).

Offline, as a reader without a network: every request that would leave the
machine (anything but the local test server) is aborted and fails the page,
and so does an error in the console. On a page with interactive figures
(``lnpower.interactive``), each figure must have its controls (a
chart's sliders and radio buttons, a table's filter panes and sortable
heads), and moving each control must change the figure's plot area: a
screenshot of the drawn chart or of the table's rows, not of the control,
taken before and after, compared pixel by pixel (``_build/screenshots/
interactive/``). Two browsers check the pages, half
each (the machine's two cores). Usage: ``python -m lnbook.browser
[--full-page] [page.html ...]``; exits non-zero on failure.
"""

from __future__ import annotations

import functools
import http.server
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

from lnbook import ROOT

HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) and not (
                tag == "link" and a.get("rel") == "preconnect"
            ):
                self.refs.append(a[key])


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text(errors="replace"))
    return p


def check_links() -> list[str]:
    """Every relative href/src of every built page points at a file that
    exists (and at an id that exists, for links into a page)."""
    problems, parsed = [], {}
    for page in HTML.rglob("*.html"):
        if "_static" in page.parts:  # the theme's Jinja templates, not pages
            continue
        for ref in parse(page).refs:
            url = urlparse(ref)
            if url.scheme or ref.startswith(
                ("//", "mailto:", "javascript:", "data:")
            ):
                continue
            target = (
                (page.parent / unquote(url.path)).resolve()
                if url.path
                else page
            )
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page.relative_to(HTML)}: broken link {ref}")
                continue
            if url.fragment and target.suffix == ".html":
                if (
                    target not in parsed
                ):  # parse each page once (setdefault would not)
                    parsed[target] = parse(target).ids
                ids = parsed[target]
                if unquote(url.fragment) not in ids:
                    problems.append(
                        f"{page.relative_to(HTML)}: no anchor #{url.fragment} "
                        "in "
                        f"{target.relative_to(HTML)}"
                    )
    return problems


def source_counts(name: str) -> tuple[int, int]:
    """(theorem-like directives, exercise directives) in a page's source."""
    src = next(
        (
            p
            for p in (
                ROOT / "book" / f"{name}.ipynb",
                ROOT / "book" / f"{name}.md",
            )
            if p.exists()
        ),
        None,
    )
    text = src.read_text() if src else ""
    return len(re.findall(r":::\{prf:", text)), len(
        re.findall(r":::\{exercise\}", text)
    )


MISSING: list[str] = []


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        if code == 404 and not self.path.startswith("/favicon"):
            MISSING.append(self.path)
        try:
            super().send_error(code, message, explain)
        except (BrokenPipeError, ConnectionResetError):
            pass


def serve():
    handler = functools.partial(Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# What a reader sees cut off, garbled or missing, measured in the browser. A
# block overflows when its content is wider than its box (the rest is behind a
# scrollbar). A character is a missing-glyph box when the page's font, with the
# browser's fallbacks, draws it exactly as it draws a code point no font has
# (U+10FFFD, private use).
LAYOUT = """() => {
  const article = document.querySelector('article') || document.body;
  const width = article.getBoundingClientRect().width;
  const blocks = article.querySelectorAll('pre, div.highlight, ' +
      'div.cell_output, table, mjx-container[display="true"]');
  const overflow = [...blocks].filter(b => b.scrollWidth > b.clientWidth + 2 &&
      !b.closest('.toggle-hidden, details:not([open])')).map(
      b => `${b.tagName.toLowerCase()} ${b.scrollWidth}>${b.clientWidth}px: ` +
           b.innerText.split('\\n').reduce(
               (a, l) => l.length > a.length ? l : a, '').slice(0, 60));
  const wide_images = [...article.querySelectorAll('img')].filter(
      i => i.getBoundingClientRect().width > width + 2).map(i => i.src);
  const canvas = document.createElement('canvas');
  canvas.width = 48; canvas.height = 48;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (ch, font) => {
    ctx.clearRect(0, 0, 48, 48); ctx.font = font; ctx.fillText(ch, 4, 36);
    return ctx.getImageData(0, 0, 48, 48).data.join(',');
  };
  const chars = new Map();
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el || el.closest('mjx-container, script, style')) continue;
    for (const ch of walker.currentNode.textContent) {
      if (ch.codePointAt(0) > 127 && !/\\s/.test(ch) && !chars.has(ch)) {
        const st = getComputedStyle(el);
        chars.set(ch,
            `${st.fontStyle} ${st.fontWeight} 28px ${st.fontFamily}`);
      }
    }
  }
  const none = String.fromCodePoint(0x10FFFD);
  const missing = [...chars].filter(([ch, font]) =>
      draw(ch, font) === draw(none, font)).map(([ch]) => ch);
  // a code cell that draws a figure must show one (a figure lost on the way
  // renders as nothing)
  const drawing = new RegExp('\\\\b(plots\\\\.' +
      '(subplots|heatmaps|data_flow|fig3)|plt\\\\.(subplots|figure))\\\\(');
  const blank_figures = [...article.querySelectorAll('div.cell')].filter(c => {
      const src = c.querySelector('.cell_input');
      return src && drawing.test(src.textContent) &&
          !c.querySelector('.cell_output img');
  }).map(c => c.querySelector('.cell_input').textContent.trim()
      .split('\\n')[0].slice(0, 60));
  return {overflow, wide_images, missing_glyphs: missing, blank_figures};
}"""

REFRESH = re.compile(
    r'<meta http-equiv="Refresh" content="\d+;\s*url=([^"]+)"', re.I
)


def redirect_target(rel: str) -> str | None:
    """Where a built page redirects to (index.html's meta refresh), or None."""
    m = REFRESH.search((HTML / rel).read_text(encoding="utf-8"))
    return m.group(1) if m else None


INTERACTIVE = SHOTS / "interactive"
# the plot area of each kind of interactive figure: the drawn chart (not its
# sliders), the table's rows (not its filter panes, which are tables too)
CHART = "svg.marks, canvas.marks"
TABLE = "table.dataTable:not(.dtsp-panesContainer table)"
CHANGED = 200  # pixels that must change when a control moves


def offline(page, base: str, sent: list[str]) -> None:
    """Let ``page`` reach only the local test server at ``base``: any other
    request is aborted and its URL recorded in ``sent``."""
    local = urlparse(base).netloc

    def route(r):
        url = urlparse(r.request.url)
        if url.scheme in ("data", "blob", "about") or url.netloc == local:
            r.continue_()
        else:
            sent.append(r.request.url)
            r.abort()

    page.route("**/*", route)


def changed_pixels(before: bytes, after: bytes) -> int:
    """How many pixels differ between two screenshots (all of them if their
    sizes differ)."""
    import io

    from PIL import Image, ImageChops

    a, b = (Image.open(io.BytesIO(x)).convert("RGB") for x in (before, after))
    if a.size != b.size:
        return max(a.width * a.height, b.width * b.height)
    diff = ImageChops.difference(a, b).convert("L")
    return sum(diff.point(lambda v: 255 if v else 0).histogram()[1:])


def none():
    pass


def controls(figure, table: bool) -> list:
    """(name, set-up, move) for each control of an interactive figure: a
    chart's radio buttons (the first unchecked of each group) and sliders
    (to the other end); a table's head (sorted by the fourth column) and
    each filter pane (its first value chosen, from a table with every
    filter cleared by the set-up)."""
    found = []
    if table:
        head = figure.locator(f"{TABLE} thead th").nth(3)
        found.append(("sort", none, head.click))

        def clear():
            button = figure.locator(".dtsp-clearAll")
            if button.is_enabled():
                button.click()

        panes = figure.locator(".dtsp-searchPane")
        for p in range(panes.count()):
            pane = panes.nth(p)

            name = pane.locator("input").first.get_attribute("placeholder")
            first = pane.locator("tbody tr").first
            found.append((f"filter {name}", clear, first.click))
        return found
    radios = figure.locator("input[type=radio]")
    groups = dict.fromkeys(
        radios.nth(i).get_attribute("name") for i in range(radios.count())
    )
    for i, group in enumerate(groups):
        other = figure.locator(
            f'input[type=radio][name="{group}"]:not(:checked)'
        ).first
        found.append((f"radio {i + 1}", none, other.check))
    sliders = figure.locator("input[type=range]")
    for i in range(sliders.count()):
        s = sliders.nth(i)

        def slide(s=s):
            value, lo = s.evaluate("e => [e.value, e.min]")
            s.focus()
            s.press("Home" if value != lo else "End")

        found.append((f"slider {i + 1}", none, slide))
    return found


def check_interactive(page, name: str) -> list[str]:
    """Each interactive figure of the page has controls, and moving each
    changes its plot area (screenshots before and after each move)."""
    problems = []
    figures = page.locator(".lnpower-interactive")
    INTERACTIVE.mkdir(parents=True, exist_ok=True)
    for i in range(figures.count()):
        figure = figures.nth(i)
        table = "lnpower-datatable" in figure.get_attribute("class")
        plot = figure.locator(TABLE if table else CHART).first
        what = f"interactive figure {i + 1}"
        try:
            plot.wait_for(state="visible", timeout=15_000)
        except Exception:  # playwright's TimeoutError
            problems.append(f"{what}: nothing drawn")
            continue
        wider = plot.evaluate(
            "e => e.getBoundingClientRect().right - "
            "(e.closest('article') || document.body)"
            ".getBoundingClientRect().right"
        )
        if wider > 2:
            problems.append(f"{what}: {wider:.0f} px wider than the column")
        moves = controls(figure, table)
        if not moves or (table and len(moves) < 5):
            problems.append(f"{what}: controls missing ({len(moves)})")
        for label, setup, move in moves:
            setup()
            plot.scroll_into_view_if_needed()
            page.wait_for_timeout(300)
            before = plot.screenshot()
            move()
            page.wait_for_timeout(500)
            after = plot.screenshot()
            stem = f"{name}-{i + 1}-{label.replace(' ', '-')}"
            (INTERACTIVE / f"{stem}-before.png").write_bytes(before)
            (INTERACTIVE / f"{stem}-after.png").write_bytes(after)
            if changed_pixels(before, after) < CHANGED:
                problems.append(f"{what}: moving its {label} changed nothing")
    return problems


def check_page(
    browser, base: str, rel: str, branch: str, full_page: bool
) -> list[str]:
    problems, errors, sent = [], [], []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "console",
        lambda m: (
            m.type == "error"
            and not m.location.get("url", "").endswith("/favicon.ico")
            and errors.append(f"console: {m.text}")
        ),
    )
    offline(page, base, sent)
    url, target = urljoin(base, rel), redirect_target(rel)
    page.goto(url, wait_until="load")
    if target:  # check the page the redirect lands on, once it has landed
        page.wait_for_url(
            urljoin(url, target), wait_until="load", timeout=20_000
        )
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && "
        "window.MathJax.startup.promise)",
        timeout=20_000,
    )
    page.evaluate("() => window.MathJax && window.MathJax.startup.promise")
    page.wait_for_timeout(300)
    info = page.evaluate("""() => ({
        math: document.querySelectorAll('.math').length,
        typeset: [...document.querySelectorAll('.math')].filter(
            m => m.querySelector('mjx-container') ||
                m.tagName === 'MJX-CONTAINER').length,
        merror: document.querySelectorAll(
            'mjx-merror, [data-mjx-error]').length,
        raw: [...document.querySelectorAll('article p, article li')].filter(
            e => /\\$\\$|\\\\\\(|\\\\\\[|\\\\begin\\{/.test(
                e.innerText)).length,
        images: [...document.images].filter(
            i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        proofs: document.querySelectorAll('div.proof').length,
        exercises: document.querySelectorAll('div.exercise').length,
        colab: [...document.querySelectorAll('a')].map(a => a.href).filter(
            h => h.includes('colab.research.google.com')),
    })""")
    layout = page.evaluate(LAYOUT)
    name = Path(rel).stem
    if layout["overflow"]:
        problems.append(
            f"{len(layout['overflow'])} blocks wider than the page, e.g. "
            f"{layout['overflow'][:3]}"
        )
    if layout["wide_images"]:
        problems.append(
            f"images wider than the page: {layout['wide_images'][:3]}"
        )
    if layout["blank_figures"]:
        problems.append(
            f"{len(layout['blank_figures'])} figure cells without a figure, "
            "e.g. "
            f"{layout['blank_figures'][:3]}"
        )
    if layout["missing_glyphs"]:
        problems.append(
            "characters drawn as missing-glyph boxes: "
            + " ".join(
                f"U+{ord(c):04X} {c!r}" for c in layout["missing_glyphs"]
            )
        )
    if page.locator(".lnpower-interactive").count():
        problems += check_interactive(page, name)
    if errors:
        problems.append(f"JavaScript errors: {errors[:3]}")
    if sent:
        problems.append(f"requests that leave the machine: {sent[:3]}")
    if info["typeset"] != info["math"] or info["merror"] or info["raw"]:
        problems.append(
            f"math: {info['typeset']}/{info['math']} typeset, "
            f"{info['merror']} "
            f"errors, {info['raw']} paragraphs with raw TeX"
        )
    if info["images"]:
        problems.append(f"images not loaded: {info['images'][:3]}")
    n_prf, n_ex = source_counts(name)
    if info["proofs"] < n_prf or info["exercises"] != n_ex:
        problems.append(
            f"boxes: {info['proofs']} theorem-like for {n_prf} directives, "
            f"{info['exercises']} exercises for {n_ex}"
        )
    if name.endswith("_problems"):  # the public edition opens no answers
        if info["colab"]:
            problems.append(f"a problem set opens Colab: {info['colab']}")
    elif (ROOT / "book" / f"{name}.ipynb").exists():
        want = f"/blob/{branch}/book/{name}.ipynb"
        if not any(h.endswith(want) for h in info["colab"]):
            problems.append(f"no Colab link ending in {want}: {info['colab']}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)
    page.close()
    return problems


def check_pages(
    pages: list[str], base: str, branch: str, full_page: bool
) -> dict:
    """Problems of each page, checked one after another in a browser of this
    thread's own."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        found = {
            rel: check_page(browser, base, rel, branch, full_page)
            for rel in pages
        }
        browser.close()
    return found


def main(argv: list[str]) -> int:
    from lnbook.colab import repository

    full_page = "--full-page" in argv
    argv = [a for a in argv if a != "--full-page"]
    if not (HTML / "index.html").exists():
        print("no built book: run make book first")
        return 1
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium")
        return 1
    _, branch = repository(ROOT / "_config.yml")
    t0 = time.perf_counter()
    pages = argv or ["index.html"] + sorted(
        str(p.relative_to(HTML)) for p in (HTML / "book").glob("*.html")
    )
    server = serve()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    with ThreadPoolExecutor(2) as pool:
        halves = pool.map(
            lambda part: check_pages(part, base, branch, full_page),
            [pages[0::2], pages[1::2]],
        )
        problems = {
            rel: found for half in halves for rel, found in half.items()
        }
    server.shutdown()
    failures = 0
    for rel in pages:
        print(("FAIL " if problems[rel] else "ok   ") + rel)
        for p in problems[rel]:
            print("     " + p)
        failures += bool(problems[rel])
    links = check_links() + [
        f"the browser requested a missing file: {m}" for m in MISSING
    ]
    for p in links:
        print("FAIL " + p)
    print(
        f"{len(pages) - failures} passed, {failures + len(links)} failed "
        f"({len(pages)} pages, link check over "
        f"{sum(1 for _ in HTML.rglob('*.html'))} files, "
        f"{time.perf_counter() - t0:.0f} s; screenshots in "
        f"{SHOTS.relative_to(ROOT)})"
    )
    return 1 if failures or links else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
