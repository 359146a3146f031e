#!/usr/bin/env bash
# End to end: a lab with both Debian bases (setup --source debian:6.1).
# A fixture made against 6.1 code that 6.12 does not have is tested on 6.1,
# chosen automatically; a patch whose base-commit: is the 6.12 base goes
# there whatever the configured order; one that applies to neither says
# so, naming both.  index-diff between 6.1 and 6.12 gives an attributed
# list, and a pattern file with a rule for a message 6.12 removed reports
# that rule.  A real series of the linux-serial corpus on 6.1, the NI UART
# driver ("[PATCH tty-next 0-2/2] serial: 8250: add driver for NI UARTs",
# 2023: a dt-bindings patch, then the driver with its Kconfig entry and
# Makefile line), with a third patch made here on the new driver (one
# message reworded, the subjects made n/3): built by the default policy
# with CONFIG_SERIAL_8250_NI on in the patched kernel, the driver's
# messages in the printk index diff, 8250_ni.c in the coverage, and the
# third patch tested on the driver patch with the option on both sides.
# It runs here, where the 6.1 base is built: a switch of bases rewrites
# most of the tree.  The corpus figure (churn patches per base) is bench
# material (bench/series.sh).
source "$(dirname "$0")/lib.sh"
data=tests/data/test

lab_setup
"$bot" setup --source debian:6.1 >/dev/null
base612=$(lab_git rev-parse printkbot-debian-6.12)
cat >"$work/bases.conf" <<EOF
[test]
bases = debian:6.1, debian:6.12
EOF
# text-change applies to both bases; its base-commit: names the 6.12 one
{ cat $data/text-change.patch; echo "base-commit: $base612"; } >"$work/on-6.12.patch"

keep which txt $bot test --config "$work/bases.conf" --no-store --which-base \
	$data/base-6.1-only.patch "$work/on-6.12.patch" $data/base-none.patch
keep on61 json $bot test --config "$work/bases.conf" --json $data/base-6.1-only.patch
if [ -d ../shared/corpus ]; then
	python3 - ../shared/corpus "$work" <<'PY'
import mailbox, os, sys
from e2elib import corpus_pick
corpus, work = sys.argv[1:]
corpus_pick(corpus, "linux-serial-2023q1", "ni.mbox", lambda i: "20230329154235.615349" in i)

# patch 3/3, a change of the driver patch 2 adds: its new file rebuilt from
# patch 2's lines, one message reworded, diffed with difflib
import difflib, email.message, re
box = mailbox.mbox(os.path.join(work, "ni.mbox"))
msgs = list(box)
driver = next(m for m in msgs if "2/2" in m["Subject"])
body = driver.get_payload(decode=True).decode()
start = body.index("+++ b/drivers/tty/serial/8250/8250_ni.c")
lines = []
for l in body[start:].split("\n")[2:]:
    if not l.startswith("+"):
        break
    lines.append(l[1:] + "\n")
new = [l.replace("unable to determine clock frequency!", "cannot determine the clock frequency") for l in lines]
assert new != lines, "the message to reword is not in 8250_ni.c"
diff = "".join(difflib.unified_diff(lines, new, "a/drivers/tty/serial/8250/8250_ni.c",
                                    "b/drivers/tty/serial/8250/8250_ni.c"))
third = email.message.Message()
third["From"] = "Printk Bot Fixture <fixture@printkbot.invalid>"
third["Date"] = driver["Date"]
third["Subject"] = "[PATCH tty-next 3/3] serial: 8250_ni: reword the clock frequency error"
third["Message-ID"] = "<ni-third@printkbot.invalid>"
third["In-Reply-To"] = driver["In-Reply-To"]
third.set_payload("A printkbot fixture on top of the corpus' NI UART series.\n\n"
                  "Signed-off-by: Printk Bot Fixture <fixture@printkbot.invalid>\n---\n"
                  "diff --git a/drivers/tty/serial/8250/8250_ni.c b/drivers/tty/serial/8250/8250_ni.c\n" + diff)
out = mailbox.mbox(os.path.join(work, "ni3.mbox"))
for m in msgs:
    subject = re.sub(r"(\d)/2\]", r"\1/3]", m["Subject"])
    del m["Subject"]
    m["Subject"] = subject
    out.add(m)
out.add(third)
out.flush()
PY
	keep ni json $bot test --config "$work/bases.conf" --json "$work/ni3.mbox"
fi
keep none json $bot test --config "$work/bases.conf" --json $data/base-none.patch
keep idiff json $bot index-diff --json debian:6.1 debian:6.12

python3 - <<'PY'
import json, os, re
import e2elib
from e2elib import check, done, text
w = text("which.txt").splitlines()
check(len(w) == 3, "one --which-base line per input (%s)" % w)
check(w and "base-6.1-only.patch: debian:6.1 " in w[0], "the 6.1 fixture goes on debian:6.1 (%s)" % w[:1])
check(len(w) > 1 and "on-6.12.patch: base-commit " in w[1],
      "base-commit: of the 6.12 base wins over the configured order (%s)" % w[1:2])
check(len(w) > 2 and "no base takes it" in w[2] and "debian:6.1:" in w[2] and "debian:6.12:" in w[2],
      "the patch for no base names both (%s)" % w[2:])
m = e2elib.model("on61")
check(m["base"] == "debian:6.1" and m["kernel"].startswith("Linux 6.1.")
      and "(Debian linux-source-6.1 6.1." in m["kernel"], "tested on 6.1, named as a person would (%s)" % m["kernel"])
tc = [c for c in m["console"] if c["kind"] == "text-changed"]
check(m["verdict"] == "console-changed" and tc and "initialized and ready" in tc[0]["new_text"],
      "6.1 fixture: the text change is seen at boot (%s)" % [(c["kind"], c["new_text"]) for c in m["console"]])
m = e2elib.model("none")
check(m["verdict"] == "does-not-apply" and "debian:6.1:" in m["reason"] and "debian:6.12:" in m["reason"],
      "does-not-apply names every base tried (%s)" % m["reason"])
d = e2elib.model("idiff")
kinds = {}
for c in d["changes"]:
    kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
check(d["changes"] and all(c["file"] for c in d["changes"][:50]),
      "index-diff 6.1 -> 6.12: %d attributed changes %s" % (len(d["changes"]), kinds))
# rules for the literal start of a few messages 6.12 removed (one may live on in another message)
lits = [c["old_format"].split("%")[0].strip() for c in d["changes"] if c["kind"] == "message-removed"]
lits = [l for l in lits if len(l) >= 10 and "\n" not in l][:5]
open(e2elib.path("rules.txt"), "w").write("# log-monitor rules\n%s\nLinux version\n"
                                         % "\n".join(re.escape(l) for l in lits))
check(bool(lits), "some messages of 6.1 are gone in 6.12 (%s)" % lits)

if os.path.exists(e2elib.path("ni.json")):
    n = e2elib.models_in("ni.json")
    check(len(n) == 3, "ni: three patches, three reviews (%d)" % len(n))
    driver = [m for m in n if "driver for NI UARTs" in (m.get("subject") or "")]
    check(driver, "ni: the driver patch was tested")
    m = driver[0] if driver else {}
    check(m.get("verdict") == "console-changed" and m.get("base") == "debian:6.1",
          "ni: console-changed on 6.1, not refused (%s on %s: %s)" % (m.get("verdict"), m.get("base"), m.get("reason")))
    check("CONFIG_SERIAL_8250_NI=y" in (m.get("config_derived") or ""),
          "ni: built with CONFIG_SERIAL_8250_NI on (%s)" % m.get("config_derived"))
    cov = {c.get("file"): c.get("state") for c in m.get("coverage", [])}
    check(cov.get("drivers/tty/serial/8250/8250_ni.c") in ("built", "booted"),
          "ni: the new driver is in the coverage, compiled in (%s)" % cov)
    added = [c for c in m.get("index", []) if c.get("kind") == "message-added" and "8250_ni.c" in (c.get("where") or "")]
    check(added, "ni: the driver's messages are in the printk index diff (%d)" % len(added))
    check(not [x for x in n if x.get("verdict") == "refused"], "ni: no patch refused (%s)" % [x.get("verdict") for x in n])
    third = [m for m in n if "reword the clock frequency" in (m.get("subject") or json.dumps(m)[:2000])]
    m = third[0] if third else {}
    check(m.get("verdict") == "console-changed", "ni 3/3: console-changed (%s: %s)" % (m.get("verdict"), m.get("reason")))
    check("CONFIG_SERIAL_8250_NI=y" in (m.get("config_derived") or ""),
          "ni 3/3: tested with the option patch 2 added on (%s)" % m.get("config_derived"))
    check(driver and m.get("before", {}).get("commit") == driver[0].get("after", {}).get("commit"),
          "ni 3/3: on top of the driver patch")
    changed = [c for c in m.get("index", []) if "cannot determine the clock frequency" in json.dumps(c)]
    check(changed and changed[0].get("kind") == "text-changed",
          "ni 3/3: the reworded message is a text change in the printk index (%s)" % [c.get("kind") for c in changed])
else:
    print("the NI UART series: skipped, no ../shared/corpus beside the checkout")
done()
PY
keep patterns json $bot index-diff --json --patterns "$work/rules.txt" debian:6.1 debian:6.12
python3 - <<'PY'
import e2elib
from e2elib import check, done
d, rc = e2elib.model("patterns"), e2elib.rc("patterns")
pats = [p["pattern"] for p in d["patterns_broken"]]
check(rc == 1 and len(pats) >= 1 and "Linux version" not in pats,
      "the rule for a removed message is reported, the one for a kept message is not (%s, rc %d)" % (pats, rc))
check(d["a"]["cached"] and d["b"]["cached"], "the second index-diff reads both kernels from the store")
done()
PY
passed
