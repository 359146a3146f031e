#!/usr/bin/env bash
# End to end: what of a patch the tested kernel holds.  A patch to a
# message of drivers/ata/ahci.c, which the lab's config does not compile
# (CONFIG_ATA is not set), is not-built (never no-visible-change), exit 1,
# naming the file and the symbol, in the review, the JSON and the store; a
# patch with a Documentation/ hunk and a conversion in a built file is not
# refused: the C file is booted, the documentation listed as not built,
# and the verdict stays no-visible-change.
source "$(dirname "$0")/lib.sh"
data=tests/data/test

lab_setup

for fix in not-built-driver doc-and-code; do
	keep "$fix" json $bot test --json "$data/$fix.patch"
done
keep not-built-driver-text txt $bot test "$data/not-built-driver.patch"
sqlite3 -separator '|' "$PRINTKBOT_DB" "SELECT t.verdict, c.seq, c.file, c.state, c.reason FROM test_coverage c
	JOIN tests t ON t.id = c.test_id ORDER BY t.id, c.seq" >"$work/store.txt"

python3 - <<'PY'
import e2elib
from e2elib import check, done
def cov(m, f):
    return next((c for c in m["coverage"] if c["file"] == f), None)

m, rc = e2elib.model("not-built-driver"), e2elib.rc("not-built-driver")
check(m["verdict"] == "not-built" and rc == 1, "ahci: not-built, exit 1 (%s, %d)" % (m["verdict"], rc))
check(not m["console"] and not m["index"] and m["compared"], "ahci: built and booted, nothing changed")
c = cov(m, "drivers/ata/ahci.c")
check(c and c["state"] == "not-built" and "CONFIG_ATA is not set" in (c["reason"] or ""),
      "ahci: drivers/ata/ahci.c not-built, CONFIG_ATA is not set (%s)" % c)
check(m["reason"] and "drivers/ata/ahci.c" in m["reason"] and "CONFIG_ATA" in m["reason"],
      "ahci: the verdict's sentence names the file and why (%s)" % m["reason"])
check(any(f["kind"] == "text-changed" and f["confirmation"] == "not-confirmed" for f in m["findings"]),
      "ahci: the static finding stands, not confirmed")
text = e2elib.flat(e2elib.text("not-built-driver-text.txt"))
check("verdict: not-built" in text and "drivers/ata/ahci.c: not-built" in text
      and "This file is not compiled into the kernel the bot built: drivers/ata/ahci.c" in text,
      "ahci: the text review says not-built, why, and lists the file")
check(e2elib.rc("not-built-driver-text") == 1, "ahci: text mode exits 1 too")

m, rc = e2elib.model("doc-and-code"), e2elib.rc("doc-and-code")
check(m["verdict"] == "no-visible-change" and rc == 0,
      "doc-and-code: not refused, no-visible-change, exit 0 (%s %s, %d)" % (m["verdict"], m["reason"], rc))
c = cov(m, "init/initramfs.c")
check(c and c["state"] == "booted", "doc-and-code: init/initramfs.c booted (%s)" % c)
d = cov(m, "Documentation/admin-guide/kernel-parameters.txt")
check(d and d["state"] == "not-built" and "documentation" in (d["reason"] or ""),
      "doc-and-code: the documentation is listed as not built (%s)" % d)

rows = [l.split("|") for l in e2elib.text("store.txt").splitlines()]
check(any(r[0] == "not-built" and r[2] == "drivers/ata/ahci.c" and r[3] == "not-built" for r in rows),
      "store: the not-built test keeps its file's coverage (%s)" % rows)
check(any(r[0] == "no-visible-change" and r[2] == "init/initramfs.c" and r[3] == "booted" for r in rows),
      "store: the doc-and-code test keeps initramfs.c as booted")
done()
PY
passed
