"""A Content-Security-Policy for every page, as a <meta> tag (static hosts cannot be relied on for headers).

Scripts: only files from the site itself, plus the few inline scripts that
Material writes into each page, each allowed by its own sha256 (computed from
the final HTML, so a changed or injected inline script is refused).
WebAssembly compilation ('wasm-unsafe-eval') is what Pyodide needs, and in CDN
mode the Pyodide CDN is allowed too. Styles allow inline attributes, which
Material and mermaid use. Nothing may be framed, posted or embedded.

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

from urllib.parse import urlsplit

from pyodide_files import cdn_url

INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def policy(inline_scripts: list[str], *, cdn: bool) -> str:
    hashes = sorted({"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in inline_scripts})
    parts = urlsplit(cdn_url())
    cdn_src = [f"{parts.scheme}://{parts.netloc}{parts.path}"] if cdn else []
    directives = {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'wasm-unsafe-eval'", *hashes, *cdn_src],
        "worker-src": ["'self'"],
        "connect-src": ["'self'", *cdn_src],
        "img-src": ["'self'", "data:"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "font-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'none'"],
    }
    return "; ".join(f"{k} {' '.join(v)}" for k, v in directives.items())


def add_policy(html: str, *, cdn: bool) -> str:
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(INLINE_SCRIPT.findall(html), cdn=cdn)}">'
    return html.replace("<head>", "<head>\n" + meta, 1) if "<head>" in html else html
