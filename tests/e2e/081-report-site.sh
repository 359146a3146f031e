#!/usr/bin/env bash
# End to end: `printkbot report --site` in a real browser, no kernel built.
# A store of 40 reviewed patches is filled through the store's API
# (bench/store-fill.c, with the review models `test` keeps), one of them
# made hostile with sqlite3: its subject holds <script>, a quote that would
# end an attribute ("onmouseover=) and a javascript: link, its boot line a
# </td><script>, its Message-ID javascript:.  The site is written, then
# headless Chromium (installed as 080 does) runs its pages and dumps the DOM
# it built: the index shows rows drawn by site.js, a verdict chosen in the
# filter (through the address, #verdict=..., which sets the select and fires
# its change event as a reader's choice does) changes the rows shown and
# leaves only that verdict, the file and author filters do the same, the
# hostile series' page shows its review (table.diff, the changed words
# marked) with the hostile strings as text and no script, handler or
# javascript: link, and a page whose script called alert() would hang
# --dump-dom (bounded: a failure).  A second run writes nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/browser.sh"

dump() {  # name url: the DOM Chromium built, in $work/NAME.dom
	browser --virtual-time-budget=5000 --dump-dom "$2" >"$work/$1.dom" ||
		fail "$1: chromium --dump-dom failed or hung (a script of the page waiting on alert?)" "$work/chromium.log"
}

browser_need

# store-fill, built as bench/store.sh builds it
flag() { make -s --no-print-directory -f Makefile -f - "print-$1" <<<'print-%: ; @echo $($*)'; }
make -s bot/libprintkbot.a printkbot
$(flag CC) $(flag CFLAGS) -Ibot -o "$work/store-fill" bench/store-fill.c bot/libprintkbot.a $(flag LDLIBS)
"$work/store-fill" "$PRINTKBOT_DB" 40 10 models 2>"$work/fill.err" || fail "store-fill" "$work/fill.err"

# patch 7 made hostile, its newest review's model with it
subject='[PATCH] tty: <script>alert(1)</script> "onmouseover=alert(2) x=" <a href="javascript:alert(3)">click</a>'
line='serial: <script>alert(4)</script></td><td onmouseover=alert(5)> free'
sqlite3 "$PRINTKBOT_DB" <<SQL
UPDATE patches SET subject = '${subject//\'/\'\'}', author_name = '<img src=x onerror=alert(6)>',
	message_id = 'javascript:alert(7)' WHERE id = 7;
UPDATE reviews SET model = json_set(model, '$.subject', '${subject//\'/\'\'}',
	'$.console[0].new_side', '${line//\'/\'\'}', '$.console[0].old_side', 'serial: old words')
	WHERE test_id = (SELECT id FROM tests WHERE patch_id = 7);
SQL

cat >"$work/site.conf" <<'EOF'
[site]
url = https://printkbot.example.org/
source_url = https://git.example.org/linux/tree/{path}?id={commit}#n{line}

[source linux-kernel]
type = mbox
path = /nonexistent
archive = https://lore.kernel.org/lkml/
EOF
keep site txt "$bot" report --config "$work/site.conf" --site "$work/site"
[ "$(cat "$work/site.rc")" = 0 ] || fail "report --site" "$work/site.err"
keep again txt "$bot" report --config "$work/site.conf" --site "$work/site"

base=file://$work/site
dump index "$base/index.html"
dump build-failed "$base/index.html#verdict=build-failed"
dump no-churn "$base/index.html#verdict=no-churn"
dump file "$base/index.html#file=kernel/sched/"
dump author "$base/index.html#author=Number42"
dump hostile "$base/series/p7.html"
dump files "$base/files.html"

python3 - <<'PY'
import re
from html.parser import HTMLParser
import e2elib
from e2elib import check, done, text

class Dom(HTMLParser):
    """Elements as [tag, attrs, text inside]: text as the browser shows it
    (entities decoded), so markup that stayed text is never an element."""
    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.elems, self.open = [], []
        self.feed(html)
    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elems.append(e)
        if tag not in ("img", "input", "meta", "link", "br", "hr", "option"):
            self.open.append(e)
    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break
    def handle_data(self, data):
        for e in self.open:
            e[2] += data
    def tags(self, tag):
        return [e for e in self.elems if e[0] == tag]
    def rows(self):
        """The series rows site.js drew: each its cells' text."""
        body = [e for e in self.elems if e[0] == "tbody" and e[1].get("id") == "rows"]
        out, cells = [], None
        for e in self.elems[self.elems.index(body[0]) + 1:] if body else []:
            if e[0] == "tr":
                cells = []
                out.append(cells)
            elif e[0] == "td" and cells is not None:
                cells.append(e[2])
            elif e[0] in ("tbody", "table") :
                break
        return out

def counted(name):
    d = Dom(text(name + ".dom"))
    count = [e[2] for e in d.elems if e[1].get("id") == "f-count"]
    return d, d.rows(), count[0] if count else ""

site = text("site.txt")
check(re.search(r"40 series \(40 rendered, 40 written\)", site), "report --site: 40 series written (%s)" % site.strip())
again = text("again.txt")
check(re.search(r"\(0 rendered, 0 written\).*\(0 rendered, 0 written\), 0 other pages written", again),
      "a second run renders and writes nothing (%s)" % again.strip())

d, rows, count = counted("index")
check(len(rows) == 40 and count.startswith("40 of 40 series"),
      "index: site.js drew every series (%d rows, '%s')" % (len(rows), count))
form = [e for e in d.elems if e[1].get("id") == "filters"]
check(form and "hidden" not in form[0][1], "index: the filters are shown (JavaScript ran)")

for verdict in ("build-failed", "no-churn"):
    _, vrows, vcount = counted(verdict)
    check(0 < len(vrows) < len(rows) and all(r[4] == verdict for r in vrows),
          "index#verdict=%s: the rows change to %d, each %s (%s)" % (verdict, len(vrows), verdict, vcount))
_, frows, fcount = counted("file")
check(0 < len(frows) < len(rows), "index#file=kernel/sched/: %d rows (%s)" % (len(frows), fcount))
_, arows, acount = counted("author")
check(0 < len(arows) < len(rows) and all("Number42" in r[2] for r in arows),
      "index#author=Number42: %d rows, each by Number42 (%s)" % (len(arows), acount))

subject = '[PATCH] tty: <script>alert(1)</script> "onmouseover=alert(2) x=" <a href="javascript:alert(3)">click</a>'
hostile_row = [r for r in rows if subject in r[3]]
check(hostile_row, "index: the hostile subject is a row's text, whole")
check(any("<img src=x onerror=alert(6)>" == r[2] for r in rows), "index: the hostile author is text")
check(len(d.tags("script")) == 2 and not d.tags("img"), "index: no script but data.js and site.js, no img")

h = Dom(text("hostile.dom"))
check(not h.tags("script"), "series page: no script element (%d)" % len(h.tags("script")))
check(not [e for e in h.elems if any(k.startswith("on") for k in e[1])], "series page: no element with an on* handler")
links = [e[1].get("href", "") for e in h.tags("a")]
check(links and not [l for l in links if not (l.startswith(("https://", "#", "../")))],
      "series page: every link is https, an anchor or the site's own (%s)" % links)
check(h.tags("title") and subject in h.tags("title")[0][2], "series page: the subject is the title's text")
check(any(subject in e[2] for e in h.tags("h1")), "series page: and its heading's")
check(any(e[1].get("class") == "diff" for e in h.tags("table")), "series page: the review's table.diff")
new = [e[2] for e in h.tags("td") if "new" in e[1].get("class", "").split()]
check(any("<script>alert(4)</script></td><td onmouseover=alert(5)> free" in c for c in new),
      "series page: the hostile boot line is the after cell's text (%s)" % [c[:80] for c in new])
check(h.tags("ins") and h.tags("del"), "series page: the changed words are marked (ins %d, del %d)"
      % (len(h.tags("ins")), len(h.tags("del"))))
check("https://lore.kernel.org/lkml/javascript:alert(7)/" in links,
      "series page: the archive link is the archive's https page, the Message-ID in its path")
check(any(l.startswith("https://git.example.org/linux/tree/") and "#n" in l for l in links),
      "series page: file:line links to the source line")
f = Dom(text("files.dom"))
check(len([e for e in f.tags("a") if e[1].get("href", "").startswith("files/")]) > 10,
      "files.html: a link to each file's page")
done()
PY
passed
