"""A tiny document model rendered twice: self-contained HTML and Markdown.

Reports are built once as a list of blocks, so the HTML page and its Markdown twin can
never say different things. HTML embeds images as base64 data URIs and carries its CSS
inline, so the one file can be mailed or archived; Markdown links image files instead.
"""

from __future__ import annotations

import base64
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path

from fpt import rundir


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str  # plain text; `backticks` become code


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Image:
    png: bytes
    name: str  # file name for the Markdown twin (report_files/NAME)
    caption: str = ""
    path: Path | None = None  # an existing file the Markdown links to instead of a copy
    half: bool = False  # HTML: half the page width, so two sit side by side


@dataclass(frozen=True)
class Code:
    text: str
    summary: str | None = None  # collapsed under this line in HTML when given


Block = Heading | Para | Table | Image | Code

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1.5em; color: #1d1d1f; }
h1 { font-size: 1.6em; border-bottom: 2px solid #ddd; padding-bottom: .3em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #eee; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .88em; }
th, td { border: 1px solid #d0d0d0; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
tr:nth-child(even) td { background: #fafafa; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figure.half { display: inline-block; width: 48%; margin-right: 1%; vertical-align: top; }
figcaption { font-size: .85em; color: #555; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; font-size: .85em; }
code { background: #f0f0f0; padding: 0 .25em; border-radius: 3px; }
details { margin: .4em 0; }
"""

_CODE_SPAN = re.compile(r"`([^`]+)`")


def _inline_html(text: str) -> str:
    return _CODE_SPAN.sub(lambda m: f"<code>{m[1]}</code>", html.escape(text))


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


GENERATOR = '<meta name="generator" content="fpt report">'  # how fpt knows a report.html as its own
# report.html of fpt before the generator tag began so
OLD_HTML_START = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<meta name="viewport"'


def to_html(title: str, blocks: list[Block]) -> str:
    parts = ["<!DOCTYPE html>", f'<html lang="en"><head><meta charset="utf-8">{GENERATOR}',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            parts.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{html.escape(h)}</th>" for h in block.header)
            body = "".join("<tr>" + "".join(f"<td>{_inline_html(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Image):
            alt = html.escape(block.caption or block.name, quote=True)
            caption = f"<figcaption>{html.escape(block.caption)}</figcaption>" if block.caption else ""
            klass = ' class="half"' if block.half else ""
            parts.append(f'<figure{klass}><img src="{data_uri(block.png)}" alt="{alt}">{caption}</figure>')
        elif isinstance(block, Code):
            pre = f"<pre>{html.escape(block.text)}</pre>"
            parts.append(f"<details><summary>{html.escape(block.summary)}</summary>{pre}</details>"
                         if block.summary else pre)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def md_cell(text: object) -> str:
    """One markdown table cell: a '|' escaped, line breaks made spaces (a row or column name holding them would
    otherwise break the table)."""
    return str(text).replace("|", "\\|").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")



def to_markdown(title: str, blocks: list[Block], root: Path, files_dir: Path) -> str:
    """Markdown for a file in ``root``; images without a file of their own are written to ``files_dir``."""
    lines = [f"# {title}", ""]
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, Para):
            lines += [block.text, ""]
        elif isinstance(block, Table):
            lines.append("| " + " | ".join(map(md_cell, block.header)) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(map(md_cell, row)) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, Image):
            path = block.path
            if path is None:
                files_dir.mkdir(parents=True, exist_ok=True)
                path = files_dir / block.name
                rundir.write_bytes(path, block.png)  # atomic: a stopped report leaves no half image
            rel = Path(os.path.relpath(path, root)).as_posix()
            lines += [f"![{block.caption or block.name}]({rel})", ""]
        elif isinstance(block, Code):
            if block.summary:
                lines += [f"{block.summary}:", ""]
            lines += ["```", block.text.rstrip("\n"), "```", ""]
    return "\n".join(lines)
