"""The gallery notebook runs headless with tiny parameters, and the site escapes user strings."""

from __future__ import annotations

import base64
import re

from actlab import notebooks, report
from actlab.io import atomic_write_json


def test_gallery_executes_and_renders_with_embedded_images(repo_root, tmp_path):
    config = report.SiteConfig(
        notebooks_dir=repo_root / "notebooks",
        runs_dir=tmp_path / "runs",
        out_dir=tmp_path / "site",
        only=("00_activation_gallery",),
        parameters={"00_activation_gallery": {"activations": "relu,tanh", "points": 21}},
    )
    pages = report.build_site(config)
    assert [p.status for p in pages] == ["ok"]
    html = (tmp_path / "site" / "00_activation_gallery.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert images, "the gallery must embed its figure"
    assert base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "curves = gallery.curves" not in html  # code hidden by default
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="00_activation_gallery.html"' in index
    # The template is untouched: its code cells have no outputs.
    template = (repo_root / "notebooks" / "00_activation_gallery.ipynb").read_text()
    assert '"outputs": []' in template and "image/png" not in template


def test_index_escapes_claim_text(tmp_path):
    atomic_write_json(
        tmp_path / "runs" / "claims" / "x.json",
        {"claim_id": "x", "statement": "<script>alert(1)</script>", "verdict": "supported"},
    )
    config = report.SiteConfig(notebooks_dir=tmp_path, runs_dir=tmp_path / "runs", out_dir=tmp_path / "site")
    report.build_site(config)
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<script>alert(1)</script>" not in index
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index


def test_execute_refuses_to_overwrite_template(repo_root, tmp_path):
    import pytest

    from actlab.errors import ActlabError

    template = tmp_path / "t.ipynb"
    template.write_text((repo_root / "notebooks" / "00_activation_gallery.ipynb").read_text())
    with pytest.raises(ActlabError, match="overwrite"):
        notebooks.execute(template, template)


def test_index_keeps_pages_built_earlier_while_their_html_exists(tmp_path):
    """`actlab report --only X` rewrites the index: pages an earlier build made must stay linked."""
    from dataclasses import asdict

    site, notebooks_dir = tmp_path / "site", tmp_path / "notebooks"
    notebooks_dir.mkdir()
    site.mkdir()
    (site / "old.html").write_text("<html></html>")
    earlier = [report.Page(name="old", title="Old page", html="old.html", source="old.ipynb")]
    atomic_write_json(site / report.PAGES_MANIFEST, [asdict(page) for page in earlier])
    config = report.SiteConfig(notebooks_dir=notebooks_dir, runs_dir=tmp_path / "runs", out_dir=site, only=("x",))

    assert report.build_site(config) == []  # nothing built this time
    assert 'href="old.html"' in (site / "index.html").read_text()
    assert [page.name for page in report.load_pages(site)] == ["old"]

    (site / "old.html").unlink()  # a page whose HTML is gone is no longer listed
    report.build_site(config)
    assert "old.html" not in (site / "index.html").read_text()
    assert report.load_pages(site) == []

    (site / report.PAGES_MANIFEST).write_text("{not json")  # unreadable: this build's pages only, no crash
    report.build_site(config)
    assert report.load_pages(site) == []
