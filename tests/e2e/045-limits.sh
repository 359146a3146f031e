#!/usr/bin/env bash
# End to end: every input the bot takes is cut at a configured limit and
# the cut is reported -- a mail larger than max_mail_mb (refused unread),
# a patch with more lines than max_lines (refused), a 48 MB mail under
# max_mail_mb and over max_lines (refused before it is scanned or tried
# on a base: under 1 GB of memory, where its scan took 8.7 GB), a kernel whose console
# never ends (tests/data/hostile/console-flood.patch: kept up to
# max_console_mb, the boot ended at its timeout) and one whose printk
# index never ends (index-endless.patch: the guest's init stops copying it
# at its own cap and says so, and QEMU may write only max_capture_mb of
# capture, cut while it is written, not when it is read).  A kernel that
# hangs with nothing cut (boot-hang.patch) is booted a second time before
# it is boot-failed, as a starved guest can miss its timeout; the flood,
# cut at its limit, is not booted again.
source "$(dirname "$0")/lib.sh"
data=tests/data

lab_setup
printf '[policy]\nmax_mail_mb = 1\nmax_lines = 3\nmax_console_mb = 1\nmax_capture_mb = 2\n' >"$work/limits.conf"

run() {  # name [options] patch: the JSON model, stderr, exit status
	keep "$1" json $bot test --json --config "$work/limits.conf" "${@:2}"
}

# a 2 MiB mail: a patch with a big attachment
python3 - "$data/test/text-change.patch" "$work/big.mbox" <<'PY'
import base64, sys
patch = open(sys.argv[1]).read()
head, body = patch.split("\n\n", 1)
blob = base64.encodebytes(b"\0" * (3 << 19)).decode()
open(sys.argv[2], "w").write(head + "\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
    "Content-Type: text/plain\n\n" + body + "\n--b\nContent-Type: application/octet-stream\n"
    "Content-Transfer-Encoding: base64\n\n" + blob + "--b--\n")
PY
run big-mail "$work/big.mbox"
run many-lines "$data/test/text-change.patch"
# two million calls added: under the default max_mail_mb, far over max_lines
python3 - "$work/huge.patch" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("From: A <a@example.org>\nSubject: [PATCH] huge\nMessage-ID: <huge@example.org>\n\n---\n"
            "--- /dev/null\n+++ b/drivers/tty/huge.c\n@@ -0,0 +1,2000000 @@\n")
    f.writelines('+\tpr_info("x %d\\n", i);\n' for _ in range(2000000))
PY
printf '[policy]\n' >"$work/default.conf"
keep huge json /usr/bin/time -f 'maxrss_kb %M' $bot test --json --no-store --config "$work/default.conf" \
	"$work/huge.patch"
rm -f "$work/huge.patch"
printf '[policy]\nmax_console_mb = 1\nmax_capture_mb = 1\n' >"$work/limits.conf"
run console-flood --timeout 30 "$data/hostile/console-flood.patch"
run index-endless --all --timeout 60 "$data/hostile/index-endless.patch"
run boot-hang --timeout 10 "$data/test/boot-hang.patch"

python3 - "$work" <<'PY'
import json, os, sys
from e2elib import check, done, text
work = sys.argv[1]
def rd(name, ext):
    return text(name + "." + ext)

check(rd("big-mail", "rc").strip() == "2" and "more than the limit of 1048576 bytes" in rd("big-mail", "err"),
      "a 2 MiB mail over max_mail_mb = 1: refused unread, exit 2 (%s)" % rd("big-mail", "err").strip())
m = json.loads(rd("many-lines", "json"))
check(m["verdict"] == "refused" and "more than the limit of 3" in m["reason"],
      "a diff over max_lines = 3: refused (%s)" % m["reason"])
m = json.loads(rd("huge", "json"))
rss = [int(l.split()[1]) for l in rd("huge", "err").splitlines() if l.startswith("maxrss_kb ")]
check(m["verdict"] == "refused" and "more than the limit of 20000 ([policy] max_lines)" in m["reason"],
      "a 48 MB mail of 2,000,000 lines: refused, naming max_lines (%s)" % m["reason"])
check(rss and rss[0] < 1 << 20, "and never scanned: peak RSS %s MB, under 1 GB" % (rss[0] >> 10 if rss else "?"))

m = json.loads(rd("console-flood", "json"))
tail = m["after"]["console_tail"] or ""
detail = m["after"]["boot_detail"] or ""
check(m["verdict"] == "boot-failed" and "did not finish booting" in (m["reason"] or ""),
      "console-flood: boot-failed at the timeout (%s: %s)" % (m["verdict"], m["reason"]))
check("the console was cut at its limit of 1048576 bytes" in tail and "cut at its limit" in detail,
      "console-flood: the cut is in the console tail and the boot detail")
check("a console that never ends" in tail, "console-flood: the tail shows what flooded it")
check(m["after"]["first_boot_timed_out"] is None and "booted twice" not in m["reason"],
      "console-flood: cut at its limit, so not booted again (%s)" % m["after"]["first_boot_timed_out"])

m = json.loads(rd("boot-hang", "json"))
check(m["verdict"] == "boot-failed" and "did not finish booting within 10 s, booted twice" in (m["reason"] or ""),
      "boot-hang: boot-failed only after a second boot (%s: %s)" % (m["verdict"], m["reason"]))
check(float(m["after"]["first_boot_timed_out"] or 0) >= 10 and m["after"]["boot_status"] == "timeout",
      "boot-hang: the first boot's timeout is in the model (%s)" % m["after"]["first_boot_timed_out"])
check("printkbot fixture: hanging in a late initcall" in (m["after"]["console_tail"] or ""),
      "boot-hang: the console tail shows where it hung")

m = json.loads(rd("index-endless", "json"))
tail = m["after"]["console_tail"] or ""
detail = m["after"]["boot_detail"] or ""
check(m["verdict"] == "boot-failed" and "capture incomplete" in (m["reason"] or ""),
      "index-endless: boot-failed, the capture incomplete (%s: %s)" % (m["verdict"], m["reason"]))
check("guest init: the printk index is longer than 1048576 bytes: cut there" in tail,
      "index-endless: the guest's init stopped at its cap and said so (in the console tail)")
check("the capture port was cut at its limit of 1048576 bytes" in tail and "cut at its limit" in detail,
      "index-endless: QEMU was stopped at max_capture_mb = 1 while writing (%r)" % detail[:300])

done()
PY
passed
