#!/usr/bin/env bash
# End to end: an installed printkbot stands alone.  `make install` into a
# DESTDIR; the installed binary, run from / on a copy of the patch outside
# the checkout, reads qemu/ and templates/ from the installed data dir
# (a marker added to the installed review.txt shows in its review) and
# never falls back to the checkout: pointed at an empty data dir it fails
# naming that dir, and left to its compiled-in PREFIX it looks in
# /usr/local/share/printkbot.  `setup` (warm lab) and `test` work.  The
# systemd unit and its sysusers.d user are installed, and the unit passes
# systemd-analyze verify.  `man printkbot` and `man printkbot.conf` show the
# installed pages, and the manual is in share/doc/printkbot.
source "$(dirname "$0")/lib.sh"

make -s -j1 install DESTDIR="$work/root" PREFIX=/usr/local >"$work/install.log" 2>&1 ||
	fail "make install" "$work/install.log"
inst=$work/root/usr/local
ibot=$inst/bin/printkbot
data=$inst/share/printkbot
check "make install: binary, printkbot-core, qemu/ and templates/" \
	test -x "$ibot" -a -x "$inst/libexec/printkbot/printkbot-core" -a -f "$data/qemu/kernel.config" \
	-a -f "$data/qemu/init.c" -a -f "$data/templates/review.txt"
unit=$work/root/etc/systemd/system/printkbot.service
check "make install: the unit runs the installed binary" \
	grep -qx "ExecStart=/usr/local/bin/printkbot daemon --config /etc/printkbot.conf" "$unit"
check "make install: the unit's user, from sysusers.d" \
	grep -q "^u printkbot " "$work/root/etc/sysusers.d/printkbot.conf"
if command -v systemd-analyze >/dev/null; then
	# verify wants the binary where the unit says: the DESTDIR one stands in
	sed "s|/usr/local/bin/printkbot|$ibot|g" "$unit" >"$work/printkbot.service"
	keep verify out systemd-analyze verify "$work/printkbot.service"
	check "systemd-analyze verify: the unit is sound" grep -qx 0 "$work/verify.rc"
fi
# man finds both pages in the installed man dir, and they render
for page in printkbot printkbot.conf; do
	keep "man-$page" txt env MANPATH="$inst/share/man" MANWIDTH=80 man "$page"
	check "man $page: the installed page renders" grep -qx 0 "$work/man-$page.rc"
done
check "man printkbot: a section per command (test's --help in it)" \
	grep -q "usage: printkbot test" "$work/man-printkbot.txt"
check "man printkbot.conf: the keys (boot_timeout's default in it)" \
	grep -q "boot_timeout = 60" "$work/man-printkbot.conf.txt"
check "make install: the manual in share/doc/printkbot" test -f "$inst/share/doc/printkbot/config.example"
marker="installed-template-$$"
echo "$marker" >>"$data/templates/review.txt"
cp tests/data/test/text-change.patch "$work/text-change.patch"
mkdir "$work/empty"

# Run the installed binary from /, so nothing is found relative to the checkout.
installed() { (cd / && "$ibot" "$@"); }

keep empty-setup out env PRINTKBOT_DATADIR="$work/empty" bash -c 'cd / && "$0" setup' "$ibot"
check "an empty data dir: setup fails naming it, no fallback to the checkout" \
	grep -q "$work/empty/qemu/kernel.config" "$work/empty-setup.err"
if [ ! -e /usr/local/share/printkbot ]; then
	keep prefix-setup out env -u PRINTKBOT_DATADIR bash -c 'cd / && "$0" setup' "$ibot"
	check "no PRINTKBOT_DATADIR: the compiled-in /usr/local/share/printkbot" \
		grep -q "/usr/local/share/printkbot/qemu/kernel.config" "$work/prefix-setup.err"
fi

export PRINTKBOT_DATADIR=$data
t0=$SECONDS
keep setup out installed setup
check "installed setup: exit 0 ($((SECONDS - t0)) s)" grep -qx 0 "$work/setup.rc"
keep test txt installed test "$work/text-change.patch"
check "installed test: console changed, exit 1" grep -qx 1 "$work/test.rc"
check "installed test: the review shows the change" grep -q "free for PCI devices" "$work/test.txt"
check "installed test: rendered with the installed template" grep -q "$marker" "$work/test.txt"
id=$(sed -n 's/.*stored as review \([0-9]*\).*/\1/p' "$work/test.err" | head -1)
keep report txt installed report --html "$work/review.html" "${id:-0}"
check "installed report --html: exit 0" grep -qx 0 "$work/report.rc"
check "installed report --html: a page" grep -qi "<html" "$work/review.html"
checks_end "$work/install.log" "$work/verify.err" "$work/setup.err" "$work/test.txt" "$work/test.err" "$work/report.err"
passed
