/*
 * arch.h - the architectures the lab builds and boots kernels for, and
 * what differs between them: Kbuild's ARCH and cross compiler, the config
 * fragment merged on tinyconfig, the image QEMU boots, QEMU's machine,
 * the console and the port the guest's capture goes out on.
 *
 * x86_64 is the lab's own and the default: a lab opened without an
 * architecture is x86_64's, with the paths it always had, so nothing of
 * an existing lab moves.  arm64 boots on QEMU's virt machine, a PL011
 * console (ttyAMA0) and the capture on a virtio console (hvc0): virt has
 * one UART only.
 */
#ifndef PK_ARCH_H
#define PK_ARCH_H

#include <glib.h>
#include <stdbool.h>

struct pk_arch {
	const char *name;           /* "x86_64", "arm64": what the config, the store and reviews say */
	const char *karch;          /* Kbuild's ARCH= (and arch/<karch>/): "x86", "arm64" */
	const char *cross_compile;  /* CROSS_COMPILE= for the kernel, or NULL: the host's compiler */
	const char *init_cc;        /* the C compiler of the static guest init (Debian's cross gcc) */
	const char *fragment;       /* under the data dir: qemu/kernel.config, qemu/kernel-arm64.config */
	const char *image_target;   /* what make builds: "vmlinux" (PVH entry), "Image" */
	const char *image;          /* the image QEMU boots, in the build dir */
	const char *qemu;           /* the QEMU binary */
	const char *console;        /* the console's device, on the command line as console= */
	const char *capture_port;   /* the guest's device of the capture (qemu/init.c), given to it as
	                               printkbot.capture= unless it is the default, ttyS1 */
	bool kvm;                   /* KVM may serve (the host's own architecture); else TCG alone */
	const char *machine;        /* QEMU's -machine */
	const char *tcg_cpu;        /* QEMU's -cpu under TCG (KVM: host) */
	const char *const *capture; /* QEMU's arguments that put the chardev "capture" on capture_port,
	                               NULL-terminated */
	const char *debian_cc_package; /* the Debian package of the cross compiler, for errors; NULL: none */
};

/* The lab's own architecture, x86_64. */
extern const struct pk_arch pk_arch_x86_64;

/* The architecture named name ("x86_64", "arm64"), or NULL. */
const struct pk_arch *pk_arch_by_name(const char *name);

/* Every architecture's name, in the table's order, for help and errors ("x86_64, arm64"). */
const char *pk_arch_names(void);

/* The table's i-th architecture, x86_64 first (the lab's default); NULL past the last. */
const struct pk_arch *pk_arch_nth(size_t i);

/* The kernel's C compiler for arch: "gcc", or Debian's cross gcc ("aarch64-linux-gnu-gcc").  Caller frees. */
char *pk_arch_gcc(const struct pk_arch *arch);

/*
 * Whether file (a path of the kernel tree) is another architecture's
 * code, which no config of arch compiles: arch/<other>/... .
 */
bool pk_arch_foreign_file(const struct pk_arch *arch, const char *file);

/* Whether the cross compiler arch needs is installed (a host arch needs none). */
bool pk_arch_toolchain_ok(const struct pk_arch *arch, GError **err);

#endif
