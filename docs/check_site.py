"""Check the built documentation site in a real browser.

    python docs/check_site.py SCREENSHOT_FOLDER [--site build/site] [--chromium /usr/bin/chromium]

Serves the built site on 127.0.0.1 (a free port), loads every HTML page in headless Chromium (Debian's
``chromium``, driven by Playwright) and fails (exit status 1) on:

- a console error or an uncaught exception on a page;
- a request of the site that answers an HTTP error (a missing image, stylesheet or script), or an image that
  does not decode;
- an internal link to a page or file that does not exist, or to an ``#anchor`` its page does not have;
- the site's search not finding ``gru_step_backward``.

It saves full-page screenshots of three pages (the home page, a tutorial, an API page) into
SCREENSHOT_FOLDER, which CI keeps as artefacts.  Exit status 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import pathlib
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SEARCH_TERM = "gru_step_backward"
TUTORIAL = "02_gru_backward_and_gradient_check"
SCREENSHOTS = {"home.png": "index.html", "tutorial.png": f"tutorials/{TUTORIAL}.html",
               "api.png": "api/tinyalgo.cores.html"}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: pathlib.Path):
    """An HTTP server of ``site`` on 127.0.0.1, in a daemon thread; returns (server, base URL)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@functools.cache
def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def check(site: pathlib.Path, shots: pathlib.Path, chromium: str) -> int:
    from playwright.sync_api import sync_playwright

    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if not p.relative_to(site).parts[0].startswith(("_sources", "_static")))
    server, base = serve(site)
    problems: list[str] = []
    ids: dict[str, set] = {}                 # page URL (no fragment) -> the ids on it
    links: dict[str, set] = {}               # link target (with fragment) -> the pages that link to it
    images = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            current = {"url": ""}
            page.on("console", lambda m: m.type == "error" and problems.append(
                f"{current['url']}: console error: {m.text} ({m.location.get('url', '')})"))
            page.on("pageerror", lambda e: problems.append(f"{current['url']}: uncaught exception: {e}"))
            page.on("response", lambda r: r.url.startswith(base) and r.status >= 400 and problems.append(
                f"{current['url']}: {r.url} answered HTTP {r.status}"))
            page.on("requestfailed", lambda r: r.url.startswith(base) and problems.append(
                f"{current['url']}: {r.url} failed: {r.failure}"))
            for rel in pages:
                url = base + rel
                current["url"] = rel
                page.goto(url, wait_until="load")
                ids[url] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
                ids[url] |= set(page.eval_on_selector_all("a[name]", "els => els.map(e => e.name)"))
                for src, ok in page.eval_on_selector_all(
                        "img", "els => els.map(i => [i.currentSrc || i.src, i.complete && i.naturalWidth > 0])"):
                    images += 1
                    if not ok and (not src.startswith(base) or status(src) != 200):
                        problems.append(f"{rel}: image {src} does not load")
                for href in page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"):
                    if href.startswith(base):
                        links.setdefault(href, set()).add(rel)
            # The search page: Sphinx's index, queried as a reader would.
            current["url"] = "search.html"
            page.goto(base + "search.html?q=" + urllib.parse.quote(SEARCH_TERM), wait_until="load")
            try:
                page.wait_for_selector("#search-results li a", timeout=30000)
                found = page.eval_on_selector_all("#search-results li a", "els => els.map(a => a.textContent)")
            except Exception as e:  # noqa: BLE001 - a timeout is a failure of the check, reported as such
                found = []
                problems.append(f"search.html: no result for {SEARCH_TERM} ({type(e).__name__})")
            hits = [f for f in found if SEARCH_TERM in f]
            if found and not hits:
                problems.append(f"search.html: {len(found)} results for {SEARCH_TERM}, none names it: {found[:5]}")
            shots.mkdir(parents=True, exist_ok=True)
            for name, rel in SCREENSHOTS.items():
                current["url"] = rel
                page.goto(base + rel, wait_until="load")
                page.screenshot(path=str(shots / name), full_page=True)
            browser.close()
        for href, sources in sorted(links.items()):       # while the server still serves the site
            target, _, fragment = href.partition("#")
            where = ", ".join(sorted(sources)[:3]) + (" ..." if len(sources) > 3 else "")
            if target not in ids:
                if status(target) != 200:
                    problems.append(f"{where}: dead link {href[len(base):]}")
            elif fragment and urllib.parse.unquote(fragment) not in ids[target]:
                problems.append(f"{where}: link to a missing anchor {href[len(base):]}")
    finally:
        server.shutdown()
    for p in problems:
        print(p)
    print(f"{len(pages)} pages loaded in {chromium}; {len(links)} internal links and {images} images checked; "
          f"search for {SEARCH_TERM}: {len(hits)} of {len(found)} results name it "
          f"({', '.join(hits[:3])}); screenshots: {', '.join(str(shots / n) for n in SCREENSHOTS)}")
    print(f"{len(problems)} problems" if problems else "no problems")
    return 1 if problems else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("screenshots", metavar="SCREENSHOT_FOLDER", help="where the three screenshots are saved")
    parser.add_argument("--site", default="build/site", help="the built site (default build/site)")
    parser.add_argument("--chromium", default="/usr/bin/chromium",
                        help="the Chromium executable (default /usr/bin/chromium, Debian's chromium)")
    args = parser.parse_args(argv)
    site = pathlib.Path(args.site)
    if not (site / "index.html").is_file():
        parser.error(f"{site}: no index.html; build the site first (sphinx-build -b html docs {site})")
    if not pathlib.Path(args.chromium).is_file():
        parser.error(f"{args.chromium}: no such file; install Debian's chromium (apt-get install -y chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        parser.error("Playwright is not installed; pip install -e \".[docs]\"")
    return check(site, pathlib.Path(args.screenshots), args.chromium)


if __name__ == "__main__":
    sys.exit(main())
