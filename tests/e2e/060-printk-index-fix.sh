#!/usr/bin/env bash
# End to end: the kernel fix kernel/0001-printk-index-*.patch, booted.
# The base kernel and the base with the patch each boot with
# printkbot.index_reads=1, so the guest init reads the printk index with
# plain read(2)s of 128 KiB, 4 KiB, 1 KiB and 100 bytes besides its exact
# lseek reader, and logs what each got: on the base every plain size loses
# entries, with the patch none and the text is the lseek reader's byte for
# byte, and the lseek reader gives the same index on both kernels.  The
# patch applies to the lab's tree and passes its checkpatch.pl --strict.
# The patched commit is kept in the lab's repository as the tag
# printkbot-test-index-fix (`printkbot boot printkbot-test-index-fix`).
source "$(dirname "$0")/lib.sh"
# printkbot boot leaves its commit checked out; the lab goes back to the base
at_exit lab_git checkout -q -f --detach printkbot-base
patch=$src/kernel/0001-printk-index-Do-not-skip-an-entry-when-a-read-resume.patch

lab_setup
# setup rebuilds the guest init only when qemu/init.c is newer than the
# initramfs, and the cache is shared by checkouts: one with an init that
# has no index_reads switch may have built it last.
if ! grep -q 'printkbot.index_reads=1' "$PRINTKBOT_CACHE/guest/init"; then
	touch qemu/init.c
	lab_setup
fi

# checkpatch.pl --strict of the tree: no error, no check, and no warning
# but UNKNOWN_COMMIT_ID: the lab's tree is one imported commit without
# mainline's history, so the Fixes: commit (337015573718, v5.15's "printk:
# Userspace format indexing support") cannot be looked up in it.
checkpatch() { (cd "$tree" && ./scripts/checkpatch.pl --strict --show-types "$patch"); }
lab_locked checkpatch >"$work/checkpatch.txt" || true
python3 - <<'PY'
import re, sys
from e2elib import text
out = text("checkpatch.txt")
total = re.search(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", out)
types = set(re.findall(r"^(?:ERROR|WARNING|CHECK):([A-Z_]+):", out, re.M))
ok = total and total.group(1) == "0" and total.group(3) == "0" and types <= {"UNKNOWN_COMMIT_ID"}
print(("ok   " if ok else "FAIL ") + "checkpatch.pl --strict: %s, types %s" %
      (total.group(0) if total else "no total line", sorted(types) or "none"))
if not ok:
    print(out); sys.exit(1)
PY

# The patched kernel: a commit on the base made with a scratch index, so the
# lab's working tree is only ever checked out by printkbot boot.
commit_fix() {
	local fixed
	export GIT_INDEX_FILE=$work/index
	git -C "$tree" read-tree printkbot-base
	git -C "$tree" apply --cached "$patch"
	fixed=$(git -C "$tree" -c user.name=printkbot -c user.email=printkbot@invalid \
		commit-tree "$(git -C "$tree" write-tree)" -p printkbot-base \
		-m "printk: index: Do not skip an entry when a read resumes")
	unset GIT_INDEX_FILE
	git -C "$tree" tag -f printkbot-test-index-fix "$fixed" >/dev/null
}
lab_locked commit_fix

"$bot" boot --json --cmdline printkbot.index_reads=1 printkbot-base >"$work/base.json"
"$bot" boot --json --cmdline printkbot.index_reads=1 printkbot-test-index-fix >"$work/fixed.json"

python3 - <<'PY'
import re, sys
from e2elib import check, done, fails, model
base, fixed = model("base"), model("fixed")
line = re.compile(r"printkbot-init: index_reads (?:lseek|read=(\d+)) entries=(\d+) bytes=(\d+)"
                  r"(?: lost=(-?\d+) identical=(yes|no))?$")
def reads(m):
    """{0: the lseek reader, size: a plain reader} -> (entries, bytes, lost, identical)"""
    out = {}
    for r in m["records"]:
        g = line.match(r["text"])
        if g:
            out[int(g.group(1) or 0)] = (int(g.group(2)), int(g.group(3)),
                                         int(g.group(4) or 0), g.group(5) != "no")
    return out
sizes = [131072, 4096, 1024, 100]
b, f = reads(base), reads(fixed)
for name, m, r in (("base", base, b), ("fixed", fixed, f)):
    check(m["boot"]["status"] == "ok" and m["boot"]["capture_complete"], "%s: booted, capture complete" % name)
    check(sorted(r) == [0] + sorted(sizes), "%s: the init logged the lseek reader and every size (%s)" % (name, sorted(r)))
if fails: sys.exit(1)
entries, size = b[0][0], b[0][1]
print("the index: %d entries, %d bytes (lseek reader)" % (entries, size))
print("%10s %14s %14s" % ("read size", "base: lost", "fixed: lost"))
for s in sizes:
    print("%10d %14d %14d" % (s, b[s][2], f[s][2]))
check(entries > 500 and len(base["index"]) == entries,
      "base: the bot's own index (lseek reader) has the %d entries the init counted" % len(base["index"]))
check(f[0][:2] == b[0][:2] and fixed["index"] == base["index"],
      "the lseek reader gives the same index on both kernels, entry for entry")
for s in sizes:
    check(b[s][2] > 0 and not b[s][3], "base: read(2) of %d bytes loses %d entries" % (s, b[s][2]))
    check(f[s] == (entries, size, 0, True), "fixed: read(2) of %d bytes gives every entry, text identical (%s)" % (s, f[s]))
check(b[100][2] >= b[1024][2] >= b[4096][2], "base: shorter reads lose more (restarts are per refill)")
done()
PY
passed
