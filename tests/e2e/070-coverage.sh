#!/usr/bin/env bash
# End to end: what of a patch the tested kernel holds, and a config and
# devices per patch so that it holds what the patch touches.
#  - derived-driver (a message of drivers/ata/ahci.c, which the lab's
#    config does not compile): tested on a config derived for it (PCI,
#    BLOCK, ATA, SATA_AHCI), the file built, the change in the printk index;
#  - ahci-probe-line (libahci's version and command-slots line, printed at
#    every probe of q35's AHCI): booted, the boot-log change attributed to
#    drivers/ata/libahci.c;
#  - devices-message (8250_pci and the USB core's new-device line):
#    qemu/devices attaches a PCI 16550A, and the port it probes is in the
#    boot log; and an xHCI controller with a keyboard, whose driver the
#    config gets from the table's row: the keyboard is enumerated in every
#    boot (the guest waits for a quiet log), so the changed line is a
#    boot-log change attributed to drivers/usb/core/hub.c;
#  - arm64-message: another architecture's file is not-built on x86_64
#    (--arch x86_64: an arm64 lab set up here would otherwise test it);
#  - doc-and-code: a Documentation/ hunk beside a booted C file is applied,
#    listed as not built, and the verdict stays no-visible-change;
#  - from ../shared/corpus when it is there: the real ata-ahci conversion
#    (built, two index changes) and a samsung_tty patch (an ARM driver,
#    compiled through COMPILE_TEST);
#  - bisect of a two-commit branch (a comment, then ahci-probe-line) for
#    libahci's line: on the lab's config it would never print; the range
#    is bisected on a config derived for its diff, and the second commit
#    is named.
# Every kernel boots with 2 CPUs.  No patch of a compiled file is ever
# not-built, and none of a file not compiled is no-visible-change.
source "$(dirname "$0")/lib.sh"
data=tests/data/test
corpus=$src/../shared/corpus

lab_setup

for fix in derived-driver ahci-probe-line devices-message arm64-message doc-and-code; do
	arch=()
	[ "$fix" != arm64-message ] || arch=(--arch x86_64)
	keep "$fix" json $bot test --json "${arch[@]}" "$data/$fix.patch"
done
# the same question of the solver again: its kept answer is read, the solver
# does not run (it would write its output file in the lab's build dir anew)
solve_out=$(ls -t "$PRINTKBOT_CACHE"/build/*/.printkbot-solve | head -1)
solve_mtime=$(stat -c %Y.%y "$solve_out")
keep ahci-again json $bot test --json "$data/ahci-probe-line.patch"
check "a patch asking the solver what an earlier one asked reads the kept answer ($solve_out)" \
	test "$(stat -c %Y.%y "$solve_out")" = "$solve_mtime"
keep arm64-text txt $bot test --arch x86_64 "$data/arm64-message.patch"
if [ -d "$corpus" ]; then
	keep corpus-ahci json $bot test --json "$corpus/patches/ata-ahci-printk-to-dev_info.patch"
	python3 - "$corpus/linux-serial-1500.mbox.xz" "$work/samsung.mbox" <<'PY'
import lzma, mailbox, sys, tempfile
with tempfile.NamedTemporaryFile(suffix=".mbox") as tmp:
    tmp.write(lzma.open(sys.argv[1]).read())
    tmp.flush()
    for m in mailbox.mbox(tmp.name):
        if "aXny9km6N1v9eoXU@zall.org" in (m["Message-ID"] or ""):
            open(sys.argv[2], "w").write(m.as_string(unixfrom=True))
            break
PY
	keep corpus-samsung json $bot test --json "$work/samsung.mbox"
fi
# the solver alone, on the lab's .config: USB's dependency USB_ARCH_HAS_HCD has no
# prompt and is y by default inside "if USB_SUPPORT", so USB_SUPPORT is what to set;
# HVCS depends on PPC_PSERIES, which only arch/powerpc/ defines: no x86 or arm64 config has it
labcfg=$PRINTKBOT_CACHE/build/$(sha256sum qemu/kernel.config | cut -c1-12)-$(
	awk '$1 == "VERSION" {v = $3} $1 == "PATCHLEVEL" {print v "." $3; exit}' "$tree/Makefile")/.config
lab_locked sh -c "cd '$tree' && env srctree=. ARCH=x86 SRCARCH=x86 CC=gcc LD=ld HOSTCC=gcc HOSTCXX=g++ \
	/usr/bin/python3 '$src/qemu/kconfig-enable.py' '$work/solve-usb.txt' '$labcfg' USB HVCS"

# a user's branch: a comment, then libahci's line (as e2e 040 makes its branch)
user=$work/linux
lab_locked git clone -q --shared --no-checkout "$tree" "$user"
export GIT_AUTHOR_NAME='Jane Developer' GIT_AUTHOR_EMAIL=jane@example.org
export GIT_COMMITTER_NAME='Jane Developer' GIT_COMMITTER_EMAIL=jane@example.org
GIT_INDEX_FILE=$work/scratch-index git -C "$user" read-tree printkbot-base
parent=$(git -C "$user" rev-parse printkbot-base)
for fix in comment-only ahci-probe-line; do
	GIT_INDEX_FILE=$work/scratch-index git -C "$user" apply --cached "$src/$data/$fix.patch"
	parent=$(git -C "$user" commit-tree "$(GIT_INDEX_FILE=$work/scratch-index git -C "$user" write-tree)" \
		-p "$parent" -m "$fix")
	echo "$parent" >"$work/commit-$fix"
done
git -C "$user" update-ref refs/heads/ahci "$parent"
keep bisect json $bot bisect --json --repo "$user" printkbot-base..ahci --message 'command slots'

sqlite3 -separator '|' "$PRINTKBOT_DB" "SELECT t.verdict, c.seq, c.file, c.state, c.reason FROM test_coverage c
	JOIN tests t ON t.id = c.test_id ORDER BY t.id, c.seq" >"$work/store.txt"
sqlite3 "$PRINTKBOT_DB" "SELECT DISTINCT text FROM record_lines WHERE text LIKE 'smp: Brought up%'
	OR text LIKE '%at I/O % is a 16550A%'" >"$work/records.txt"

python3 - "$corpus" <<'PY'
import os, sys
import e2elib
from e2elib import check, done
def cov(m, f):
    return next((c for c in m["coverage"] if c["file"] == f), None)

m, rc = e2elib.model("derived-driver"), e2elib.rc("derived-driver")
check(m["verdict"] == "console-changed" and rc == 1, "ahci: console-changed, exit 1 (%s, %d)" % (m["verdict"], rc))
check("CONFIG_SATA_AHCI=y" in (m["config_derived"] or "") and "CONFIG_ATA=y" in m["config_derived"],
      "ahci: tested on a config derived for it (%s)" % m["config_derived"])
c = cov(m, "drivers/ata/ahci.c")
check(c and c["state"] == "built", "ahci: drivers/ata/ahci.c built (%s)" % c)
check(any(i["file"] == "drivers/ata/ahci.c" and "64-bit" in (i.get("new_format") or i.get("format") or str(i))
          for i in m["index"]), "ahci: the new text is in the printk index (%s)" % m["index"])
check(any(f["kind"] == "text-changed" and f["confirmation"] == "in-index-only" for f in m["findings"]),
      "ahci: the static finding is confirmed by the index")

m = e2elib.model("ahci-probe-line")
c = cov(m, "drivers/ata/libahci.c")
check(m["verdict"] == "console-changed" and c and c["state"] == "booted",
      "probe line: console-changed, libahci.c booted (%s, %s)" % (m["verdict"], c))
check(any(x["file"] == "drivers/ata/libahci.c" and "cmd slots" in x["new_text"] for x in m["console"]),
      "probe line: the boot-log change is attributed to drivers/ata/libahci.c (%s)" % m["console"])
again = e2elib.model("ahci-again")
check(again["verdict"] == m["verdict"] and again["config_hash"] == m["config_hash"] and
      again["config_derived"] == m["config_derived"],
      "probe line again, from the kept answer: the same config and verdict (%s, %s)" % (again["verdict"], again["config_hash"]))

m = e2elib.model("devices-message")
c = cov(m, "drivers/tty/serial/8250/8250_pci.c")
check(m["devices"] == "pci-serial, qemu-xhci, usb-kbd",
      "devices: booted with a PCI 16550A and a keyboard on xHCI (%s)" % m["devices"])
check(c and c["state"] in ("built", "booted") and m["verdict"] == "console-changed",
      "8250_pci: compiled, its index change reported (%s, %s)" % (m["verdict"], c))
records = e2elib.text("records.txt")
check("is a 16550A" in records and "0000:00:" in records, "8250_pci: the PCI port probed at boot")
check("CONFIG_USB_XHCI_HCD=y" in (m["config_derived"] or ""),
      "usb: the xHCI driver the table's row names is in the config (%s)" % m["config_derived"])
c = cov(m, "drivers/usb/core/hub.c")
hub = [(x["kind"], x["new_text"]) for x in m["console"] if x["file"] == "drivers/usb/core/hub.c"]
check(c and c["state"] == "booted" and any(k in ("text-changed", "message-added") and
      t == "usb 1-1: new high-speed USB device, number 2, using xhci_hcd" for k, t in hub),
      "usb: the keyboard enumerated, the new line in the boot log from hub.c (%s, %s)" % (c, hub))
check("smp: Brought up 1 node, 2 CPUs" in records, "the guest brings up 2 CPUs (%s)" % records)

m, rc = e2elib.model("arm64-message"), e2elib.rc("arm64-message")
c = cov(m, "arch/arm64/kernel/cpufeature.c")
check(m["verdict"] == "not-built" and rc == 1, "arm64: not-built, exit 1 (%s, %d)" % (m["verdict"], rc))
check(c and c["state"] == "not-built" and "another architecture" in (c["reason"] or ""),
      "arm64: the file is not-built as another architecture's code (%s)" % c)
check(not m["config_derived"], "arm64: no config is derived for another architecture")
text = e2elib.flat(e2elib.text("arm64-text.txt"))
check("verdict: not-built" in text and "arch/arm64/kernel/cpufeature.c: not-built" in text,
      "arm64: the text review says not-built and lists the file")

m, rc = e2elib.model("doc-and-code"), e2elib.rc("doc-and-code")
check(m["verdict"] == "no-visible-change" and rc == 0,
      "doc-and-code: not refused, no-visible-change, exit 0 (%s %s, %d)" % (m["verdict"], m["reason"], rc))
c = cov(m, "init/initramfs.c")
check(c and c["state"] == "booted", "doc-and-code: init/initramfs.c booted (%s)" % c)
d = cov(m, "Documentation/admin-guide/kernel-parameters.txt")
check(d and d["state"] == "not-built" and "documentation" in (d["reason"] or ""),
      "doc-and-code: the documentation is listed as not built (%s)" % d)

if os.path.isdir(sys.argv[1]):
    m = e2elib.model("corpus-ahci")
    c = cov(m, "drivers/ata/ahci.c")
    changed = [i for i in m["index"] if i["file"] == "drivers/ata/ahci.c"]
    check(c and c["state"] == "built" and len(changed) == 2,
          "corpus ahci: built, its two messages changed in the index (%s, %s)" % (c, changed))
    check(any("%s %s: " in str(i) for i in changed), "corpus ahci: the device prefix comes with dev_info()")
    m = e2elib.model("corpus-samsung")
    c = cov(m, "drivers/tty/serial/samsung_tty.c")
    check("CONFIG_COMPILE_TEST=y" in (m["config_derived"] or "") and "CONFIG_SERIAL_SAMSUNG=y" in m["config_derived"],
          "samsung: an ARM driver built through COMPILE_TEST (%s)" % m["config_derived"])
    check(c and c["state"] == "built" and m["verdict"] != "not-built",
          "samsung: samsung_tty.c built (%s, %s)" % (m["verdict"], c))
else:
    print("skip the corpus patches: no ../shared/corpus")

answer = e2elib.text("solve-usb.txt").splitlines()
solved = [l for l in answer if l.startswith("CONFIG_")]
check(solved == ["CONFIG_USB_SUPPORT=y", "CONFIG_USB=y"],
      "solver: USB gets its menu USB_SUPPORT, and not the promptless USB_ARCH_HAS_HCD (%s)" % solved)
check("# only-on: HVCS: PPC_PSERIES: powerpc" in answer,
      "solver: HVCS cannot be set, and needs PPC_PSERIES, which only arch/powerpc/ defines (%s)" % answer)

b, rc = e2elib.model("bisect"), e2elib.rc("bisect")
want = e2elib.text("commit-ahci-probe-line").strip()
check("CONFIG_SATA_AHCI=y" in (b["config_derived"] or ""),
      "bisect: the range is bisected on a config derived for its diff (%s)" % b["config_derived"])
check(rc == 0 and b["changes"] and all(c.get("commit") == want for c in b["changes"]),
      "bisect: libahci's line is found, brought by the second commit %.12s (exit %d, %s)"
      % (want, rc, [(c.get("commit"), c.get("change")) for c in b["changes"]]))

rows = [l.split("|") for l in e2elib.text("store.txt").splitlines()]
check(not any(r[0] == "no-visible-change" and r[3] == "not-built" and r[2].endswith((".c", ".h")) for r in rows),
      "store: no C file that was not built is behind a no-visible-change (%s)" % rows)
check(any(r[0] == "not-built" and r[2] == "arch/arm64/kernel/cpufeature.c" for r in rows),
      "store: the arm64 test keeps its file's coverage")
done()
PY
passed
