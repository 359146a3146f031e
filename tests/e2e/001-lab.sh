#!/usr/bin/env bash
# End to end: setup, build, boot the real base kernel; check real records and
# index entries; two boots differ only by noise; a panicking and a hanging
# kernel are reported as such within their bounds.
source "$(dirname "$0")/lib.sh"

$bot setup

# A second setup does nothing and says the lab is ready.
$bot setup 2>"$work/setup2.err" >/dev/null
[ ! -s "$work/setup2.err" ] || fail "second setup did work" "$work/setup2.err"
# The base is Debian's default source, by that name too (a config's bases = debian:6.12)
[ "$(lab_git rev-parse printkbot-debian-6.12)" = "$(lab_git rev-parse printkbot-base)" ] ||
	fail "setup did not tag the base as printkbot-debian-6.12"

$bot boot --json > "$work/boot1.json"
$bot boot --json > "$work/boot2.json"

python3 - "$work/boot1.json" "$work/boot2.json" <<'PY'
import json, re, sys
from e2elib import check, done
a, b = (json.load(open(p)) for p in sys.argv[1:3])
check(a["boot"]["status"] == "ok", "boot status ok")
ver = [r for r in a["records"] if r["text"].startswith("Linux version 6.12")]
check(len(ver) == 1 and ver[0]["level"] == 5, "one 'Linux version 6.12' record at level 5")
check(any(r["text"] == "rcu: Hierarchical RCU implementation." for r in a["records"]),
      "pr_fmt-prefixed 'rcu: Hierarchical RCU implementation.' record")
check(any(e["file"] == "init/main.c" for e in a["index"]), "printk index has init/main.c entries")
check(len(a["index"]) > 500, "printk index has %d entries" % len(a["index"]))
check(ver and [r for r in b["records"] if r["text"] == ver[0]["text"]] != [],
      "reproducible build: same 'Linux version' line in both boots")
# Run-to-run noise: say which lines differ; the bulk must be identical.
noise = re.compile(r"\d+(\.\d+)?")
ta = [noise.sub("N", r["text"]) for r in a["records"]]
tb = [noise.sub("N", r["text"]) for r in b["records"]]
raw_diff = sorted(set(r["text"] for r in a["records"]) ^ set(r["text"] for r in b["records"]))
print("lines that differ between two boots (%d):" % len(raw_diff))
for t in raw_diff[:20]: print("    " + t)
check(len(raw_diff) < len(a["records"]) / 5, "most records identical between two boots")
# What differs once numbers are masked must be clock calibration, which
# races the host under TCG (TSC calibration succeeds on one boot, not the
# next; the APIC timer check fails when a busy host stalls the guest, and
# the second CPU's direct delay calibration drops estimates, the APIC
# timer's calibration against the PM timer is off): the same list noise.c
# leaves out as timing noise.
clock = re.compile(r"^(tsc: |clocksource: |Calibrating delay|smpboot: Total|sched_clock: |"
                   r"APIC timer disabled due to verification failure|calibrate_delay_direct\(\) |"
                   r"APIC calibration not consistent with PM-Timer: |APIC delta adjusted to PM-Timer: )")
odd = [t for t in set(ta) ^ set(tb) if not clock.match(t)]
# The PS/2 mouse's protocol probe runs in serio's workqueue, seconds of
# guest time under TCG: on a busy host one boot's capture may end before
# its "input: ImExPS/2 ..." line.  Absent from one boot is allowed (the
# bot leaves the i8042 input lines out as timing noise, noise.c); a
# different text is not.
late = re.compile(r"^input: .* as /devices/platform/iN/")   # i8042, its digits masked
odd = [t for t in odd if not (late.match(t) and (t in ta) != (t in tb))]
check(odd == [], "with numbers masked, the boots differ only in clock calibration "
      "and a late mouse probe %s" % odd)
print("boot took %.2f s (%s)" % (a["boot"]["seconds"], a["boot"]["accel"]))
done()
PY

# What a make ended by a signal leaves in the build dir (lab/interrupted.h):
# a .cmd cut at one of fixdep's 4 KiB writes (alone, it failed every
# later build of the dir: "unterminated call to function 'wildcard'"), and
# under the mark of a make that never ended, an object cut short and a
# vmlinux half linked, newer than their .cmd.  The next build makes them
# again and the kernel boots.
bdir=$($bot setup | sed -n 's/.*, build dir //p')
[ -f "$bdir/kernel/.pid.o.cmd" ] && [ "$(stat -c %s "$bdir/kernel/.pid.o.cmd")" -gt 4096 ] ||
	fail "no kernel/.pid.o.cmd over 4 KiB in the build dir '$bdir'"
lab_locked truncate -s 4096 "$bdir/kernel/.pid.o.cmd"
lab_locked touch "$bdir.state/make-running"   # lab/state.h: the bot's own files beside the build dir
sleep 0.1
lab_locked truncate -s 1000 "$bdir/init/main.o"
lab_locked truncate -s 4096 "$bdir/vmlinux"
$bot boot --json > "$work/boot3.json" 2>"$work/boot3.err" || fail "boot after an interrupted make" "$work/boot3.err"
python3 - "$work/boot3.json" "$work/boot3.err" "$bdir" <<'PY'
import json, os, sys
from e2elib import check, done
b, err, bdir = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
check(b["build"]["ok"] and b["boot"]["status"] == "ok", "after an interrupted make: built and booted")
check("removed 4 files an interrupted make left (" in err, "the cut .cmd, its object, the cut object "
      "and vmlinux removed: %s" % err.strip())
check("\n$(deps_kernel/pid.o):\n" in open(os.path.join(bdir, "kernel/.pid.o.cmd")).read(),
      "kernel/.pid.o.cmd whole again")
check(not os.path.exists(bdir + ".state/make-running"), "no mark left")
done()
PY

# A kernel that panics in an initcall, and one that hangs, as commits in the
# lab's repository on printkbot-base, tagged printkbot-test-<name> (made
# again by every run, as every checkout's 001-lab.sh names them).  They are
# made with a scratch index, so that the lab's checkout (whatever commit a
# printkbot left there) is neither needed nor touched.
fixture() {  # name, C body of an initcall
	local index=$work/index-$1 blob tree_id commit
	{
		git -C "$tree" show printkbot-base:init/main.c
		printf '\nstatic int __init printkbot_fixture_%s(void)\n{\n%s\n\treturn 0;\n}\nlate_initcall(printkbot_fixture_%s);\n' \
			"$1" "$2" "$1"
	} >"$work/main-$1.c"
	blob=$(git -C "$tree" hash-object -w "$work/main-$1.c")
	GIT_INDEX_FILE=$index git -C "$tree" read-tree printkbot-base
	GIT_INDEX_FILE=$index git -C "$tree" update-index --cacheinfo "100644,$blob,init/main.c"
	tree_id=$(GIT_INDEX_FILE=$index git -C "$tree" write-tree)
	commit=$(GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t \
		git -C "$tree" commit-tree "$tree_id" -p printkbot-base -m "fixture: $1")
	git -C "$tree" tag -f "printkbot-test-$1" "$commit" >/dev/null
}
# boot leaves the hang fixture checked out: the lab goes back to its base
at_exit lab_git checkout -q --detach printkbot-base
lab_locked fixture panic '	panic("printkbot fixture panic");'
lab_locked fixture hang '	for (;;) cpu_relax();'

set +e
start=$(date +%s)
$bot boot --json --timeout 60 printkbot-test-panic > "$work/panic.json"; rc_panic=$?
mid=$(date +%s)
$bot boot --json --timeout 15 printkbot-test-hang > "$work/hang.json"; rc_hang=$?
end=$(date +%s)
set -e
python3 - "$work/panic.json" "$work/hang.json" $rc_panic $rc_hang $((mid-start)) $((end-mid)) <<'PY'
import json, sys
from e2elib import check, done
p, h = (json.load(open(x)) for x in sys.argv[1:3])
rc_p, rc_h, t_p, t_h = map(int, sys.argv[3:7])
check(p["boot"]["status"] == "panic" and rc_p == 1, "panicking kernel: status panic, exit 1")
check("printkbot fixture panic" in (p["boot"]["detail"] or ""), "panic lines quoted")
check(h["boot"]["status"] == "timeout" and rc_h == 1, "hanging kernel: status timeout, exit 1")
check(h["boot"]["seconds"] < 25, "hang ended near its 15 s bound (%.1f s)" % h["boot"]["seconds"])
print("panic case %d s, hang case %d s (both including rebuild)" % (t_p, t_h))
done()
PY
passed
