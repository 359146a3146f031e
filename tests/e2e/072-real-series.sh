#!/usr/bin/env bash
# End to end: real series that change the build system, from the
# linux-serial corpus (../shared/corpus), built by the default policy.
# - "[PATCH] serial: 8250: add CONFIG_SERIAL_8250_PROBE_BAUD option"
#   (2026, on 6.12): a Kconfig option the patch adds and uses through
#   IS_ENABLED(); the patched kernel is built with it on, boots, and
#   prints the patch's new message ("probed baud rate"), which is in the
#   printk index diff too.
# - "[PATCH tty-next 0-2/2] serial: 8250: add driver for NI UARTs" (2023,
#   on 6.1): a new driver (8250_ni.c), its Kconfig entry and Makefile
#   line; built through CONFIG_SERIAL_8250_NI, on in the patched kernel,
#   its messages in the printk index diff, the new file in the coverage.
#   A third patch made here on top of them (the series' own new file:
#   a message of 8250_ni.c reworded, with the subjects made n/3) is
#   tested on the driver patch, with CONFIG_SERIAL_8250_NI on both sides.
# None is refused.  Needs the 6.1 base (026 sets it up first).
source "$(dirname "$0")/lib.sh"
corpus=../shared/corpus
[ -d "$corpus" ] || skip "no ../shared/corpus beside the checkout"

lab_setup
"$bot" setup --source debian:6.1 >/dev/null
python3 - "$corpus" "$work" <<'PY'
import lzma, mailbox, os, sys
corpus, work = sys.argv[1:]
def pick(name, out, want):
    path = os.path.join(work, name + ".mbox")
    with lzma.open(os.path.join(corpus, name + ".mbox.xz")) as src, open(path, "wb") as dst:
        dst.write(src.read())
    o = mailbox.mbox(os.path.join(work, out))
    for m in mailbox.mbox(path):
        if want(str(m.get("Message-ID", ""))):
            o.add(m)
    o.flush()
    os.unlink(path)
pick("linux-serial-1500", "probe-baud.mbox", lambda i: i == "<20260201043615.524435-1-yushenglive@gmail.com>")
pick("linux-serial-2023q1", "ni.mbox", lambda i: "20230329154235.615349" in i)

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
keep probe json $bot test --json "$work/probe-baud.mbox"
keep ni json $bot test --json "$work/ni3.mbox"

python3 - <<'PY'
import json
import e2elib
from e2elib import check, done

def models(name):
    # test --json prints one object per patch of the input
    dec, s, out = json.JSONDecoder(), e2elib.text(name + ".json"), []
    i = 0
    while i < len(s):
        if s[i].isspace():
            i += 1
            continue
        m, i = dec.raw_decode(s, i)
        out.append(m)
    return out

p = models("probe")
check(len(p) == 1, "probe-baud: one review (%d)" % len(p))
m = p[0] if p else {}
check(m.get("verdict") == "console-changed", "probe-baud: console-changed, not refused (%s: %s)"
      % (m.get("verdict"), m.get("reason")))
check(any("CONFIG_SERIAL_8250_PROBE_BAUD" in o for o in m.get("options_added", [])),
      "probe-baud: the option it adds is named (%s)" % m.get("options_added"))
check("CONFIG_SERIAL_8250_PROBE_BAUD=y" in (m.get("config_derived") or ""),
      "probe-baud: the patched kernel's config has it on (%s)" % m.get("config_derived"))
check(m.get("after", {}).get("layered") and m.get("after", {}).get("boot_status") == "ok",
      "probe-baud: built in a layer and booted")
check(any("probed baud rate" in (c.get("new_text") or "") for c in m.get("console", [])),
      "probe-baud: its new message printed at boot (%s)" % [c.get("new_text") for c in m.get("console", [])])
check(any("probed baud rate" in json.dumps(c) for c in m.get("index", [])),
      "probe-baud: and in the printk index diff")

n = models("ni")
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
done()
PY
passed
