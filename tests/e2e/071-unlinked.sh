#!/usr/bin/env bash
# End to end: a new driver whose option does not select what it calls
# (tests/data/test/unlinked-option.patch: a new option, its Makefile line
# and a file that calls crc8() without `select CRC8`, as the NXP
# Bluetooth UART series of 2023 did).  The lab's config has CRC8 off, so
# the patched kernel does not link: the verdict is build-failed, with the
# linker's errors and the option to select; the patch is then tested again
# on a config derived with CRC8 on too, where both kernels build and boot,
# and the driver's new line is in the boot log and the printk index.
source "$(dirname "$0")/lib.sh"
data=tests/data/test

lab_setup
keep unlinked json $bot test --json "$data/unlinked-option.patch"
keep unlinked-text txt $bot test "$data/unlinked-option.patch"

python3 - <<'PY'
import e2elib
from e2elib import check, done, flat
m, rc = e2elib.model("unlinked"), e2elib.rc("unlinked")
check(m["verdict"] == "build-failed" and rc == 1, "build-failed, exit 1 (%s, %d)" % (m["verdict"], rc))
errors = m["after"]["build_errors"] or ""
check("undefined reference to `crc8" in errors, "the linker's error is quoted (%r)" % errors[:200])
r = m.get("relinked") or {}
check(r.get("options") and r["options"][0].startswith("CONFIG_CRC8 (lib/crc8.c: "),
      "what it lacks: CONFIG_CRC8, which lib/crc8.c needs (%s)" % r.get("options"))
check(r.get("verdict") == "console-changed" and r["after"]["built"] and r["after"]["booted"],
      "tested again with CRC8 on: built, booted, console-changed (%s)" % r.get("verdict"))
check("nothing the patch turns on selects it" in flat(m["summary"]), "the summary says what to select (%s)" % m["summary"])
added = [c for c in m["console"] if c["kind"] == "message-added" and c["file"] == "drivers/misc/printkbot-crc-demo.c"]
check(len(added) == 1 and "printkbot_crc_demo: crc8 of the fixture string: 0x" in (added[0]["new_text"] or ""),
      "the driver's line is in the boot log of the kernel that linked (%s)" % [(c["kind"], c["where"]) for c in m["console"]])
check(any(c["kind"] == "message-added" and c["file"] == "drivers/misc/printkbot-crc-demo.c" for c in m["index"]),
      "and in its printk index")
cov = {c["file"]: c["state"] for c in m["coverage"]}
check(cov.get("drivers/misc/printkbot-crc-demo.c") == "booted", "the new file is booted (%s)" % cov)
check("CONFIG_CRC8=y" in (m["config_derived"] or "") and "CONFIG_PRINTKBOT_CRC_DEMO=y" in (m["config_derived"] or ""),
      "the config shown is the one that linked (%s)" % m["config_derived"])
text = flat(e2elib.text("unlinked-text.txt"))
check("verdict: build-failed" in text and "Build errors:" in text and "CONFIG_CRC8 (lib/crc8.c" in text
      and "did not link without" in text, "the text review: verdict, build errors, the option and why it is on")
done()
PY
passed
