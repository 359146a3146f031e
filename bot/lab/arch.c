/* arch.c - the lab's architectures; see arch.h. */
#include "lab/arch.h"

#include <string.h>

#include "base/util.h"

const struct pk_arch pk_arch_x86_64 = {
	.name = "x86_64",
	.karch = "x86",
	.init_cc = "cc",
	.fragment = "kernel.config",
	/* PVH: QEMU boots the uncompressed vmlinux, no bzImage pass on every rebuild */
	.image_target = "vmlinux",
	.image = "vmlinux",
	.qemu = "qemu-system-x86_64",
	.console = "ttyS0",
	.capture_port = "ttyS1",
	.kvm = true,
	.machine = "q35",
	.tcg_cpu = "qemu64",
	.capture = (const char *const[]){ "-serial", "chardev:capture", NULL },
};

static const struct pk_arch arch_arm64 = {
	.name = "arm64",
	.karch = "arm64",
	.cross_compile = "aarch64-linux-gnu-",
	.init_cc = "aarch64-linux-gnu-gcc",
	.fragment = "kernel-arm64.config",
	/* QEMU enters an arm64 kernel by the Linux boot protocol (the DTB in x0) from Image only */
	.image_target = "Image",
	.image = "arch/arm64/boot/Image",
	.qemu = "qemu-system-aarch64",
	.console = "ttyAMA0",
	/* virt has one UART, the console's: the capture goes out on a virtio console */
	.capture_port = "hvc0",
	.kvm = false,
	.machine = "virt",
	.tcg_cpu = "cortex-a57",
	.capture = (const char *const[]){ "-device", "virtio-serial-device", "-device", "virtconsole,chardev=capture",
					  NULL },
	.debian_cc_package = "gcc-aarch64-linux-gnu",
};

static const struct pk_arch *const arches[] = { &pk_arch_x86_64, &arch_arm64 };

const struct pk_arch *pk_arch_nth(size_t i)
{
	return i < G_N_ELEMENTS(arches) ? arches[i] : NULL;
}

const struct pk_arch *pk_arch_by_name(const char *name)
{
	for (size_t i = 0; name && i < G_N_ELEMENTS(arches); i++)
		if (!strcmp(arches[i]->name, name))
			return arches[i];
	return NULL;
}

const char *pk_arch_names(void)
{
	static char *names;

	if (!names) {
		g_autoptr(GString) s = g_string_new(NULL);

		for (size_t i = 0; i < G_N_ELEMENTS(arches); i++)
			g_string_append_printf(s, "%s%s", i ? ", " : "", arches[i]->name);
		names = g_string_free(g_steal_pointer(&s), FALSE);
	}
	return names;
}

char *pk_arch_gcc(const struct pk_arch *arch)
{
	return g_strconcat(arch->cross_compile ? arch->cross_compile : "", "gcc", NULL);
}

bool pk_arch_foreign_file(const struct pk_arch *arch, const char *file)
{
	g_autofree char *own = g_strdup_printf("arch/%s/", arch->karch);

	return g_str_has_prefix(file, "arch/") && !g_str_has_prefix(file, own);
}

bool pk_arch_toolchain_ok(const struct pk_arch *arch, GError **err)
{
	g_autofree char *gcc = arch->cross_compile ? pk_arch_gcc(arch) : NULL;
	g_autofree char *found = gcc ? g_find_program_in_path(gcc) : NULL;
	g_autofree char *qemu = g_find_program_in_path(arch->qemu);

	if (gcc && !found) {
		pk_error(err, PK_ERROR_INPUT, "%s needs the cross compiler %s (Debian's %s: make deps installs it)",
			 arch->name, gcc, arch->debian_cc_package);
		return false;
	}
	if (!qemu) {
		pk_error(err, PK_ERROR_INPUT, "%s needs %s (make deps installs it)", arch->name, arch->qemu);
		return false;
	}
	return true;
}
