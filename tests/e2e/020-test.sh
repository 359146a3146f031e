#!/usr/bin/env bash
# End to end: `printkbot test` on fixture patches against the real kernel:
# each boot-visible change is found with its kind and file:line (a change
# of format needs no confirmation boots; a number printed under the same
# format is confirmed by booting both kernels again), a pure
# conversion is no-visible-change, a printk(KERN_DEBUG -> pr_debug is
# message-removed, a broken build and a patch that does not apply are
# verdicts; the base is built and booted once for all of them; two boots of
# the same kernel diff to nothing; a review is stored and re-rendered
# byte for byte.
source "$(dirname "$0")/lib.sh"
data=tests/data/test

lab_setup

# Names are checked before the lab is taken: with its lock held here, a
# typo'd base is said at once (a wait for the lock would end in timeout's 124).
for cmd in "test --base nosuchbase $data/text-change.patch" "index-diff printkbot-base nosuchrev"; do
	rc=0
	lab_locked timeout 60 $bot $cmd >/dev/null 2>"$work/typo.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "nosuch" "$work/typo.err" ||
		fail "'$cmd' with the lab held: exit $rc, not 2 at once" "$work/typo.err"
	ok "'${cmd%% *}' with a typo'd name and the lab held: exit 2 at once: $(head -1 "$work/typo.err")"
done

run() {  # name [options] patch: test one fixture, keep its JSON model and exit status
	keep "$1" json $bot test --json "${@:2}"
}
for fix in text-change args-change level-change pr_fmt-added pure-conversion debug-compiled-out build-failure boot-panic; do
	run "$fix" "$data/$fix.patch"
done
run comment-only "$data/comment-only.patch"
run comment-only-all --all "$data/comment-only.patch"
if [ -f ../shared/corpus/patches/NOAPPLY-x86-fpu-log-xsave-disablement.patch ]; then
	run noapply ../shared/corpus/patches/NOAPPLY-x86-fpu-log-xsave-disablement.patch
fi
$bot test "$data/text-change.patch" >"$work/text-change.txt" 2>/dev/null || true

python3 - "$work" <<'PY'
import json, os, sys
import e2elib
from e2elib import check, done
work = sys.argv[1]
def load(name):
    return e2elib.model(name), e2elib.rc(name)
def console(m, kind):
    return [c for c in m["console"] if c["kind"] == kind]

m, rc = load("text-change")
check(m["verdict"] == "console-changed" and rc == 1, "text-change: console-changed, exit 1 (%s, %d)" % (m["verdict"], rc))
tc = console(m, "text-changed")
check(len(tc) == 1 and tc[0]["file"] == "arch/x86/kernel/e820.c" and tc[0]["func"] == "e820__setup_pci_gap",
      "text-change: one text-changed attributed to e820__setup_pci_gap (%s)" % [c["where"] for c in m["console"]])
check(tc and "available for PCI devices" in tc[0]["old_text"] and "free for PCI devices" in tc[0]["new_text"],
      "text-change: old and new text")
check(any(c["kind"] == "text-changed" for c in m["index"]), "text-change: the printk index entry changed too")
check(m["before"]["commit"] and m["after"]["commit"] and m["before"]["commit"] != m["after"]["commit"],
      "text-change: before and after commits")
check(m["recheck_rounds"] == 0 and not m["unstable"],
      "text-change: the index explains the change (its format is in one kernel only): no confirmation "
      "boots (%d rounds, unstable %s)" % (m["recheck_rounds"], m["unstable"]))

m, rc = load("args-change")
tc = console(m, "text-changed")
check(m["verdict"] == "console-changed" and len(tc) == 1 and tc[0]["file"] == "kernel/pid.c"
      and "minimum: 301" in (tc[0]["old_text"] or "") and "minimum: 302" in (tc[0]["new_text"] or ""),
      "args-change: the printed number changed under the same format (%s)" % [(c["kind"], c["where"]) for c in m["console"]])
check(not m["index"], "args-change: the printk index did not change")
check(m["recheck_rounds"] >= 1 and not any("pid_max" in u for u in m["unstable"]),
      "args-change: no format explains it, so both kernels were booted again and the change held "
      "(%d rounds, unstable %s)" % (m["recheck_rounds"], m["unstable"]))

m, rc = load("level-change")
lc = console(m, "level-changed")
check(m["verdict"] == "console-changed" and len(lc) == 1 and lc[0]["old_level"] == 6 and lc[0]["new_level"] == 5,
      "level-change: info -> notice seen at boot (%s)" % [(c["kind"], c["where"]) for c in m["console"]])
check(lc and lc[0]["file"] == "drivers/base/devtmpfs.c", "level-change: attributed to drivers/base/devtmpfs.c")
check(m["before"]["cached"], "level-change: the base came from the store, not rebuilt")

m, rc = load("pr_fmt-added")
pc = console(m, "prefix-changed")
check(m["verdict"] == "console-changed" and pc, "pr_fmt-added: prefix-changed (%s)" % [c["kind"] for c in m["console"]])
check(any("Run /init as init process" in (c["new_text"] or "") and c["new_text"].startswith("init: ") for c in pc),
      "pr_fmt-added: 'init: Run /init as init process'")
check(all(c["file"] == "init/main.c" for c in pc), "pr_fmt-added: every prefix change from init/main.c")
check(any(f["kind"] == "pr_fmt-added" and f["confirmation"] == "seen-at-boot" for f in m["findings"]),
      "pr_fmt-added: the static finding is confirmed at boot")

m, rc = load("pure-conversion")
check(m["verdict"] == "no-visible-change" and rc == 0 and not m["console"] and not m["index"],
      "pure-conversion: no-visible-change, exit 0 (%s %s)" % (m["verdict"], m["console"] + m["index"]))
check(any(f["kind"] == "call-converted" for f in m["findings"]), "pure-conversion: call-converted finding")
check(m["recheck_rounds"] == 0 or m["unstable"],
      "pure-conversion: no confirmation boots unless the first boot showed a change (%d rounds)" % m["recheck_rounds"])

m, rc = load("debug-compiled-out")
mr = console(m, "message-removed")
check(m["verdict"] == "console-changed" and len(mr) == 2 and all("attaching sched-domain(s)" in c["old_text"] for c in mr),
      "debug-compiled-out: message-removed (%s)" % [(c["kind"], c["old_text"]) for c in m["console"]])
check(any(c["kind"] == "message-removed" for c in m["index"]), "debug-compiled-out: gone from the printk index")

m, rc = load("build-failure")
check(m["verdict"] == "build-failed" and rc == 1, "build-failure: build-failed (%s)" % m["verdict"])
check("init/main.c:1354:9: note: in expansion of macro" in (m["after"]["build_errors"] or "")
      and "error:" in m["after"]["build_errors"], "build-failure: names the error and the patched line")

m, rc = load("boot-panic")
check(m["verdict"] == "boot-failed" and "Kernel panic - not syncing: printkbot fixture" in m["reason"]
      and "Kernel panic" in (m["after"]["console_tail"] or ""), "boot-panic: boot-failed with the panic and the console tail")

if os.path.exists(os.path.join(work, "noapply.json")):
    m, rc = load("noapply")
    check(m["verdict"] == "does-not-apply" and "arch/x86/kernel/fpu/xstate.c" in m["reason"] and "hunk" in m["reason"],
          "NOAPPLY: does-not-apply naming the file and hunk (%s)" % m["reason"])
    check(m["has_findings"], "NOAPPLY: static findings still reported")

m, rc = load("comment-only")
check(m["verdict"] == "no-churn" and rc == 0 and m["after"]["build_seconds"] is None,
      "comment-only: no-churn and not built")
m, rc = load("comment-only-all")
check(m["verdict"] == "no-visible-change" and m["compared"] and not m["console"] and not m["index"],
      "same kernel booted again (--all on a comment-only patch): no change at all (%s)" % (m["console"] + m["index"]))

text = open(os.path.join(work, "text-change.txt")).read()
check("verdict: console-changed" in text and "e820__setup_pci_gap" in text, "text review names the verdict and function")
prose = " ".join(text.split())
check("which one kernel only can print: no boot was repeated to confirm it" in prose,
      "text review says why no boot was repeated (not that a side failed)")
long = [l for l in text.splitlines() if len(l) > 72 and not l.startswith("    ")]
check(not long, "review prose fits 72 columns (%s)" % long[:2])
done()
PY

# The base was built once: one base build stored, whatever the number of patches.
builds=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from builds where tree_commit = base_commit")
echo "base builds stored: $builds"
[ "$builds" = 1 ] || fail "the base was built $builds times"

# A stored review renders again byte for byte.
id=$(sqlite3 "$PRINTKBOT_DB" "select max(id) from reviews")
$bot report "$id" >"$work/report.txt"
python3 - "$PRINTKBOT_DB" "$id" "$work/report.txt" <<'PY'
import sqlite3, sys
body = sqlite3.connect(sys.argv[1]).execute("select body from reviews where id = ?", (int(sys.argv[2]),)).fetchone()[0]
again = open(sys.argv[3], encoding="utf-8").read()
if body != again:
    print("FAIL: report %s differs from the stored review" % sys.argv[2]); sys.exit(1)
print("ok   report %s re-renders the stored review byte for byte (%d bytes)" % (sys.argv[2], len(body)))
PY

# Every tested patch can be found again: by file, by message text, by author.
$bot history --json --file arch/x86/kernel/e820.c >"$work/h-file.json"
$bot history --json --grep 'attaching sched-domain(s)' >"$work/h-grep.json"
$bot history --json --author 'Printk Bot Fixture' >"$work/h-author.json"
python3 - "$work" <<'PY'
import json, os, sys
from e2elib import check, done
work = sys.argv[1]
def ids(name):
    return {json.loads(l)["message_id"] for l in open(os.path.join(work, name)) if l.strip()}
f, g, a = ids("h-file.json"), ids("h-grep.json"), ids("h-author.json")
check(f == {"text-change@printkbot.invalid"}, "history --file finds the e820 patch only (%s)" % sorted(f))
check(g == {"debug-compiled-out@printkbot.invalid"}, "history --grep finds the pr_debug patch only (%s)" % sorted(g))
want = {n + "@printkbot.invalid" for n in ["text-change", "level-change", "pr_fmt-added", "pure-conversion",
                                           "debug-compiled-out", "boot-panic"]}
check(want <= a, "history --author finds every fixture patch with a change (%s)" % sorted(want - a))
done()
PY
passed
