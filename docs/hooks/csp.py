"""A Content-Security-Policy for every page, as a <meta> tag (static hosts cannot be relied on for headers).

Scripts: only files from the site itself, plus the few inline scripts that
Material writes into each page, each allowed by its own sha256 (computed from
the final HTML, so a changed or injected inline script is refused).
WebAssembly compilation ('wasm-unsafe-eval') is what Pyodide needs, and in CDN
mode the Pyodide CDN is allowed too. The calculators' Hub lookup (assets/chapter2/hub.js, from the page,
only when a reader asks) may connect to the Hub's hosts (`HUB_HOSTS`) and to no other; a site built with
the Hub off (extra.hub: false, CHAPTER2_HUB=off) allows none of them. Styles allow inline attributes, which
Material and mermaid use. Nothing may be framed, posted or embedded.

One policy for the whole site (one_policy, after every page is written): Material's instant navigation swaps
a page's content into the document it keeps, and runs the inline scripts of the new content again under the
policy already in force, the first page's; a page's own policy, added to <head> by the swap, could only narrow
it further (a meta policy cannot be taken back). So every page carries the same policy, allowing the inline
scripts of all pages: a page reached by a click runs what it would run when loaded.

The Web Workers that run Python are same-origin scripts; they follow the
policy of their own response, which on a static host is the host's default.
A worker runs pyodide.js and pyodide.asm.js from blob: URLs of the bytes it
fetched (and, from a CDN, checked by hash): a host that sends a
Content-Security-Policy header with worker.js must allow blob: in script-src
there. The pages' policy needs nothing for it (no blob: worker, no eval).
"""

from __future__ import annotations

import base64
import hashlib
import re

from pathlib import Path
from urllib.parse import urlsplit

from pyodide_files import cdn_url

INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)

# Where a lookup's requests may go: the Hub itself, and the hosts it redirects a large (LFS or Xet) file's
# download to. huggingface.co serves /<id>/resolve/<revision>/<path>; for a file in Xet storage it answers 302
# to cas-bridge.xethub.hf.co (the Hub's own redirects, as stored copies of resolve URLs show: "Found.
# Redirecting to https://cas-bridge.xethub.hf.co/xet-bridge-us/..."); the Hub's machine-readable list of its
# hosts, https://huggingface.co/.well-known/meta.json (pointed to by huggingface/hub-docs pull request 2727 for
# firewall allowlists), names its LFS domains cdn-lfs.hf.co, cdn-lfs-us-1.hf.co, cdn-lfs-eu-1.hf.co,
# transfer.xethub.hf.co, transfer.xethub-eu.hf.co and its CDN domains under cdn.hf.co (aws.cdn.hf.co,
# us.aws.cdn.hf.co, us.gcp.cdn.hf.co, ...), which hub-docs pull request 2628 lists for downloads too.
HUB_HOSTS = (
    "https://huggingface.co",
    "https://cas-bridge.xethub.hf.co",
    "https://cdn-lfs.hf.co",
    "https://cdn-lfs-us-1.hf.co",
    "https://cdn-lfs-eu-1.hf.co",
    "https://transfer.xethub.hf.co",
    "https://transfer.xethub-eu.hf.co",
    "https://*.cdn.hf.co",
)


def policy(inline_scripts: list[str], *, cdn: bool, hub: bool = True) -> str:
    hashes = sorted({"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in inline_scripts})
    parts = urlsplit(cdn_url())
    cdn_src = [f"{parts.scheme}://{parts.netloc}{parts.path}"] if cdn else []
    directives = {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'wasm-unsafe-eval'", *hashes, *cdn_src],
        "worker-src": ["'self'"],
        "connect-src": ["'self'", *cdn_src, *(HUB_HOSTS if hub else ())],
        "img-src": ["'self'", "data:"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "font-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'none'"],
    }
    return "; ".join(f"{k} {' '.join(v)}" for k, v in directives.items())


def add_policy(html: str, *, cdn: bool, hub: bool = True) -> str:
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(INLINE_SCRIPT.findall(html), cdn=cdn, hub=hub)}">'
    return html.replace("<head>", "<head>\n" + meta, 1) if "<head>" in html else html


META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">')


def one_policy(site_dir: Path, *, cdn: bool, hub: bool = True) -> str:
    """Give every page of the built site (each HTML file with a policy) the same policy, allowing the inline
    scripts of all of them; returns it."""
    pages = {}
    for path in sorted(site_dir.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        if META.search(text):
            pages[path] = text
    site = policy([s for text in pages.values() for s in INLINE_SCRIPT.findall(text)], cdn=cdn, hub=hub)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{site}">'
    for path, text in pages.items():
        path.write_text(META.sub(lambda _: meta, text, count=1), encoding="utf-8")
    return site
