#!/usr/bin/env bash
# End to end: what one mailed patch could once do to the lab's host and to
# the lab itself.
#   1. tests/data/hostile/kconfig-symlinks.patch: init/Kconfig's $(shell)
#      plants, in the build dir (where make runs), a link to a root-only
#      host file at every name the bot once wrote or read there as root
#      (its build log, its stamps, the solver's answer).  The plant is
#      seen in the layer while the patch builds (the fixture has teeth),
#      the host file is untouched after, and the review is the patch's
#      own (console-changed).
#   2. A patch that deletes the top-level Makefile (with a boot message
#      changed, so that it is built): build-failed, saying why, and the
#      tree has its Makefile again once the test ends.
#   3. A normal patch right after: answered (console-changed).
#   4. The tree left at that patch's commit, as a test killed midway
#      would leave it: `printkbot setup` repairs it, and so does the next
#      `printkbot test` on its own, which answers.
source "$(dirname "$0")/lib.sh"
target=/var/tmp/printkbot-e2e-kconfig-target
at_exit rm -f "$target"

lab_setup
(umask 077; printf 'root only, as it was before the patch\n' >"$target")
chmod 600 "$target"
touch -d @1000000000 "$target"
before=$(stat -c '%s %Y %a' "$target"; sha256sum <"$target")

# 1. the Kconfig plant, watched in the layer's upper dir while it builds.
# The layer (an overlay on a tmpfs) is mounted in the bot's own mount
# namespace: the watcher looks from inside it (nsenter, util-linux).
$bot test --json tests/data/hostile/kconfig-symlinks.patch >"$work/kconfig.json" 2>"$work/kconfig.err" &
pid=$!
seen=""
planted() {
	nsenter --target "$pid" --mount sh -c 'find "$1"/layers/*/upper -maxdepth 1 -type l \
		-name printkbot-build.log -lname "$2"' sh "$PRINTKBOT_CACHE" "$target" 2>/dev/null | grep -q .
}
while kill -0 "$pid" 2>/dev/null; do
	[ -z "$seen" ] && planted && seen=yes
	sleep 0.5
done
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$work/kconfig.rc"
after=$(stat -c '%s %Y %a' "$target"; sha256sum <"$target")
check "kconfig: the patch planted its links in the build dir's layer while it built" [ "$seen" = yes ]
check "kconfig: the root-only host file is untouched ($after)" [ "$before" = "$after" ]
check "kconfig: the test ended by itself (exit $rc)" [ "$rc" -le 1 ]
check "kconfig: no layer is left" bash -c "! ls -A '$PRINTKBOT_CACHE/layers' 2>/dev/null | grep -v '^probe' | grep -q ."

# 2. a patch that deletes the top Makefile: made from the lab's own tree
lab_git show printkbot-base:Makefile >"$work/Makefile.base"
python3 - "$work/Makefile.base" tests/data/test/text-change.patch >"$work/delete-makefile.patch" <<'PY'
import sys
makefile = open(sys.argv[1]).read().splitlines()
change = open(sys.argv[2]).read()
head, _, rest = change.partition("diff --git ")
head = head.replace("Subject: [PATCH] x86/e820: say the PCI gap is free",
                    "Subject: [PATCH] kbuild: remove the top Makefile, and say the PCI gap is free")
head = head.replace("<text-change@", "<delete-makefile@")
diff, _, tail = rest.partition("\n-- \n")
out = [head + "diff --git " + diff,
       "diff --git a/Makefile b/Makefile",
       "deleted file mode 100644",
       "--- a/Makefile",
       "+++ /dev/null",
       "@@ -1,%d +0,0 @@" % len(makefile)]
out += ["-" + l for l in makefile]
print("\n".join(out) + "\n-- \n2.39.5\n")
PY
keep delete json $bot test --json "$work/delete-makefile.patch"
has_makefile() { lab_locked test -f "$tree/Makefile"; }
check "delete: the tree has its top Makefile again after the test" has_makefile

# 3. a normal patch right after
keep normal json $bot test --json tests/data/test/text-change.patch

# 4. the tree left at the Makefile-less commit, as a killed test leaves it
bad=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["after"]["commit"])' "$work/delete.json")
lab_git checkout -q --detach "$bad"
check "wedged: the tree has no top Makefile now" bash -c "! test -f '$tree/Makefile'"
$bot setup >"$work/setup.out" 2>&1 || fail "setup on the wedged tree" "$work/setup.out"
check "wedged: setup put the top Makefile back" has_makefile
lab_git checkout -q --detach "$bad"
keep again json $bot test --json tests/data/test/text-change.patch
check "wedged: the next test put the top Makefile back" has_makefile

python3 - "$work" <<'PY'
import json, os, sys
from e2elib import check, done, flat
work = sys.argv[1]
def load(name):
    return json.load(open(os.path.join(work, name + ".json"))), int(open(os.path.join(work, name + ".rc")).read())

m = json.load(open(os.path.join(work, "kconfig.json")))
check(m["verdict"] == "console-changed" and m["after"]["layered"],
      "kconfig: built in a layer, the review is the patch's own (%s)" % m["verdict"])
m, rc = load("delete")
errors = flat(m["after"].get("build_errors") or "")
check(m["verdict"] == "build-failed" and "no top-level Makefile" in errors,
      "delete: build-failed, saying the tree has no top Makefile (%s: %r)" % (m["verdict"], errors[:200]))
check(m["before"]["built"] and not m["after"]["built"], "delete: the base built, the patched tree did not")
for name in ("normal", "again"):
    m, rc = load(name)
    check(m["verdict"] == "console-changed" and rc == 1,
          "%s: the next patch is answered (%s, exit %d)" % (name, m["verdict"], rc))
done()
PY
checks_end "$work/kconfig.err" "$work/delete.err" "$work/again.err"
passed
