/*
 * board.h - the QEMU boards whose hardware a patched driver runs on
 * (qemu/boards): a patch to such a driver is built for the board's
 * architecture and booted on that machine, so that the driver probes and
 * its messages are compared like any boot message.
 *
 * A row: a path prefix of the kernel tree, the architecture (arch.h),
 * QEMU's machine, then key=value words (dtb=, console=, capture=,
 * serials=, memory=, smp=) and the CONFIG_ symbols the board needs beyond
 * the patch's own files (its platform, a watchdog to power off by).  A
 * row whose machine is its architecture's own (arm64's virt) with nothing
 * else sends the patch to that architecture's lab as it is.
 *
 * A board changes only how a kernel boots and which symbols its derived
 * config wants (derive.h): its lab (lab.h's board) is its architecture's
 * lab, its config's name says the board, so its boots, noise masks and
 * derived build dirs (each started as a copy of the nearest built one)
 * are its own.
 */
#ifndef PK_BOARD_H
#define PK_BOARD_H

#include <glib.h>
#include <stdbool.h>

#include "base/patch.h"
#include "lab/arch.h"

struct pk_board {
	char *prefix;                /* the path prefix of the driver whose hardware the board has */
	const struct pk_arch *arch;  /* what its kernel is built for */
	char *machine;               /* QEMU's -machine ("raspi3b"); NULL: the architecture's own, as it is */
	char *dtb;                   /* its device tree under arch/<karch>/boot/dts/ ("broadcom/x.dtb"),
	                                a make target of the build; NULL: QEMU makes one (virt) */
	char *console;               /* console= ("ttyS1"): the architecture's when NULL */
	char *capture_port;          /* printkbot.capture= ("ttyAMA0"): the architecture's when NULL */
	bool capture_first;          /* serials=capture,console: QEMU's first -serial carries the
	                                capture, its second the console; else the console's first */
	char *memory;                /* -m ("1G"): 256 when NULL */
	char *smp;                   /* -smp ("4", what the board has): the lab's 2 when NULL */
	char **symbols;              /* the CONFIG_ symbols it needs (without CONFIG_), NULL-terminated */
	char *row;                   /* "qemu/boards:12", for logs and errors */
};

/*
 * The first row of datadir's qemu/boards whose prefix the patch touches:
 * *out points at it (the table is read once per process and kept, so the
 * pointer lasts as long as the process, as arch.h's do), NULL when no row
 * matches.  A row that names its architecture's own machine has a NULL
 * machine: the patch goes to that architecture's lab as it is.  -1 with
 * err naming the line of a malformed row.
 */
int pk_board_for_patch(const struct pk_board **out, const char *datadir, const struct pk_patch *patch,
		       GError **err);

/* The rows of text (a qemu/boards file, named path in errors) into boards (struct pk_board*, freed by it). */
int pk_board_parse(GPtrArray *boards, const char *text, const char *path, GError **err);

void pk_board_free(struct pk_board *board);

#endif
