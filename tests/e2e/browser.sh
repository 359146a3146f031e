# browser.sh - headless Chromium for the e2e scripts that look at the
# bot's HTML (080, 081); sourced after lib.sh, which gives $work and skip.

# Chromium from Debian, installed as mailservers.sh installs Postfix.
browser_need() {
	command -v chromium >/dev/null && return 0
	echo "installing: chromium"
	if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		chromium fonts-dejavu-core; } >"$work/apt.log" 2>&1; then
		tail -5 "$work/apt.log"
		skip "cannot install chromium (apt-get failed, see above); the browser is needed"
	fi
}

# Headless Chromium with a profile dir of its own; its chatter (no D-Bus
# here) goes to a log.  Bounded: a script that ran and called alert() keeps
# --dump-dom waiting for the dialog forever.
browser() {
	timeout -k 5 30 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" "$@" \
		2>>"$work/chromium.log"
}
