#!/usr/bin/env bash
# End to end: a series is applied whole.  The fixture's 2/3 adds only a
# comment (no churn: neither built nor booted) and 3/3's context needs
# that comment: 3/3 applies on 2/3's commit, is compared with it (built
# and booted once for that, the base's noise mask serving), and its text
# change is reported.  The reviews name the kernel and the compiler.
source "$(dirname "$0")/lib.sh"

lab_setup
keep series json $bot test --json tests/data/test/series-no-churn-middle.mbox

python3 - <<'PY'
import json
import e2elib
from e2elib import check, done
ms = [json.loads(l) for l in e2elib.text("series.json").splitlines() if l.strip()]
check(len(ms) == 3, "three reviews (%d)" % len(ms))
v = [m["verdict"] for m in ms]
check(v == ["console-changed", "no-churn", "console-changed"], "verdicts 1/3 2/3 3/3 (%s)" % v)
one, two, three = ms
check(two["after"]["commit"] and two["after"]["build_seconds"] is None,
      "2/3 applied (commit %s) but not built" % two["after"]["commit"])
check(two["before"]["commit"] == one["after"]["commit"], "2/3 went on 1/3's commit")
check(three["before"]["commit"] == two["after"]["commit"],
      "3/3 compared with its own parent, 2/3's commit (%s)" % three["before"]["commit"])
tc = [c for c in three["console"] if c["kind"] == "text-changed"]
check(len(tc) == 1 and "initialized and ready" in (tc[0]["new_text"] or "")
      and tc[0]["file"] == "drivers/base/devtmpfs.c",
      "3/3: the text change is seen at boot (%s)" % [(c["kind"], c["new_text"]) for c in three["console"]])
check(one["kernel"].startswith("Linux 6.12.") and "(Debian linux-source-6.12 6.12." in one["kernel"]
      and one["compiler"].startswith("gcc "), "the base and compiler named as a person would (%s; %s)"
      % (one["kernel"], one["compiler"]))
check(e2elib.rc("series") == 1, "exit 1: the series changes the console")
done()
PY
passed
