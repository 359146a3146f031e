#!/usr/bin/env bash
# End to end: the HTML review in a real browser.  `printkbot test` of a
# fixture patch stores a review, `printkbot report ID --html` renders it,
# headless Chromium draws it (a screenshot: a real PNG of the window's size
# in which the before and after cells' colours show) and dumps the DOM it
# built: the side-by-side table.diff with the old and the new text.  A
# second fixture prints `<script>alert(1)</script></td>` at boot and has
# `<script>` in its subject: in the browser's DOM that is text in its cell
# and in the title, and no script element exists.
source "$(dirname "$0")/lib.sh"
data=tests/data/test

source "$(dirname "$0")/browser.sh"
browser_need
lab_setup

# Each test stores one review; its id is the newest.
review() {  # name patch: test it, render its review as $work/NAME.html
	keep "$1" json "$bot" test --json "$2"
	local id
	id=$(sqlite3 "$PRINTKBOT_DB" "select max(id) from reviews")
	[ -n "$id" ] || fail "$1: no review stored" "$work/$1.err"
	"$bot" report "$id" --html "$work/$1.html" >"$work/$1.txt" || fail "$1: report $id --html" "$work/$1.err"
	browser --dump-dom "file://$work/$1.html" >"$work/$1.dom" ||
		fail "$1: chromium --dump-dom failed or hung (a script of the page waiting on alert?)" "$work/$1.html"
}
review text-change "$data/text-change.patch"
review hostile "$data/html-hostile.patch"

browser --screenshot="$work/text-change.png" --window-size=1280,1600 "file://$work/text-change.html" >/dev/null ||
	fail "chromium --screenshot" "$work/chromium.log"

python3 - <<'PY'
import struct, zlib
from html.parser import HTMLParser
import e2elib
from e2elib import check, done, path

class Dom(HTMLParser):
    """The elements of a page: each as [tag, attrs, text inside it]; text
    is what the browser shows (entities decoded), so markup that stayed
    text reads as markup here and never as an element."""
    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.elems, self.open = [], []
        self.feed(html)
    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elems.append(e)
        self.open.append(e)
    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break
    def handle_data(self, data):
        for e in self.open:
            e[2] += data
    def cells(self, cls):
        return [e[2] for e in self.elems if e[0] == "td" and cls in e[1].get("class", "").split()]
    def tags(self, tag):
        return [e for e in self.elems if e[0] == tag]

dom = Dom(e2elib.text("text-change.dom"))
tables = [e for e in dom.tags("table") if "diff" in e[1].get("class", "").split()]
check(tables, "text-change: the browser's DOM holds a table.diff (%d)" % len(tables))
old, new = dom.cells("old"), dom.cells("new")
check(any("available for PCI devices" in c for c in old) and any("free for PCI devices" in c for c in new),
      "text-change: the before cell says 'available for PCI devices', the after cell 'free for PCI devices'")
heads = [t[2].strip() for t in dom.tags("th")]
check(heads[:2] == ["before", "after"], "text-change: before and after columns (%s)" % heads)

def png_pixels(name):
    """(width, height, set of RGB colours) of an 8-bit RGB or RGBA PNG,
    scanlines unfiltered here (the standard library has no PNG reader)."""
    data = open(path(name), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = ihdr
    assert depth == 8 and ctype in (2, 6), "PNG depth %d colour type %d" % (depth, ctype)
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, colours

try:
    w, h, colours = png_pixels("text-change.png")
    size = len(open(path("text-change.png"), "rb").read())
    check((w, h) == (1280, 1600) and size > 10000 and len(colours) > 16,
          "screenshot: a %dx%d PNG of %d bytes, %d colours" % (w, h, size, len(colours)))
    # td.old is #fee, td.new #efe (templates/review.html): the diff was drawn
    check(b"\xff\xee\xee" in colours and b"\xee\xff\xee" in colours,
          "screenshot: the before (#fee) and after (#efe) cells are on it")
except (AssertionError, OSError, TypeError, zlib.error) as e:
    check(False, "screenshot: a PNG (%s)" % e)

hostile = "<script>alert(1)</script></td>"
raw = e2elib.text("hostile.dom")
dom = Dom(raw)
check(dom.tags("table") and not dom.tags("script"),
      "hostile: the browser built the page, and no script element in it (%d)" % len(dom.tags("script")))
new = dom.cells("new")
check(any(hostile + " for PCI devices" in c for c in new),
      "hostile: the after cell shows the boot line as text, whole (%s)" % [c[:90] for c in new])
check("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/td&gt;" in raw, "hostile: escaped in the serialised DOM")
heads = [t for t in dom.tags("td") if t[1].get("colspan") == "2"]
check(len(heads) == len(dom.cells("old")) == len(new) > 0,
      "hostile: each change a heading row and a before and after cell, no more (%d %d %d)"
      % (len(heads), len(dom.cells("old")), len(new)))
title = dom.tags("title")
check(title and "<script>alert(2)</script>" in title[0][2] and any("<script>alert(2)</script>" in h[2] for h in dom.tags("h1")),
      "hostile: the subject's <script> is text in the title and heading")
done()
PY
passed
