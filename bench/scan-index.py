#!/usr/bin/env python3
"""Scan checked against the kernel (doc/scan.md, doc/benchmarks.md).

For every patch a store holds a test of (both kernels built and booted),
each static finding of `scan` is checked against the printk indexes of
the two kernels, which are ground truth for formats: the store keeps each
boot's whole index (index_sets), so nothing is rebuilt here.

Per finding kind:
  confirmed     the index agrees: a finding that says the text, level or
                prefix changes has a format of its file that differs
                between the kernels; a conversion said to print the same
                text has its format the same in both;
  contradicted  the index disagrees: the format the finding names is in
                both kernels, the same (a change claimed), or differs (the
                same text claimed); each is listed, a scan defect or a
                kind whose wording must say it guesses;
  debug-only    the call is a debug one (pr_debug, dev_dbg...): the index
                of a kernel without DEBUG or dynamic debug does not hold it;
  unbuilt       the file has no entry in either index (not built, or no
                call of it indexed);
  not-indexed   the file is in the index but the finding's format is not
                (under an #ifdef the config leaves out, a call the index
                does not hold, a format the scan could not fold);
  advice        a kind that says nothing the index can check (level-missing,
                prefer-pr-level, ...).
Then, per test that compared two boots, whether scan's verdict agrees with
test's (console-changed or no-visible-change), each disagreement listed.

Run: python3 bench/scan-index.py [-v] [--scan PRINTKBOT] STORE.db [STORE.db ...]
     (-v: every finding that is not confirmed, with its class;
      --scan: each patch scanned again by that build, from the patch the
      store keeps, its findings and verdict instead of those stored when
      it was tested: a scanner changed since is checked on the same kernels)
     (the stores of `KEEP=DIR bash bench/series.sh`: DIR/*/store.db)
Exit status: 0 when nothing is contradicted and every verdict agrees, 1
otherwise, 2 on bad input.
"""
import collections
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

# kinds that say what the index must show differ between the two kernels
CHANGE = {"text-changed", "newline-lost", "newline-added", "prefix-changed", "pr_fmt-added",
          "pr_fmt-removed", "pr_fmt-changed", "level-changed", "message-added", "message-removed",
          "cont-broken", "cont-added"}
PR_FMT = {"pr_fmt-added", "pr_fmt-removed", "pr_fmt-changed"}
# the function a call names: pr_debug, dev_dbg, dev_vdbg, netdev_dbg, pr_devel, print_hex_dump_debug
DEBUG_CALL = re.compile(r"^\s*\w*(dbg|debug|devel)\s*\(")

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b",
           "f": "\f", "v": "\v", "?": "?", "e": "\x1b"}


def unescape(text):
    """A C literal's body as the compiler reads it (g_strcompress())."""
    def one(m):
        s = m.group(1)
        if s[0] in "01234567":
            return chr(int(s, 8))
        if s[0] == "x":
            return chr(int(s[1:], 16))
        return ESCAPES.get(s, s)
    return re.sub(r"\\([0-7]{1,3}|x[0-9a-fA-F]+|.)", one, text, flags=re.S)


def format_is(fmt, c_text):
    """confirm.c's format_is(): the finding's text, maybe after a pr_fmt() prefix."""
    if fmt is None or c_text is None:
        return False
    f, t = fmt.rstrip("\n"), unescape(c_text).rstrip("\n")
    return f == t or (len(t) >= 4 and len(t) < len(f) and f.endswith(t))


class Store:
    def __init__(self, path):
        self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        self.db.text_factory = lambda b: b.decode("utf-8", "replace")
        self.sets = {}
        self.rows = {}

    def index(self, set_id):
        """A whole index, as entry ids in the kernel's order (index_sets in schema.sql)."""
        if set_id in self.sets:
            return self.sets[set_id]
        parent, = self.db.execute("SELECT parent_id FROM index_sets WHERE id = ?", (set_id,)).fetchone()
        out = []
        for entry, lo, hi in self.db.execute("SELECT entry_id, parent_from, parent_to FROM index_set_items "
                                             "WHERE set_id = ? ORDER BY seq", (set_id,)):
            out.extend([entry] if entry is not None else self.index(parent)[lo:hi])
        self.sets[set_id] = out
        return out

    def entries(self, set_id, file):
        """(level, cont, format) of the index's entries of one file."""
        if not self.rows:
            for i, level, cont, f, fmt in self.db.execute("SELECT id, level, cont, file, format FROM index_entries"):
                self.rows[i] = (f, (level, cont, fmt))
        return [self.rows[e][1] for e in self.index(set_id) if self.rows[e][0] == file]

    def files(self, set_id):
        if not self.rows:
            self.entries(set_id, "")
        return {self.rows[e][0] for e in self.index(set_id)}


def check(store, before, after, f, files):
    kind, file, old_text, new_text = f["kind"], f["file"], f["old_text"], f["new_text"]
    calls = [c for c in (f["old_call"], f["new_call"]) if c]
    same_claimed = kind == "call-converted" and old_text is not None and \
        unescape(old_text or "") == unescape(new_text or "")
    if kind not in CHANGE and not same_claimed:
        return "advice", ""
    b, a = store.entries(before, file), store.entries(after, file)
    if kind in PR_FMT:
        mb, ma = b, a
    else:
        texts = [t for t in (old_text, new_text) if t]
        mb = [e for e in b if any(format_is(e[2], t) for t in texts)]
        ma = [e for e in a if any(format_is(e[2], t) for t in texts)]
    if not mb and not ma:
        if calls and all(DEBUG_CALL.match(c) for c in calls):
            return "debug-only", ""
        return ("unbuilt" if file not in files else "not-indexed"), ""
    differ = sorted(mb) != sorted(ma)
    if differ != same_claimed:
        return "confirmed", ""
    why = ("the index has %r in both kernels" % (ma[0][2],) if not differ else
           "the index has %r before and %r after" % ([e[2] for e in mb], [e[2] for e in ma]))
    return "contradicted", why


FINDING_COLS = ("kind", "file", "line", "old_call", "new_call", "old_text", "new_text")


def stored_scan(store, patch, scan_verdict):
    rows = store.db.execute("SELECT %s FROM findings WHERE patch_id = ? ORDER BY seq" % ", ".join(FINDING_COLS),
                            (patch,))
    return scan_verdict, [dict(zip(FINDING_COLS, r)) for r in rows]


def rescan(store, patch, scanner):
    """The patch the store keeps (patches.raw), scanned by scanner: its verdict and findings."""
    raw, = store.db.execute("SELECT raw FROM patches WHERE id = ?", (patch,)).fetchone()
    with tempfile.NamedTemporaryFile(suffix=".patch") as f:
        f.write(gzip.decompress(raw))
        f.flush()
        out = subprocess.run([scanner, "scan", "--json", f.name], capture_output=True, text=True).stdout
    o = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
    return o["verdict"], [{k: x.get(k) for k in FINDING_COLS} for x in o["findings"]]


def main(paths, verbose, scanner=None):
    kinds = collections.defaultdict(collections.Counter)
    contradictions, verdicts, disagreements = [], collections.Counter(), []
    for path in paths:
        try:
            store = Store(path)
            tests = store.db.execute(
                "SELECT t.id, p.id, p.subject, p.scan_verdict, t.verdict, bb.index_set_id, ab.index_set_id "
                "FROM tests t JOIN patches p ON p.id = t.patch_id "
                "JOIN boots bb ON bb.id = t.before_boot JOIN boots ab ON ab.id = t.after_boot "
                "WHERE t.id = (SELECT max(id) FROM tests WHERE patch_id = p.id) "
                "AND bb.index_set_id IS NOT NULL AND ab.index_set_id IS NOT NULL ORDER BY t.id").fetchall()
        except sqlite3.Error as e:
            print("%s: not a printkbot store: %s" % (path, e), file=sys.stderr)
            return 2
        for test, patch, subject, scan_verdict, verdict, before, after in tests:
            files = store.files(before) | store.files(after)
            scan_verdict, findings = (rescan(store, patch, scanner) if scanner
                                      else stored_scan(store, patch, scan_verdict))
            for f in findings:
                what, why = check(store, before, after, f, files)
                kinds[f["kind"]][what] += 1
                if verbose and what not in ("confirmed", "contradicted", "advice"):
                    print("%s: %s:%s %s: %s" % (what, f["file"], f["line"], f["kind"], f["new_call"] or f["old_call"]))
                if what == "contradicted":
                    contradictions.append("%s\n    %s:%s %s: %s" % (subject, f["file"], f["line"], f["kind"], why))
            if verdict in ("console-changed", "no-visible-change"):
                agree = scan_verdict == verdict
                verdicts["agree" if agree else "disagree"] += 1
                if not agree:
                    disagreements.append("%s\n    scan %s, test %s" % (subject, scan_verdict, verdict))
    cols = ("confirmed", "contradicted", "debug-only", "unbuilt", "not-indexed", "advice")
    print("| finding kind | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for k in sorted(kinds):
        print("| %s | %s |" % (k, " | ".join(str(kinds[k][c]) for c in cols)))
    total = collections.Counter()
    for c in kinds.values():
        total.update(c)
    print("| **all** | %s |" % " | ".join(str(total[c]) for c in cols))
    print("\ntests compared: %d; scan's verdict agrees with test's on %d, disagrees on %d"
          % (sum(verdicts.values()), verdicts["agree"], verdicts["disagree"]))
    for line in contradictions:
        print("contradicted: " + line)
    for line in disagreements:
        print("verdicts differ: " + line)
    return 1 if contradictions or disagreements else 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    args = sys.argv[1:]
    verbose = args[:1] == ["-v"]
    args = args[verbose:]
    scanner = None
    if args[:1] == ["--scan"] and len(args) > 2:
        scanner = os.path.abspath(args[1])
        args = args[2:]
    sys.exit(main(args, verbose, scanner))
