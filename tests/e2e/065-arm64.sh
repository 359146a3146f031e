#!/usr/bin/env bash
# End to end, long (it builds the 6.12 base for arm64 with Debian's cross
# compiler, cold the first time: about 8 minutes of 2 CPUs, 13 beside a
# CI run; and the raspi3b board's config from it, 10 minutes beside a
# series bench; 4 minutes when both are warm): the arm64 lab
# (bot/lab/arch.h, bot/lab/board.h, doc/bases.md "Architectures").
# 1. `boot --arch riscv64` is refused, naming the lab's architectures.
# 2. `setup --arch arm64` prepares the arm64 lab beside x86_64's.
# 3. `test --arch arm64` of a change to the PL011 driver's banner
#    (drivers/tty/serial/amba-pl011.c, which no x86_64 config builds: it
#    needs ARM_AMBA): console-changed, the banner seen at boot on QEMU's
#    virt machine, the arch and machine in the review, its reproduce line
#    with --arch arm64.
# 4. The same patch without --arch, on a lab whose own architecture is
#    x86_64: qemu/boards sends the PL011 driver to arm64's virt machine,
#    and the review says why (arch_why names the machine and the driver).
# 5. `test --arch x86_64`: that architecture alone, not-built, as before
#    there was an arm64 lab.
# 6. A patch of both architectures' files (the PL011 banner and a comment
#    in arch/x86/kernel/setup.c, which no arm64 kernel builds): answered
#    on arm64, console-changed, the x86 file's coverage x86_64's kernel's
#    ("booted", "on x86_64: ...").
# 7. A message the BCM2835 mini UART's driver (8250_bcm2835aux) prints
#    once probed: qemu/boards sends it to QEMU's raspi3b board (its own
#    derived config with ARCH_BCM2835, the device tree built beside the
#    Image, the console on the mini UART and the capture on the PL011):
#    console-changed, the new line seen at boot, machine raspi3b.
# 8. A patch whose x86_64 kernel shows a change (the e820 PCI gap
#    message) and that touches arch/arm64/kernel/setup.c too, which no
#    x86_64 kernel builds: answered on x86_64, console-changed, and the
#    arm64 file's coverage arm64's kernel's ("on arm64: ...").
# 9. A conversion in hvcs.c, which needs PPC_PSERIES: not-built on
#    x86_64, and no arm64 kernel built for it, since only arch/powerpc/
#    defines PPC_PSERIES (the solver's "only-on"); the reason says both.
source "$(dirname "$0")/lib.sh"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc (make deps installs it)"
command -v qemu-system-aarch64 >/dev/null || skip "no qemu-system-aarch64 (make deps installs it)"

lab_setup
keep badarch txt "$bot" boot --arch riscv64
keep setup txt "$bot" setup --arch arm64
keep arm json "$bot" test --json --arch arm64 tests/data/test/pl011-banner.patch
keep auto json "$bot" test --json tests/data/test/pl011-banner.patch
keep x86 json "$bot" test --json --arch x86_64 tests/data/test/pl011-banner.patch
keep split json "$bot" test --json tests/data/test/pl011-and-x86-comment.patch
keep rpi json "$bot" test --json tests/data/test/bcm2835aux-probe-line.patch
keep mixed json "$bot" test --json tests/data/test/e820-and-arm64-comment.patch
keep hvcs json "$bot" test --json tests/data/test/hvcs-pr-err.patch

python3 - <<'PY'
from e2elib import check, done, model, rc, text

check(rc("badarch") != 0 and "--arch riscv64: the lab builds for x86_64, arm64" in text("badarch.err"),
      "an arch the lab does not know is refused, the known ones named")
check(rc("setup") == 0 and "kernel lab for arm64 ready" in text("setup.txt"), "setup --arch arm64 prepared it")
a = model("arm")
banner = [c for c in a.get("console", []) if c["file"] == "drivers/tty/serial/amba-pl011.c"]
check(rc("arm") == 1 and a["verdict"] == "console-changed", "on arm64 the PL011 patch is console-changed")
check(len(banner) == 1 and banner[0]["new_text"].endswith("(ARM PrimeCell)"), "the banner's new text was seen at boot")
check(a["arch"] == "arm64" and a["machine"] == "virt", "the review says arm64 on QEMU's virt machine")
check("--arch arm64" in a["reproduce"] and a["setup"] == "printkbot setup --arch arm64",
      "its reproduce lines name the arch")
auto = model("auto")
check(rc("auto") == 1 and auto["verdict"] == "console-changed" and auto["arch"] == "arm64",
      "without --arch the PL011 patch went to arm64 by itself (%s on %s)" % (auto["verdict"], auto["arch"]))
check("virt machine has the hardware" in (auto.get("arch_why") or "") and "amba-pl011" in auto["arch_why"],
      "the review says why it was tested on arm64: %s" % auto.get("arch_why"))
x = model("x86")
check(x["verdict"] == "not-built" and x["arch"] == "x86_64" and not x.get("arch_why"),
      "with --arch x86_64 the same patch is not-built, and stays there")
split = model("split")
cov = {c["file"]: c for c in split.get("coverage", [])}
check(rc("split") == 1 and split["verdict"] == "console-changed" and split["arch"] == "arm64",
      "a patch of both architectures' files is answered on arm64 (%s on %s)" % (split["verdict"], split["arch"]))
x86_file = cov.get("arch/x86/kernel/setup.c", {})
check(x86_file.get("state") in ("built", "booted") and (x86_file.get("reason") or "").startswith("on x86_64"),
      "its x86 file's coverage is x86_64's kernel's, saying so: %s" % x86_file)
check(cov.get("drivers/tty/serial/amba-pl011.c", {}).get("state") == "booted", "its PL011 file booted on arm64")
rpi = model("rpi")
probed = [c for c in rpi.get("console", []) if c["file"] == "drivers/tty/serial/8250/8250_bcm2835aux.c"]
check(rc("rpi") == 1 and rpi["verdict"] == "console-changed" and rpi["arch"] == "arm64" and
      rpi["machine"] == "raspi3b", "the mini UART patch was booted on raspi3b (%s on %s, %s)" % (
          rpi["verdict"], rpi.get("arch"), rpi.get("machine")))
check(len(probed) == 1 and "mini UART registered as ttyS" in probed[0]["new_text"],
      "the driver's new line was seen at boot: %s" % probed)
derived = rpi.get("config_derived") or ""
check("CONFIG_ARCH_BCM2835=y" in derived and "CONFIG_COMPILE_TEST" not in derived,
      "its config has the board's platform, which meets the driver's dependency (no COMPILE_TEST): %s"
      % derived.replace("\n", " "))
check("raspi3b board has the hardware" in (rpi.get("arch_why") or ""),
      "the review says why: %s" % rpi.get("arch_why"))
mixed = model("mixed")
mcov = {c["file"]: c for c in mixed.get("coverage", [])}
arm_file = mcov.get("arch/arm64/kernel/setup.c", {})
check(rc("mixed") == 1 and mixed["verdict"] == "console-changed" and mixed["arch"] == "x86_64",
      "a patch whose x86_64 kernels show a change is answered there (%s on %s)" % (mixed["verdict"], mixed["arch"]))
check(arm_file.get("state") in ("built", "booted") and (arm_file.get("reason") or "").startswith("on arm64"),
      "its arm64 file's coverage is arm64's kernel's, saying so: %s" % arm_file)
hv = model("hvcs")
check(rc("hvcs") == 1 and hv["verdict"] == "not-built" and hv["arch"] == "x86_64",
      "hvcs: not-built, on x86_64 (%s on %s, exit %s)" % (hv["verdict"], hv["arch"], rc("hvcs")))
check("CONFIG_HVCS depends on PPC_PSERIES" in (hv["reason"] or "") and
      "arm64: CONFIG_HVCS needs PPC_PSERIES, which only arch/powerpc/ defines" in (hv["reason"] or ""),
      "hvcs: the reason says what each architecture lacks: %s" % hv["reason"])
check("testing it on arm64 too" not in text("hvcs.err") and "not testing on arm64 too" in text("hvcs.err"),
      "hvcs: no arm64 kernel was built for it, and the log says why")
print("figures: arm64 test %s s (before: build %s s, boot %s s; after: build %s s, boot %s s)" % (
    a["seconds"], a["before"].get("build_seconds"), a["before"].get("boot_seconds"),
    a["after"].get("build_seconds"), a["after"].get("boot_seconds")))
done()
PY
passed
