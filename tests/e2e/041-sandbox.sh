#!/usr/bin/env bash
# End to end: patches whose host programs attack the machine that builds
# them (tests/data/hostile/).  scripts/basic/fixdep changed to write files
# outside the tree, or to connect to a listener on the host's loopback:
# built by the default policy in the sandbox and a throwaway layer, which
# stop both (the files are not written, nothing connects), and the review
# says so; with sandbox = off, refused before anything is built.  A
# Makefile that plants things in the build dir for the next build (a
# stamp, scripts/basic/fixdep appended to, init/main.o dated 2035): the
# build dir is as it was once the test ends, and the next patch, to
# init/main.c, is built from its source (a surviving plant would link
# the old object: no console change).  usr/gen_init_cpio.c (a host program in a plain
# .c file, which the default policy builds) does both too: stopped the
# same way, and `setup` afterwards does not run it outside the sandbox.
# The same patch with sandbox = off really writes and connects, which
# shows the fixtures are not toothless.  With bubblewrap out of PATH,
# every patch is refused.
source "$(dirname "$0")/lib.sh"
data=tests/data/hostile
outside=("$PRINTKBOT_CACHE/hostile-was-here" /tmp/printkbot-hostile-was-here)
at_exit rm -f "${outside[@]}"

lab_setup
rm -f "${outside[@]}"

# Everything that connects to 127.0.0.1:47123 is written down.
python3 - "$work/connections" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 47123))
s.listen(8)
open(sys.argv[1], "w").close()
while True:
    c, a = s.accept()
    with open(sys.argv[1], "a") as f:
        f.write("%s %r\n" % (a[0], c.recv(200)))
    c.close()
PY
wait_for 5 "the listener on 127.0.0.1:47123" test -f "$work/connections"

run() {  # name [options] patch: keep the JSON model and the exit status
	local name=$1
	keep "$name" json $bot test --json "${@:2}"
	# what the outside looks like right after this one
	for f in "${outside[@]}"; do [ -e "$f" ] && echo "$f"; done >"$work/$name.outside" || true
	cp "$work/connections" "$work/$name.connections"
}
run write-default "$data/scripts-write-outside.patch"
run network-default "$data/scripts-network.patch"
run hostprog-default "$data/hostprog-c-file.patch"

# the lab's build dir as the base's build left it, then a plant and the patch after it
build=$(ls -d "$PRINTKBOT_CACHE"/build/*-6.12 | grep -v '\.new$' | head -1)
lab_locked sha256sum "$build/scripts/basic/fixdep" >"$work/fixdep.sum"
run plant "$data/plant-next-build.patch"
lab_locked sha256sum "$build/scripts/basic/fixdep" >"$work/fixdep-after.sum"
{ lab_locked find "$build" -newermt '+1 day' -print; ls "$build/printkbot-planted" 2>/dev/null;
  ls "$PRINTKBOT_CACHE/layers" 2>/dev/null; } >"$work/plant.left" || true
run after-plant "$data/after-plant.patch"

# setup must not run the tree's (patched) gen_init_cpio outside the sandbox.
# An initramfs older than qemu/init.c is made again by setup; it is aged,
# not removed, so that a printkbot elsewhere still finds the lab set up.
initrd=$PRINTKBOT_CACHE/guest/initrd.cpio
lab_locked touch -d @0 "$initrd"
$bot setup >"$work/setup.out" 2>&1 || fail "setup after the hostile patches" "$work/setup.out"
[ "$(stat -c %Y "$initrd")" != 0 ] || fail "setup did not make the initramfs again" "$work/setup.out"
for f in "${outside[@]}"; do [ -e "$f" ] && echo "$f"; done >"$work/setup.outside" || true

printf '[policy]\nsandbox = off\n' >"$work/off.conf"
run write-off --config "$work/off.conf" "$data/scripts-write-outside.patch"
run hostprog-off --config "$work/off.conf" "$data/hostprog-c-file.patch"
rm -f "${outside[@]}"

mkdir "$work/bin"   # a PATH without bwrap
for p in cp git make gcc cc ccache qemu-system-x86_64 setpriv sh; do
	command -v "$p" >/dev/null && ln -s "$(command -v "$p")" "$work/bin/$p"
done
PATH=$work/bin run no-bwrap "$data/hostprog-c-file.patch"

id=$(sqlite3 "$PRINTKBOT_DB" "select r.id from reviews r join tests t on t.id = r.test_id
	join patches p on p.id = t.patch_id where p.message_id = 'scripts-network@printkbot.invalid'
	order by r.id desc limit 1" 2>/dev/null || true)
[ -n "$id" ] && $bot report "$id" >"$work/network-review.txt"

python3 - "$work" <<'PY'
import json, os, sys
from e2elib import check, done, flat  # flat: the review wraps the sandbox's note at 72 columns
work = sys.argv[1]
def load(name):
    m = json.load(open(os.path.join(work, name + ".json")))
    out = open(os.path.join(work, name + ".outside")).read().split()
    conns = open(os.path.join(work, name + ".connections")).read().splitlines()
    return m, out, conns

m, out, conns = load("write-default")
errors = flat(m["after"]["build_errors"])
check(m["verdict"] == "build-failed" and m["after"]["layered"],
      "write-default: built in a layer, build-failed (%s)" % m["verdict"])
check(not out, "write-default: no file written outside the tree (%s)" % out)
check("sandbox" in errors and "cannot write ../../hostile-was-here" in errors,
      "write-default: the review says the sandbox denied the write (%r)" % errors)

m, out, conns = load("network-default")
errors = flat(m["after"]["build_errors"])
check(m["verdict"] == "build-failed", "network-default: build-failed (%s)" % m["verdict"])
check(not conns, "network-default: nothing connected to the host's listener (%s)" % conns)
check("sandbox" in errors and "cannot connect to 127.0.0.1:47123" in errors,
      "network-default: the review says the connection failed in the sandbox (%r)" % errors)

m, out, conns = load("write-off")
check(m["verdict"] == "refused" and "scripts/basic/fixdep.c" in m["reason"] and "sandbox = off" in m["reason"],
      "write-off: with sandbox = off the build system is refused, naming why (%s: %s)" % (m["verdict"], m["reason"]))
check(m["after"]["build_seconds"] is None, "write-off: nothing was built")

m, out, conns = load("plant")
check(m["verdict"] == "console-changed" and m["after"]["layered"],
      "plant: the Makefile patch is built in a layer and booted (%s)" % m["verdict"])
before_sum = open(os.path.join(work, "fixdep.sum")).read()
after_sum = open(os.path.join(work, "fixdep-after.sum")).read()
check(before_sum == after_sum, "plant: scripts/basic/fixdep of the build dir is unchanged (%s / %s)"
      % (before_sum.split()[:1], after_sum.split()[:1]))
left = open(os.path.join(work, "plant.left")).read().split()
check(not left, "plant: no stamp, no file dated in the future, no layer left (%s)" % left[:5])
m, out, conns = load("after-plant")
msgs = [c for c in m.get("console", []) if "as the init process" in (c.get("new_text") or "")]
check(m["verdict"] == "console-changed" and msgs,
      "after-plant: init/main.c was built from its source, its new message seen (%s, %s)"
      % (m["verdict"], [c.get("kind") for c in m.get("console", [])]))
text = open(os.path.join(work, "network-review.txt")).read() if os.path.exists(os.path.join(work, "network-review.txt")) else ""
check("verdict: build-failed" in text and "sandbox" in text and "cannot connect to 127.0.0.1:47123" in flat(text),
      "network-default: the text review shows the verdict and the denied connection")
long = [l for l in text.splitlines()[1:] if len(l) > 72 and not l.startswith("    ") and "make[" not in l]
check(not long, "network-default: the sandbox note fits 72 columns (%s)" % long[:2])

m, out, conns = load("hostprog-default")
errors = flat(m["after"]["build_errors"])
check(m["verdict"] == "build-failed" and "gen_init_cpio: hostile fixture" in errors and "sandbox" in errors,
      "hostprog-default: a .c-only patch passes the policy, its host program is stopped by the sandbox (%s %r)"
      % (m["verdict"], errors))
check(not out and not conns, "hostprog-default: nothing written outside, nothing connected (%s %s)" % (out, conns))
setup_out = open(os.path.join(work, "setup.outside")).read().split()
check(not setup_out, "setup after it: the patched gen_init_cpio did not run outside the sandbox (%s)" % setup_out)

m, out, conns = load("hostprog-off")
check(m["verdict"] != "build-failed" and len(out) == 2 and conns,
      "control, sandbox = off: the same patch writes outside and connects (%s, %s, %s)" % (m["verdict"], out, conns))

m, out, conns = load("no-bwrap")
check(m["verdict"] == "refused" and "sandbox" in m["reason"] and "bubblewrap" in m["reason"],
      "no bwrap in PATH: refused, naming the sandbox (%s: %s)" % (m["verdict"], m["reason"]))
done()
PY
passed
