#!/usr/bin/env bash
# End to end: b4 runs `printkbot check` as its per-patch check command.
# The workplace's b4 0.14.3 (../shared/tools/b4-0.14.3, on Debian's
# python3-requests, -dkim, -dnspython, -patatt: make deps) runs `am
# --check` with b4.am-perpatch-check-cmd set, in a repository of the
# test's own, on real list mail, and its output is checked line by line:
# 1. the linflexuart series of the linux-serial corpus (13 patches, a
#    local mbox with -m): the three that add messages each get one ERROR
#    line, their findings grouped by file ("11 messages added to ...
#    (9 err, 2 info), lines ..."), shown by b4 as failures; the other ten
#    pass all checks.  b4 runs it while this test holds the kernel lab's
#    lock: the static check never takes it (it would hang until the
#    timeout).
# 2. the corpus' sched-core patch: a warning line (calls converted that
#    print the same: advice) and an ERROR line, shown as b4 shows each.
# 3. with `printkbot check --test`: the corpus' fw_devlink patch is built
#    and booted and its printk index change (dev_warn -> dev_info) is an
#    ERROR line after the verdict's; the NOAPPLY patch is one warning
#    line (does-not-apply) and nothing on standard error (which b4 would
#    take for a failure).
source "$(dirname "$0")/lib.sh"
b4src=$src/../shared/tools/b4-0.14.3/src
corpus=$src/../shared/corpus
[ -d "$b4src/b4" ] || skip "no b4 at $b4src (the workplace's shared tools)"
# Debian's Python, whose packages make deps installs (a python3 earlier on PATH may lack them)
py=/usr/bin/python3
$py -c 'import requests, dns, dkim, patatt' 2>/dev/null || fail "b4's Python modules are missing: make deps"

# b4 caches each check's result by command and Message-ID under its cache
# dir: a home of the test's own, so that every run checks afresh
export HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config
mkdir -p "$HOME"
git init -q "$work/repo"
b4() { (cd "$work/repo" && PYTHONPATH=$b4src $py -m b4.command --offline-mode "$@"); }
xz -dc "$corpus/linux-serial-1500.mbox.xz" >"$work/serial.mbox"

# 1 and 2: static, under the lab's lock
git -C "$work/repo" config b4.am-perpatch-check-cmd "$bot check"
static_b4() {
	timeout 300 bash -c 'cd "$1/repo" && PYTHONPATH=$2 /usr/bin/python3 -m b4.command --offline-mode am --check \
		-m "$1/serial.mbox" -o "$1/out" "<20260216150205.212318-13-larisa.grigore@oss.nxp.com>"' _ "$work" "$b4src" \
		>"$work/series.txt" 2>&1
	echo $? >"$work/series.rc"
	timeout 120 bash -c 'cd "$1/repo" && PYTHONPATH=$2 /usr/bin/python3 -m b4.command --offline-mode am --check \
		-m "$3" -o "$1/out" "<20220526091031.3741819-1-yuzhe@nfschina.com>"' _ "$work" "$b4src" \
		"$corpus/patches/sched-core-printk-KERN-to-pr_level.patch" >"$work/sched.txt" 2>&1
	echo $? >"$work/sched.rc"
}
lab_locked static_b4

# 3: --test, on the lab
lab_setup
git -C "$work/repo" config b4.am-perpatch-check-cmd "$bot check --test"
keep devlink txt b4 am --check -m "$corpus/patches/driver-core-fw_devlink-dev_warn-to-dev_info.patch" \
	-o "$work/out" "<20251007094312.590819-1-ulf.hansson@linaro.org>"
keep noapply txt b4 am --check -m "$corpus/patches/NOAPPLY-x86-fpu-log-xsave-disablement.patch" \
	-o "$work/out" "<174479143889.31282.3812183885819853182.tip-bot2@tip-bot2>"
# the same by hand, for what b4 does not show: nothing on standard error
keep noapply-direct txt "$bot" check --test "$corpus/patches/NOAPPLY-x86-fpu-log-xsave-disablement.patch"

python3 - <<'PY'
import os
import re
from e2elib import check, done, path, rc, text

FAIL, WARN, OK = "\x1b[31;5m\u25cf\x1b[0m", "\x1b[31m\u25cf\x1b[0m", "\x1b[32m\u25cf\x1b[0m"


def checks(name):
    """Each [PATCH] subject b4 lists (it logs on standard error) with the
    check lines under it: (marker, text) pairs."""
    out, subject = {}, None
    both = [n for n in (name, name.replace(".txt", ".err")) if os.path.exists(path(n))]
    for line in "".join(text(n) for n in both).split("\n"):
        m = re.match(r"  (?:\S+ )?(\[PATCH[^\]]*\].*)$", line)
        if m:
            subject = m.group(1)
            out[subject] = []
            continue
        m = re.match(r"    (\x1b\[[0-9;]+m\u25cf\x1b\[0m) printkbot: (.*)$", line)
        if m and subject:
            out[subject].append((m.group(1), m.group(2)))
    return out


series = checks("series.txt")
check(rc("series") == 0 and len(series) == 13, "b4 am --check took the 13 patches (with the lab locked: %s)" % rc("series"))
added = {
    10: "ERROR: drivers/tty/serial/fsl_linflexuart.c: message-added: 3 messages are added: dev_info(), "
        "dev_err_probe() and dev_err() of \"uart clock is missing, err = %d. Skipping clock setup.\", \"Failed to "
        "enable LINFlexD clocks.\" and \"Failed to enable LINFlexD clocks: %d\" (lines 830, 838 and 934)",
    12: "ERROR: drivers/tty/serial/fsl_linflexuart.c: message-added: 11 messages are added: dev_err() and "
        "dev_info() of \"No tty port\", \"RxData copy to tty layer failed\", \"Not able to get desc for tx\" and "
        "8 more (lines 221, 233, 429 and 8 more)",
    13: "ERROR: drivers/tty/serial/fsl_linflexuart.c: message-added: 2 messages are added: dev_err() and "
        "dev_err_once() of \"Rx DMA transfer failed!\" and \"Circular buffer head bigger than the buffer size\" "
        "(lines 230 and 243)",
}
for subject, lines in series.items():
    n = int(re.match(r"\[PATCH (\d+)/13\]", subject).group(1))
    want = [(FAIL, added[n])] if n in added else [(OK, "passed all checks")]
    check(lines == want, "patch %d/13: %s" % (n, want[0][1][:70]))

sched = list(checks("sched.txt").values())
check(rc("sched") == 0 and sched == [[
    (WARN, "kernel/sched/core.c: call-converted: 4 calls: printk() becomes pr_err() with the same level: no "
           "console change unless a pr_fmt() applies (lines 5605, 5639, 9776 and 9777)"),
    (FAIL, "ERROR: kernel/sched/core.c: level-changed: 2 messages move from default to warn level (lines 9373 "
           "and 9381)")]],
    "the sched-core patch: a warning (advice) and a failure, grouped")

devlink = list(checks("devlink.txt").values())
check(rc("devlink") == 0 and len(devlink) == 1 and devlink[0] == [
    (FAIL, "ERROR: console-changed on printkbot-base: 0 boot-log changes, 1 printk index change"),
    (FAIL, "ERROR: printk index: drivers/base/core.c:1853 fw_devlink_dev_sync_state(): level-changed from warn "
           "to info: \"%s %s: sync_state() pending due to %s\\n\"")],
    "--test: the fw_devlink patch's verdict and its printk index change, each a failure")
noapply = list(checks("noapply.txt").values())
check(len(noapply) == 1 and len(noapply[0]) == 1 and noapply[0][0][0] == WARN
      and noapply[0][0][1].startswith("does-not-apply on printkbot-base: arch/x86/kernel/fpu/xstate.c: hunk"),
      "--test: a patch that does not apply is one warning line")
check(rc("noapply-direct") == 1 and text("noapply-direct.err") == "" and
      text("noapply-direct.txt").count("\n") == 1, "--test writes nothing on standard error, one line on its output")
done()
PY
passed
