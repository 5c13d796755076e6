"""MkDocs hook for the reading experience: notebook pages and accessibility fixes to the theme's markup.

Notebooks (docs/notebooks/*.py, jupytext percent format, rendered and executed by mkdocs-jupyter):

- No request leaves the site: nbconvert's template writes a MathJax loader (a
  CDN URL, or an empty `src`) and a module script that imports mermaid from a
  CDN when an output holds a diagram. These notebooks use neither, so both are
  removed, and the build fails if a notebook page still loads anything remote.
- Instant navigation runs a page's inline scripts again on every visit: nbconvert's listener that shows a
  cell's "copied" notice is added once per document (once_per_document), not once per visit.
- Download links: the jupytext source (copied next to the page by
  mkdocs-jupyter's `include_source`) and the same notebook as `.ipynb`
  (without outputs: run it to get your own), written here.

Every page: Material's search overlay is a `role="dialog"` without a name; it
gets one (axe rule aria-dialog-name).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

MATHJAX = re.compile(r"[ \t]*<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->\n?", re.S)
MODULE_SCRIPT = re.compile(r"<script type=\"module\">.*?</script>\n?", re.S)
REMOTE_LOAD = re.compile(r"""(?:\bsrc\s*=\s*["']?|\bimport\s*\(\s*["']|@import\s+(?:url\()?["']?|url\(\s*["']?)(?:https?:)?//""", re.I)


def is_notebook(page) -> bool:
    uri = page.file.src_uri
    return uri.startswith("notebooks/") and uri.endswith(".py")


def strip_remote_loaders(html: str) -> str:
    """The notebook HTML without nbconvert's CDN loaders; raises if a remote load remains."""
    html = MATHJAX.sub("", html)
    html = MODULE_SCRIPT.sub(lambda m: "" if "mermaid" in m.group(0) else m.group(0), html)
    left = REMOTE_LOAD.search(html)
    if left:
        start = max(0, left.start() - 80)
        raise PluginError(f"notebook page still loads something remote: ...{html[start:left.end() + 80]}...")
    return html


COPY_NOTICE = re.compile(r"<script>(\s*document\.addEventListener\('clipboard-copy',.*?)</script>", re.S)


def once_per_document(html: str) -> str:
    """nbconvert's copy-notice listener, added only if this document has none yet (a window flag)."""
    return COPY_NOTICE.sub(lambda m: "<script>\nif (!window.chapter2CopyNotice) {\n  window.chapter2CopyNotice = true;"
                           + m.group(1) + "}\n</script>", html)


def _download_links(name: str) -> str:
    stem = name.removesuffix(".py")
    return (f'<p class="c2-nb-download">Download: <a href="{stem}.ipynb" download>notebook (.ipynb)</a> · '
            f'<a href="{name}" download>jupytext source (.py)</a>. Needs <code>numpy</code> and '
            f'<code>chapter2</code>; the outputs below are from the machine that built this site.</p>\n')


def on_page_content(html, page, config, files):
    if not is_notebook(page):
        return html
    html = once_per_document(strip_remote_loaders(html))
    links = _download_links(Path(page.file.src_uri).name)
    end = html.find("</h1>")  # right under the notebook's title
    return html[:end + 5] + "\n" + links + html[end + 5:] if end >= 0 else links + html


SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'


def _name_search_dialog(html: str) -> str:
    return html.replace(SEARCH_DIALOG, SEARCH_DIALOG[:-1] + ' aria-label="Search">', 1)


def on_post_template(output, template_name, config):
    return _name_search_dialog(output)  # 404.html is a theme template, not a page


def on_post_page(output, page, config):
    output = _name_search_dialog(output)
    if is_notebook(page):
        import jupytext

        src = Path(page.file.abs_src_path)
        dest = Path(page.file.abs_dest_path).parent / (src.stem + ".ipynb")
        dest.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(jupytext.read(src), str(dest), fmt="ipynb")
    return output
