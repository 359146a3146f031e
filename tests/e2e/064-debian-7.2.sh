#!/usr/bin/env bash
# End to end, long (it builds Linux 7.2 with the lab's config, cold the
# first time: about 20 minutes of 2 CPUs): today's kernel as a base.
# 1. `setup --source debian:9.9` fails saying no Debian suite has
#    linux-source-9.9; `setup --source debian:7.2` imports Debian's
#    linux-source-7.2, which bookworm's apt sources lack, from the newer
#    suites of Debian's archive (bot/lab/debsrc.c) as printkbot-debian-7.2,
#    and the system's apt sources, preferences and package lists are the
#    same after as before, and nothing of the download is left.
# 2. `test --base debian:7.2` on a patch written for 7.2 (the PCI-gap boot
#    line reads "[gap ...]" there): console-changed, the line seen at boot.
# 3. `index-diff --rules` between debian:6.12 and debian:7.2: with
#    node-problem-detector's real rules, OOMKilling matches no message of
#    7.2 either; with a fleet's rule for 6.12's PCI-gap line, the rule
#    breaks on 7.2, the message that changed under it named ("[mem" became
#    "[gap"), and 7.2's line is its nearest message.
source "$(dirname "$0")/lib.sh"
npd=$src/../shared/monitors/npd-kernel-monitor.json
[ -r "$npd" ] || skip "no $npd (the workplace's shared data)"
[ "$(id -u)" = 0 ] || skip "setup fetches Debian packages with apt-get: root only"

apt_state() {  # what of the system's apt a fetch must not change
	{
		cat /etc/apt/sources.list 2>/dev/null
		for f in /etc/apt/sources.list.d/* /etc/apt/preferences /etc/apt/preferences.d/*; do
			[ -e "$f" ] && { echo "== $f"; cat "$f"; }
		done
		ls -l --time-style=+%s /var/lib/apt/lists/
	} 2>/dev/null | sha256sum
}
before=$(apt_state)

lab_setup
keep none txt "$bot" setup --source debian:9.9
keep setup txt "$bot" setup --source debian:7.2
after=$(apt_state)
keep tag txt lab_git rev-parse --verify -q "printkbot-debian-7.2^{commit}"
keep version txt lab_git show printkbot-debian-7.2:Makefile

keep test json "$bot" test --json --base debian:7.2 tests/data/test/text-change-7.2.patch
keep npd json "$bot" index-diff --json --rules "$npd" debian:6.12 debian:7.2
keep gap json "$bot" index-diff --json --rules tests/data/rules/pci-gap.rules debian:6.12 debian:7.2

check "the system's apt sources, preferences and lists are as they were" test "$before" = "$after"
check "nothing of the download is left in the cache" test ! -e "$PRINTKBOT_CACHE/debian-archive"
python3 - <<'PY'
import re
from e2elib import check, done, model, rc, text

check(rc("none") == 1 and "no Debian suite has linux-source-9.9" in text("none.err"),
      "debian:9.9: no suite has it, and setup says so")
check(rc("setup") == 0 and rc("tag") == 0, "debian:7.2 set up as printkbot-debian-7.2")
check(re.search(r"^VERSION = 7\nPATCHLEVEL = 2\n", text("version.txt"), re.M) is not None, "its Makefile says 7.2")
t = model("test")
changed = [c for c in t.get("console", []) if c["file"] == "arch/x86/kernel/e820.c"]
check(t["verdict"] == "console-changed" and t["base"] == "debian:7.2" and len(changed) == 1
      and "free for PCI devices" in changed[0]["new_text"], "a patch for 7.2 tested on it: the boot line changed")
npd = {r["where"]: r for r in model("npd")["rules"]["rules"]}
check(rc("npd") == 1 and not npd["rules[0]"]["matches_b"], "OOMKilling matches no message of 7.2 either")
g = model("gap")
gap = g["rules"]["rules"][0]
check(gap["matches_a"] and not gap["matches_b"], "the fleet's [mem ...] rule matched 6.12 and matches nothing of 7.2")
check(any("[gap " in (c.get("new_format") or "") for c in gap["changed"]), "the message that changed under it is named")
near = gap["lines"][0]["nearest_b"]
check(near is not None and near["format"].startswith("[gap %#010lx-%#010lx] available for PCI devices"),
      "7.2's [gap ...] line is its nearest message")
print("figures: 6.12 %d entries, 7.2 %d entries, %d changes" % (
    g["a"]["index_entries"], g["b"]["index_entries"], len(g["changes"])))
done()
PY
passed
