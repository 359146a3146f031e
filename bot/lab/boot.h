/*
 * boot.h - the boot stage: run a built kernel in QEMU and capture what it
 * printed.
 *
 * ttyS0 is the human-readable console (kept whole, capped); ttyS1 carries
 * the framed capture written by qemu/init.c, parsed into a pk_capture.  The
 * guest has no network, no disk, and no host file access beyond the kernel
 * and the initramfs.  KVM is probed once per cache dir and used when it
 * works; TCG otherwise.  A panic (seen on the console) or a hang (the
 * timeout) is a result: status PK_BOOT_PANIC or PK_BOOT_TIMEOUT with the
 * relevant console lines in detail.  QEMU is always reaped.
 */
#ifndef PK_BOOT_H
#define PK_BOOT_H

#include "analysis/kmsg.h"
#include "lab/lab.h"

enum pk_boot_status {
	PK_BOOT_OK,       /* booted to init, capture complete, powered off */
	PK_BOOT_PANIC,    /* the kernel panicked */
	PK_BOOT_TIMEOUT,  /* no end before the deadline; QEMU was killed */
	PK_BOOT_FAILED,   /* QEMU failed, or the capture is missing or cut */
};

struct pk_boot_opts {
	const char *vmlinux;
	double timeout;        /* seconds, 0 = 60 */
	const char *extra_cmdline; /* appended to the kernel command line, or NULL */
};
#define PK_BOOT_OPTS_INIT { 0 }

struct pk_boot_result {
	enum pk_boot_status status;
	double seconds;
	const char *accel;        /* "kvm" or "tcg", "none" when QEMU was not started (static string) */
	char *cmdline;            /* the kernel command line used */
	char *console;            /* ttyS0 output */
	char *detail;             /* panic lines, QEMU's complaint, or what was cut */
	bool cut;                 /* the console or the capture reached its limit */
	struct pk_capture *capture; /* records and index (possibly partial); never NULL on success */
};

/* Boot once.  Returns -1 only when QEMU could not be started at all. */
int pk_boot_kernel(struct pk_boot_result *out, const struct pk_lab *lab,
		   const struct pk_boot_opts *opts, GError **err);
void pk_boot_result_clear(struct pk_boot_result *res);

/* "ok", "panic", "timeout", "failed". */
const char *pk_boot_status_name(enum pk_boot_status status);

/* The panic lines of a console log ("Kernel panic - not syncing" and what led to it), or NULL. */
char *pk_boot_find_panic(const char *console);

#endif
