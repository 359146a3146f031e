#!/usr/bin/env bash
# End to end, long (after 065, whose arm64 lab and raspi3b config it
# reuses warm: 4 minutes beside a CI run, most of it setting up a second
# lab):
# workers and architectures (doc/workers.md "Architectures").  Two
# workers on one SQLite store: "both" on the suite's lab, set up for
# x86_64 and arm64; "x86" on a lab of its own set up for x86_64 alone.
# 1. `both` starts on an empty queue (--once): it says its lab has
#    x86_64 and arm64, and finds nothing to do.
# 2. The intake queues a series whose patch touches the BCM2835 mini
#    UART's driver, which qemu/boards boots on arm64's raspi3b.
# 3. `x86` claims it first (--once): it says its lab has x86_64 alone,
#    leaves the series to a worker with an arm64 lab, and `queue` shows
#    the job waiting for one; asked again, it claims nothing.
# 4. `both` claims it and tests it on raspi3b: console-changed, the
#    driver's line seen at boot, one reply in the outbox.
source "$(dirname "$0")/lib.sh"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc (make deps installs it)"
command -v qemu-system-aarch64 >/dev/null || skip "no qemu-system-aarch64 (make deps installs it)"

lab_setup
"$bot" setup --arch arm64 >"$work/setup-arm64.log" 2>&1 || fail "setup --arch arm64" "$work/setup-arm64.log"
PRINTKBOT_CACHE=$work/labx "$bot" setup >"$work/setup-x86.log" 2>&1 || fail "setting up the x86_64 lab" "$work/setup-x86.log"
ok "two labs: the suite's (x86_64 and arm64) and $work/labx (x86_64 alone)"

md=$work/Maildir
mkdir -p "$md"/{new,cur,tmp}
cat >"$work/printkbot.conf" <<EOC
[daemon]
from = printkbot <bot@example.org>
reply_on = always
series_wait = 600
outbox = $work/outbox
lease = 30
worker_poll = 1

[smtp]
url = smtp://127.0.0.1:9

[source local]
type = maildir
start = all
path = $md
list = list@example.org
EOC
conf=(--config "$work/printkbot.conf" --db "$work/store.db")

"$bot" worker "${conf[@]}" --once 2>"$work/both-first.log" || fail "worker both, first run" "$work/both-first.log"
check "worker both says its lab has x86_64 and arm64" grep -q "its lab has x86_64,arm64" "$work/both-first.log"

patch_mail bcm2835aux-probe-line bcm1@example.org "Mon, 7 Dec 2026 20:00:00 +0000" "$md" 1.mail
"$bot" daemon "${conf[@]}" --queue-only --once 2>"$work/intake.log" || fail "the intake" "$work/intake.log"
check "the intake queued the series" grep -q "job 1 <bcm1@example.org>: queued" "$work/intake.log"

PRINTKBOT_CACHE=$work/labx "$bot" worker "${conf[@]}" --once 2>"$work/x86.log" || fail "worker x86" "$work/x86.log"
check "worker x86 says its lab has x86_64 alone" grep -q "its lab has x86_64$" "$work/x86.log"
check "it leaves the series to a worker with an arm64 lab" \
	grep -q "job 1: left to a worker with an arm64 lab (1 about)" "$work/x86.log"
"$bot" queue --db "$work/store.db" >"$work/queue.txt" 2>&1
check "queue shows the job waiting for an arm64 lab" grep -q "for a worker whose lab has arm64" "$work/queue.txt"
PRINTKBOT_CACHE=$work/labx "$bot" worker "${conf[@]}" --once 2>"$work/x86-again.log" || fail "worker x86 again" "$work/x86-again.log"
check "asked again, worker x86 claims nothing" sh -c "! grep -q 'job 1' '$work/x86-again.log'"

"$bot" worker "${conf[@]}" --once 2>"$work/both.log" || fail "worker both" "$work/both.log"
check "worker both tests it on raspi3b" grep -q "QEMU's raspi3b board has" "$work/both.log"
check "console-changed, one reply" grep -q "job 1 <bcm1@example.org>: console-changed (review 1); reply" "$work/both.log"
"$bot" report 1 --db "$work/store.db" >"$work/review.txt" 2>&1 || fail "report 1" "$work/review.txt"
check "the review has the driver's line from the boot" grep -q "mini UART registered as ttyS1" "$work/review.txt"
check "and says the machine" grep -q "for QEMU's raspi3b machine" "$work/review.txt"
checks_end
passed
