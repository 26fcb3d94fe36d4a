"""`pages.json` cannot make the index rebuild touch a file outside the site, link a script, or stop with a raw error.

The hostile entries are the issue's probes: a page path out of the site folder (relative, absolute, through a
symlink) with a title whose newlines would be written into the target, an HTML file in the site that actlab did not
render, a `javascript:` target that exists as a folder, and entries of the wrong shape.
"""

from __future__ import annotations

import json
import re

import pytest

from actlab.site import report
from actlab.site.inputs import safe_href
from actlab.site.pages import blocks

MARK = '<meta name="generator" content="actlab">'
TITLE = "Owned\nexport PATH=/tmp/evil:$PATH\n"


def _site(tmp_path, entries: list) -> report.SiteConfig:
    """A site folder with one page actlab rendered (`good.html`) and `entries` after it in `pages.json`."""
    out = tmp_path / "site"
    out.mkdir(parents=True)
    (out / "good.html").write_text(f"<html><head>{MARK}<title>x</title></head><body><main>good</main></body></html>")
    good = {"name": "good", "title": "Good page", "html": "good.html", "source": "good.ipynb"}
    (out / "pages.json").write_text(json.dumps([good, *entries]))
    return report.SiteConfig(notebooks_dir=tmp_path, runs_dir=tmp_path / "runs", out_dir=out)


def _entry(name: str, html, title: str = TITLE) -> dict:
    return {"name": name, "title": title, "html": html, "source": "x.ipynb"}


def _nav_hrefs(path) -> list[str]:
    nav = re.search(r'<nav class="actlab-nav".*?</nav>', path.read_text(), flags=re.S).group(0)
    return re.findall(r'href="([^"]*)"', nav)


def test_no_entry_can_make_the_index_rewrite_a_file_outside_the_site(tmp_path):
    victims = {name: tmp_path / name for name in ("bashrc", "victim.html", "linked.html")}
    for victim in victims.values():
        victim.write_text(f"<html><head>{MARK}</head><body>mine</body></html>")
    entries = [
        _entry("up", "../bashrc"),
        _entry("up-html", "../victim.html"),
        _entry("absolute", str(victims["victim.html"])),
        _entry("symlink", "link.html"),
        _entry("foreign", "foreign.html"),  # in the site, but not a page actlab rendered
    ]
    config = _site(tmp_path, entries)
    (config.out_dir / "link.html").symlink_to(victims["linked.html"])
    (config.out_dir / "foreign.html").write_text("<html><head></head><body>a page of my own</body></html>")
    before = {path: path.read_text() for path in [*victims.values(), config.out_dir / "foreign.html"]}
    report.refresh_index(config)
    assert {path: path.read_text() for path in before} == before
    index = (config.out_dir / "index.html").read_text()
    for target in ("../bashrc", "../victim.html", "link.html", "foreign.html", str(victims["victim.html"])):
        assert f'href="{target}"' not in index
    assert _nav_hrefs(config.out_dir / "good.html") == ["index.html", "good.html"]


def test_a_javascript_target_is_never_a_link_in_the_nav_or_the_index(tmp_path):
    config = _site(tmp_path, [_entry("js", "javascript:alert(1)//a.html", title="Click")])
    (config.out_dir / "javascript:alert(1)").mkdir()  # so that the target exists as a file under the site
    (config.out_dir / "javascript:alert(1)" / "a.html").write_text(f"<html><head>{MARK}</head><body></body></html>")
    report.refresh_index(config)
    for page in ("good.html", "index.html"):
        assert _nav_hrefs(config.out_dir / page) == ["index.html", "good.html"], page
        assert 'href="javascript' not in (config.out_dir / page).read_text().lower(), page


def test_the_nav_bar_passes_every_href_through_the_one_link_check():
    links = [("Index", "index.html"), ("Evil", "javascript:alert(1)"), ("Far", "//evil.example/x"), ("Up", "/\\x")]
    nav = str(blocks().nav(links, "index.html"))
    assert re.findall(r'href="([^"]*)"', nav) == ["index.html"]
    assert "Evil" in nav and "Far" in nav  # shown as text
    assert safe_href("javascript:alert(1)") is None


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (123, "it is a number, not an object"),
        (["good.html"], "it is a list, not an object"),
        ({"name": "n", "title": "t", "source": "s"}, "missing field(s) html"),
        ({**_entry("n", 123)}, "html must be text, got a number 123"),
        ({**_entry("n", {"a": 1})}, 'html must be text, got an object {"a": 1}'),
        ({**_entry("n", "a.html"), "extra": 1}, "unknown field(s) extra"),
        ({**_entry("n", "a.html"), "sweeps": "x"}, "sweeps must be a list of text"),
        ({**_entry("n", "a.html"), "status": "<b>"}, "status '<b>' is not one of ok, failed"),
        ({**_entry("n", "sub/../../x.html")}, "is not a page file name inside the site folder"),
    ],
)
def test_a_malformed_entry_is_skipped_with_one_clear_line(tmp_path, capsys, entry, problem):
    config = _site(tmp_path, [entry])
    report.refresh_index(config)
    assert problem in capsys.readouterr().err
    index = (config.out_dir / "index.html").read_text()
    assert 'href="good.html"' in index  # the other entries are still listed


def test_a_title_is_one_line_of_plain_text(tmp_path):
    config = _site(tmp_path, [])
    (config.out_dir / "two.html").write_text(f"<html><head>{MARK}<title>x</title></head><body></body></html>")
    entries = json.loads((config.out_dir / "pages.json").read_text()) + [_entry("two", "two.html", "A\n<b>B</b>\x07")]
    (config.out_dir / "pages.json").write_text(json.dumps(entries))
    report.refresh_index(config)
    page = (config.out_dir / "two.html").read_text()
    assert "<title>A &lt;b&gt;B&lt;/b&gt; | actlab</title>" in page
    kept = json.loads((config.out_dir / "pages.json").read_text())
    assert [entry["title"] for entry in kept] == ["Good page", "A <b>B</b>"]
