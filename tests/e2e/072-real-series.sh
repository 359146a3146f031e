#!/usr/bin/env bash
# End to end: a real patch that changes the build system, from the
# linux-serial corpus (../shared/corpus), built by the default policy:
# "[PATCH] serial: 8250: add CONFIG_SERIAL_8250_PROBE_BAUD option" (2026,
# on 6.12), a Kconfig option the patch adds and uses through
# IS_ENABLED(); the patched kernel is built with it on, boots, and prints
# the patch's new message ("probed baud rate"), which is in the printk
# index diff too.  And a removal: "[PATCH v2] serial: remove drivers for
# espressif esp32" (2026): the kernel before it is built with the two
# drivers (COMPILE_TEST), the patched one without, and their messages are
# in the printk index diff as removed.  e2e 026 tests a real series on
# 6.1 (the NI UART driver), where its base is built.
source "$(dirname "$0")/lib.sh"
corpus=../shared/corpus
[ -d "$corpus" ] || skip "no ../shared/corpus beside the checkout"

lab_setup
python3 - "$corpus" <<'PY'
import sys
from e2elib import corpus_pick
corpus_pick(sys.argv[1], "linux-serial-1500", "probe-baud.mbox",
            lambda i: i == "<20260201043615.524435-1-yushenglive@gmail.com>")
PY
keep probe json $bot test --json "$work/probe-baud.mbox"
python3 - "$corpus" <<'PY'
import sys
from e2elib import corpus_pick
corpus_pick(sys.argv[1], "linux-serial-1500", "esp32-removal.mbox",
            lambda i: i == "<20260309122321.1528622-1-julianbraha@gmail.com>")
PY
keep esp32 json $bot test --json "$work/esp32-removal.mbox"

python3 - <<'PY'
import json
import e2elib
from e2elib import check, done

p = e2elib.models_in("probe.json")
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

p = e2elib.models_in("esp32.json")
m = p[0] if p else {}
check(m.get("verdict") == "console-changed", "esp32 removal: console-changed (%s: %s)"
      % (m.get("verdict"), m.get("reason")))
check("CONFIG_SERIAL_ESP32=y" in (m.get("config_derived") or ""),
      "esp32 removal: the removed driver's option in the derived config (%s)" % m.get("config_derived"))
removed = [c.get("old_format") or "" for c in m.get("index", []) if c.get("kind") == "message-removed"]
check(any("driver limited to %d serial ports" in f for f in removed),
      "esp32 removal: the drivers' messages removed in the printk index diff (%s)" % removed)
check("the patched tree no longer has" in (m.get("tested_wrapped") or "").replace("\n", " "),
      "esp32 removal: the review says the patched kernel went without them")

done()
PY
passed
