"""web/static/markdown.js on crafted answers: the heading parser is linear.

Runs the renderer's parser in Node (no browser, no server). A heading line
with a long run of spaces took the old regex quadratic time (19 s for 50,000
spaces); the limit below is a hang detector, not a benchmark.
"""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKDOWN = os.path.join(ROOT, "web", "static", "markdown.js")


def parse(text, timeout=60):
    script = ("require(process.argv[1]); const t = require('fs').readFileSync(0, 'utf8');"
              "process.stdout.write(JSON.stringify(globalThis.Ragd.parseMarkdown(t)));")
    out = subprocess.run(["node", "-e", script, MARKDOWN], input=text, capture_output=True, text=True,
                         timeout=timeout, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("line,level,text", [
    ("# Title", 1, "Title"),
    ("## Title ##", 2, "Title"),
    ("###   spaced   ", 3, "spaced"),
    ("# a #b", 1, "a #b"),
    ("  ### x ###   ", 3, "x"),
    ("#", 1, ""),
    ("# #", 1, ""),
])
def test_headings(line, level, text):
    [block] = parse(line)
    assert block["t"] == "h" and block["level"] == level
    assert "".join(c.get("v", "") for c in block["c"]) == text


@pytest.mark.parametrize("line", ["#nope", "####### seven"])
def test_not_headings(line):
    assert parse(line)[0]["t"] == "p"


@pytest.mark.parametrize("crafted", [
    "# a" + " " * 200000 + "b",
    "# a" + " \t" * 100000 + "#b",
    "#" + " " * 200000 + "#" * 10 + "x",
], ids=["spaces", "tabs-and-hash", "spaces-then-hashes"])
def test_crafted_heading_lines_parse_in_linear_time(crafted):
    blocks = parse(crafted, timeout=20)  # the quadratic parser needs minutes
    assert blocks[0]["t"] == "h"
