import base64

from fpt.presentation import document as D

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==")


def test_html_is_self_contained_and_escaped():
    blocks = [D.Heading("a <b>"), D.Para("run `x<y`"), D.Table(["h"], [["1 & 2"]]), D.Image(PNG, "i.png", "cap"),
              D.Code("k: v", "cfg")]
    page = D.to_html("T", blocks)
    assert "<h2>a &lt;b&gt;</h2>" in page and "<code>x&lt;y</code>" in page and "<td>1 &amp; 2</td>" in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert "<style>" in page and "<link" not in page and "http" not in page.split("<body>")[1]
    assert "<details><summary>cfg</summary>" in page


def test_markdown_writes_images_beside_it(tmp_path):
    existing = tmp_path / "run" / "a.png"
    existing.parent.mkdir()
    existing.write_bytes(PNG)
    md = D.to_markdown("T", [D.Table(["a|b"], [["1"]]), D.Image(PNG, "new.png", "cap"),
                             D.Image(PNG, "a.png", "old", existing)], tmp_path, tmp_path / "files")
    assert "| a\\|b |" in md
    assert "![cap](files/new.png)" in md and (tmp_path / "files" / "new.png").read_bytes() == PNG
    assert "![old](run/a.png)" in md
