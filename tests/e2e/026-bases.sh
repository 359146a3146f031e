#!/usr/bin/env bash
# End to end: a lab with both Debian bases (setup --source debian:6.1).
# A fixture made against 6.1 code that 6.12 does not have is tested on 6.1,
# chosen automatically; a patch whose base-commit: is the 6.12 base goes
# there whatever the configured order; one that applies to neither says
# so, naming both.  index-diff between 6.1 and 6.12 gives an attributed
# list, and a pattern file with a rule for a message 6.12 removed reports
# that rule.  The corpus figure (churn patches per base) is bench material.
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
keep none json $bot test --config "$work/bases.conf" --json $data/base-none.patch
keep idiff json $bot index-diff --json debian:6.1 debian:6.12

python3 - <<'PY'
import json, re
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
