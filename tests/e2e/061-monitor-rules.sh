#!/usr/bin/env bash
# End to end: log-monitor rules (bot/analysis/rules.h) against the lab's
# kernel.
# 1. node-problem-detector's real kernel-monitor.json (../shared/monitors)
#    against the lab's 6.12: `index-diff --rules` names OOMKilling among the
#    rules that match no message, each of its two lines nearest to
#    mm/oom_kill.c's "%s: Killed process %d (%s) total-vm:..." (the message
#    that replaced both), and the NULL-pointer rule nearest to fault.c's
#    "BUG: kernel NULL pointer dereference, address: %px"; exit status 1.
# 2. A rule file that does not parse is refused, naming the rule and the
#    offset, before any kernel is built or the lab waited for.
# 3. `test --rules` with a made-up fleet's rules (tests/data/rules/pci-gap.rules)
#    on the patch that rewords the PCI-gap boot line: the review names the
#    rule it breaks (reworded, no message matches it now) and not the rule
#    whose message it leaves alone, in the JSON and the text.
# 4. `index-diff --rules` between the base and that patched commit (both
#    read from the store the test filled): the rule matched A, matches
#    nothing of B, the changed message is named, and B's nearest message is
#    the reworded one.
source "$(dirname "$0")/lib.sh"
npd=$src/../shared/monitors/npd-kernel-monitor.json
[ -r "$npd" ] || skip "no $npd (the workplace's shared data)"
rules=$src/tests/data/rules/pci-gap.rules

# 2 first: it needs no lab
printf '{ "rules": [ { "reason": "Fine", "pattern": "ok" },\n  { "reason": "Bad", "pattern": "task (\\\\w+ blocked" } ] }\n' \
	>"$work/bad.json"
keep bad txt "$bot" index-diff --rules "$work/bad.json" printkbot-base printkbot-base
keep bad-test txt "$bot" test --rules "$work/bad.json" tests/data/test/text-change.patch

lab_setup
keep npd json "$bot" index-diff --json --rules "$npd" printkbot-base printkbot-base
keep npd-text txt "$bot" index-diff --rules "$npd" printkbot-base printkbot-base
keep patch json "$bot" test --json --rules "$rules" tests/data/test/text-change.patch
review=$(sed -n 's/.*stored as review \([0-9]*\).*/\1/p' "$work/patch.err")
keep patch-text txt "$bot" report "${review:-0}"
after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["after"]["commit"])' "$work/patch.json")
keep between json "$bot" index-diff --json --rules "$rules" printkbot-base "$after"

python3 - <<'PY'
from e2elib import check, done, model, rc, text, flat

for name in ("bad", "bad-test"):
    err = text(name + ".err")
    check(rc(name) == 2 and "rules[1] (Bad): pattern /task (\\w+ blocked/: missing closing ) at offset 5" in err
          and "waiting for" not in err and "building" not in err,
          "%s: a bad rule file is refused before the lab, naming the rule and the offset" % name)

m = model("npd")
rules = {r["where"]: r for r in m["rules"]["rules"]}
oom = rules["rules[0]"]
check(rc("npd") == 1, "index-diff --rules exits 1: some rule matches no message of B")
check(len(rules) == 7 and oom["name"] == "OOMKilling" and not oom["matches_b"] and len(oom["lines"]) == 2,
      "OOMKilling, a rule of two lines, matches no message of 6.12")
check(all(l["b"] == [] and l["nearest_b"] and l["nearest_b"]["file"] == "mm/oom_kill.c"
          and "Killed process %d (%s) total-vm:" in l["nearest_b"]["format"] for l in oom["lines"]),
      "each OOMKilling line is nearest to mm/oom_kill.c's \"Killed process\" message")
null = rules["rules[2]"]["lines"][0]["nearest_b"]
check(null and null["format"] == "BUG: kernel NULL pointer dereference, address: %px\n",
      "the NULL-pointer rule is nearest to fault.c's reworded oops line")
t = text("npd-text.txt")
check("rules that match no message of B:" in t and "OOMKilling" in t.split("rules that match no message of B:")[1],
      "the text names OOMKilling among the rules that match no message of B")

p = model("patch")
breaks = p.get("monitor_breaks", [])
check(p["verdict"] == "console-changed" and p["has_monitor"] and p["monitor_rules"] == 2,
      "test --rules: both rules checked")
check(len(breaks) == 1 and breaks[0]["rule"] == "line 3" and breaks[0]["kind"] == "reworded"
      and not breaks[0]["still_matched"] and breaks[0]["file"] == "arch/x86/kernel/e820.c"
      and "free for PCI devices" in breaks[0]["new_text"],
      "the PCI-gap rule is broken (reworded, no message matches it now); the e820 map rule is not")
r = flat(text("patch-text.txt"))
check("Monitor rules this patch breaks" in r and "line 3 /\\[mem 0x[0-9a-f]+-0x[0-9a-f]+\\] available for PCI devices/" in r
      and "reworded; the rule matches no message now" in r, "the stored review says so in its text")

b = model("between")
gap = b["rules"]["rules"][0]
check(rc("between") == 1 and gap["matches_a"] and not gap["matches_b"], "index-diff: the rule matched A, not B")
check(len(gap["changed"]) == 1 and gap["changed"][0]["kind"] == "text-changed"
      and "free for PCI devices" in gap["changed"][0]["new_format"], "the message that changed under it is named")
near = gap["lines"][0]["nearest_b"]
check(near and "free for PCI devices" in near["format"], "B's nearest message is the reworded one")
check(b["rules"]["rules"][1]["matches_a"] and b["rules"]["rules"][1]["matches_b"], "the e820 map rule matches both")
done()
PY
passed
