# lib.sh - sourced first by every tests/e2e/NNN-*.sh: what they all start
# with, and the helpers they share.  After `source "$(dirname "$0")/lib.sh"`:
#
#   $src   the repository's root, and the current directory
#   $bot   the printkbot binary of this checkout (the test fails when unbuilt)
#   $name  the script's name without .sh, which every message starts with
#   $work  a temporary directory of the test's own, removed when it exits
#          (E2E_KEEP=1 keeps it and says where); $E2E_WORK for Python
#   $PRINTKBOT_CACHE  the kernel lab (exported; default ~/.cache/printkbot),
#   $tree  its kernel tree, shared with every printkbot on this machine
#   $PRINTKBOT_DB     $work/printkbot.db: no test writes the shared store
#
#   at_exit CMD...       run CMD when the test exits, last registered first
#                        (background jobs still running are ended before)
#   ok WHAT / fail WHAT [FILE...] / skip WHY
#   check WHAT CMD...    ok or FAIL by CMD's status; checks_end [FILE...] fails
#                        (showing the files) when one check failed
#   passed               the last line of a test that passed, with its seconds
#   keep NAME EXT CMD... CMD's stdout in $work/NAME.EXT, stderr in NAME.err,
#                        exit status in NAME.rc (what e2elib.py reads)
#   lab_setup            `printkbot setup`, quietly
#   lab_locked CMD...    CMD holding the lab's lock, as printkbot takes it
#   lab_git ARGS...      git in the lab's tree, holding that lock
#   poll SECONDS CMD...  run CMD until it succeeds, at most SECONDS; its status
#   wait_for SECONDS WHAT CMD...  the same, failing the test naming WHAT
#   free_port / port_open PORT / wait_port PORT
#
# tests/e2e/e2elib.py is the same for the scripts' Python (on PYTHONPATH).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$src"
name=$(basename "$0" .sh)
bot=$src/printkbot
export PRINTKBOT_CACHE=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$PRINTKBOT_CACHE/linux
export PYTHONPATH=$src/tests/e2e${PYTHONPATH:+:$PYTHONPATH}

ok() { echo "ok   $*"; }

# What failed, then the files that say why.
fail() {
	local f
	echo "FAIL $name: $1"
	shift
	for f in "$@"; do
		echo "--- $f"
		cat "$f" 2>/dev/null || echo "(missing)"
	done
	exit 1
}

skip() { echo "$name: SKIP: $*"; exit 0; }
# with its wall time: the only per-test figure a CI log keeps (bash counts SECONDS from the start)
passed() { echo "$name: passed ($SECONDS s)"; }

_e2e_failed=0
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else echo "FAIL $what"; _e2e_failed=1; fi
}

checks_end() {
	[ "$_e2e_failed" = 0 ] || fail "one or more checks failed (above)" "$@"
}

[ -x "$bot" ] || { echo "FAIL $name: $bot is not built (make printkbot)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/printkbot-$name.XXXXXX")
export E2E_WORK=$work PRINTKBOT_DB=$work/printkbot.db
_e2e_at_exit=()
at_exit() { _e2e_at_exit+=("$(printf '%q ' "$@")"); }

# The EXIT trap: what the test left running in the background (a daemon,
# a listener: jobs it did not wait for) is ended by SIGTERM, on which a
# daemon ends its own children, or after 10 s by SIGKILL; then the test's
# own clean-ups run (each may fail), then $work goes.
_e2e_exit() {
	local rc=$? i
	set +e
	if [ -n "$(jobs -pr)" ]; then
		kill $(jobs -pr) 2>/dev/null
		poll 10 _e2e_no_jobs || kill -9 $(jobs -pr) 2>/dev/null
		wait
	fi
	for ((i = ${#_e2e_at_exit[@]} - 1; i >= 0; i--)); do
		eval "${_e2e_at_exit[i]}"
	done
	if [ -n "${E2E_KEEP:-}" ]; then
		echo "$name: kept $work"
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
_e2e_no_jobs() { [ -z "$(jobs -pr)" ]; }
trap _e2e_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

keep() {
	local n=$1 ext=$2 rc=0
	shift 2
	"$@" >"$work/$n.$ext" 2>"$work/$n.err" || rc=$?
	echo "$rc" >"$work/$n.rc"
}

lab_setup() { "$bot" setup >/dev/null; }

# A list mail carrying a fixture patch (tests/data/test/NAME.patch), from
# Jane Dev to list@example.org, with its subject and body, into a Maildir's
# new/ (through tmp/, as a delivery does): patch_mail NAME MSGID DATE MAILDIR FILE
patch_mail() {
	local fix=$src/tests/data/test/$1.patch
	{
		echo "From: Jane Dev <jane@example.org>"
		echo "To: list@example.org"
		sed -n 's/^Subject: /Subject: /p' "$fix"
		echo "Message-ID: <$2>"
		echo "Date: $3"
		echo
		sed -n '/^$/,$p' "$fix" | tail -n +2
	} >"$4/tmp/$5"
	mv "$4/tmp/$5" "$4/new/$5"
}

# The lab's tree and build dir are shared by every printkbot on this cache,
# which takes a flock on $PRINTKBOT_CACHE/lock before it checks out, builds
# or boots (bot/lab/lab.c, pk_lab_lock).  A test that reads or writes the
# tree itself takes the same lock, so that it never sees a tree another
# checkout's printkbot is switching under it.  CMD may be a shell function;
# it runs in a subshell (variables it sets are lost) without the lock's fd,
# and must not start a printkbot that takes the lab: that one would wait
# for this lock forever.
lab_locked() {
	local lock=$PRINTKBOT_CACHE/lock
	mkdir -p "$PRINTKBOT_CACHE"
	(
		if ! flock -n 9; then
			echo "$name: waiting for another printkbot using $PRINTKBOT_CACHE" >&2
			flock 9
		fi
		"$@" 9>&-
	) 9>>"$lock"
}

lab_git() { lab_locked git -C "$tree" "$@"; }

# Polling, not an event: these wait for other programs (a port opening,
# Postfix delivering, a daemon starting make) that tell nobody.
poll() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

wait_for() {
	local secs=$1 what=$2
	shift 2
	poll "$secs" "$@" || fail "$what: not after $secs s"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

port_open() {
	python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1",int(sys.argv[1]))))' "$1"
}

wait_port() { wait_for 15 "something listening on 127.0.0.1:$1" port_open "$1"; }
