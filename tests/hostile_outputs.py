"""A page rendered by `actlab.notebooks.to_html` from a real executed notebook whose outputs attack the page through
routes the HTML sanitiser alone did not cover (built once per test session; the sanitiser and browser tests).

- image metadata: `IPython.display.Image(png, width="1 onerror=...")` (nbconvert wrote it unquoted), a height
  holding a handler on a JPEG, and `filenames` metadata naming a remote image (loaded from the network);
- links: `//host` and `/\\host` targets in HTML and Markdown outputs (the index refused them, study pages did not);
- a Mermaid output holding markup (nbconvert wrote it unescaped);
- inline CSS that would make a link cover the page: fixed positioning, viewport sizes, a negative margin pulling a
  huge box over the title, an image link of 5000 x 5000 pixels; `url()` and `expression()` values in styles.

Each script payload sets `window.__actlab_injected`, so a browser can tell whether any ran.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from toy_notebook import write_notebook

from actlab import notebooks

EVIL = "https://evil.example/"
REMOTE_IMAGE = "http://127.0.0.1:9/remote.png"
COVERS = ("cover-fixed", "cover-margin", "cover-image")  # ids of the links that try to cover the page
FAR_LINKS = ("far-slashes", "far-backslash", "far-markdown")  # ids of `//host` and `/\host` links

BODY = f'''
import base64
import io

from IPython.display import HTML, Image, Markdown, display, publish_display_data
from PIL import Image as Picture


def encoded(kind):
    buffer = io.BytesIO()
    Picture.new("RGB", (8, 8), (200, 30, 30)).save(buffer, kind)
    return buffer.getvalue()


png, jpeg = encoded("PNG"), encoded("JPEG")
png64 = base64.b64encode(png).decode()
display(Markdown("# Hostile outputs"))
display(Image(png, width="1 onerror=window.__actlab_injected=1"))  # the issue's route: a width from a run record
display(Image(jpeg, format="jpeg", height="2 onload=window.__actlab_injected=2", width=40))
publish_display_data({{"image/png": png64}}, metadata={{"filenames": {{"image/png": "{REMOTE_IMAGE}"}}}})
display(HTML(
    '<a id="cover-fixed" href="{EVIL}" style="display:block;position:fixed;top:0;left:0;width:100vw;'
    'height:100vh;z-index:99;background-color:#fff">fixed</a>'
    '<a id="cover-margin" href="{EVIL}"><div style="display:block;width:1400px;height:2000px;'
    'margin-top:-3000px;padding:500px;font-size:900px;background-color:#fff">margin</div></a>'
    f'<a id="cover-image" href="{EVIL}"><img src="data:image/png;base64,{{png64}}" width="5000" height="5000"></a>'
    '<p style="background-color:url({REMOTE_IMAGE}?css);color:expression(window.__actlab_injected=4);'
    'background:url({REMOTE_IMAGE}?bg)">css urls</p>'
))
display(HTML('<p><a id="far-slashes" href="//evil.example/x">far</a> <a id="far-backslash" href="/\\\\evil.example/x">'
             "far</a></p>"))
display(Markdown('<a id="far-markdown" href="//evil.example/md">far</a>'))
publish_display_data({{"text/vnd.mermaid": "graph TD; A-->B <img src=x onerror=window.__actlab_injected=3>"}})
'''
_built: Path | None = None


def hostile_outputs_page() -> Path:
    """The rendered HTML page (built once per session into a temporary folder)."""
    global _built
    if _built is None:
        root = Path(tempfile.mkdtemp(prefix="actlab-hostile-outputs-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        template = write_notebook(root / "hostile.ipynb", [], BODY)
        executed = notebooks.execute(template, root / "executed.ipynb")
        _built = notebooks.to_html(executed, root / "hostile.html", title="Hostile outputs | actlab")
    return _built
