/* boot.c - QEMU boots with structured capture; see boot.h. */
#include "lab/boot.h"
#include "base/profile.h"
#include "base/proc.h"
#include "lab/sandbox.h"
#include "base/beneath.h"
#include "base/util.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* what every boot's command line says, after console= (the lab's arch's, arch.h) */
#define BASE_CMDLINE "ignore_loglevel panic=-1 sched_verbose"

/*
 * QEMU's own seccomp filter: no obsolete syscalls, no set*uid, no fork or
 * exec, no scheduler or resource changes.  Debian's QEMU is built with
 * libseccomp; -sandbox is refused at start-up by one that is not.
 */
#define QEMU_SECCOMP "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"

/*
 * Run a QEMU command line, inside the sandbox when it is active
 * (pk_sandbox_run() decides): the kernel and initramfs (ro) read-only,
 * dir (may be NULL: the capture file's) writable, /dev/kvm when it is
 * used, nothing else of the host.
 */
static int run_qemu(struct pk_proc_result *out, const char *const *argv, const char *const *ro,
		    const char *dir, bool kvm, struct pk_proc_opts *opts, GError **err)
{
	const char *rw[] = { dir, NULL };
	const char *dev[] = { "/dev/kvm", NULL };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .dev = kvm ? dev : NULL,
				 .group_of = kvm ? "/dev/kvm" : NULL };

	return pk_sandbox_run(out, NULL, &sb, argv, opts, err);
}

static const char *const status_names[] = { "ok", "panic", "timeout", "failed" };

const char *pk_boot_status_name(enum pk_boot_status status)
{
	return status_names[status];
}

void pk_boot_result_clear(struct pk_boot_result *res)
{
	g_free(res->cmdline);
	g_free(res->console);
	g_free(res->detail);
	pk_capture_free(res->capture);
	memset(res, 0, sizeof(*res));
}

/*
 * KVM is broken on some hosts in ways /dev/kvm cannot tell (QEMU aborts on
 * an MSR at vCPU reset), so start a paused machine and see if it survives.
 * The answer is kept in the cache dir: the probe costs seconds.
 */
static const char *probe_accel(const struct pk_lab *lab)
{
	g_autofree char *stamp = g_build_filename(lab->cache, "accel", NULL);
	g_autofree char *known = NULL;
	/* KVM is x86_64's here: the only arch of the host's own */
	const char *argv[] = { pk_arch_x86_64.qemu, "-accel", "kvm", "-machine", pk_arch_x86_64.machine,
			       "-cpu", "host", "-sandbox", QEMU_SECCOMP, "-nodefaults", "-no-user-config",
			       "-display", "none", "-monitor", "none", "-S", NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	const char *accel = "tcg";
	int fd;

	/* KVM runs the host's own architecture only */
	if (!pk_lab_arch(lab)->kvm)
		return "tcg";
	if (g_file_get_contents(stamp, &known, NULL, NULL))
		return g_str_has_prefix(known, "kvm") ? "kvm" : "tcg";
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		opts.timeout = 6; /* still alive then: KVM works */
		if (run_qemu(&res, argv, NULL, NULL, true, &opts, NULL) == 0 && res.end == PK_PROC_TIMEOUT)
			accel = "kvm";
	}
	g_file_set_contents(stamp, accel, -1, NULL);
	return accel;
}

char *pk_boot_find_panic(const char *console)
{
	const char *p = strstr(console, "Kernel panic - not syncing");
	const char *from, *oops;
	g_auto(GStrv) lines = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	unsigned n = 0;

	if (!p)
		return NULL;
	/* Start at the oops or BUG that led there, when it is close above. */
	from = p;
	for (const char *const *m = (const char *const[]){ "BUG: ", "Oops: ", "------------[ cut here ]", NULL };
	     *m; m++) {
		oops = g_strrstr_len(console, p - console, *m);
		if (oops && p - oops < 8192 && oops < from)
			from = oops;
	}
	while (from > console && from[-1] != '\n')
		from--;
	lines = g_strsplit(from, "\n", -1);
	for (char **l = lines; *l && n < 40; l++, n++)
		g_string_append_printf(out, "%s\n", g_strchomp(*l));
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/*
 * What was cut (cuts, one per line) and what the guest's init said
 * ("guest init: " lines of problems), at the end of the console, where a
 * review's console tail shows them.
 */
static void say_at_console_end(GString *console, const char *cuts, const char *problems)
{
	g_auto(GStrv) lines = g_strsplit(cuts, "\n", -1);
	g_auto(GStrv) said = g_strsplit(problems, "\n", -1);
	bool first = true;

	for (int pass = 0; pass < 2; pass++)
		for (char **l = pass ? said : lines; *l; l++) {
			if (!**l || (pass && !g_str_has_prefix(*l, "guest init: ")))
				continue;
			if (first && console->len && console->str[console->len - 1] != '\n')
				g_string_append_c(console, '\n');
			first = false;
			g_string_append_printf(console, "[printkbot: %s]\n", *l);
		}
}

/* Whether QEMU hit the capture file's size limit: the file is as large as it. */
static bool capture_cut(const char *path, guint64 cap)
{
	struct stat st;

	return cap && stat(path, &st) == 0 && (guint64)st.st_size >= cap;
}

/* The boot's status and detail from how QEMU ended, the console and the capture. */
static void judge_boot(struct pk_boot_result *res, const struct pk_proc_result *pr, const char *cut,
		       double timeout)
{
	char *panic;

	if ((panic = pk_boot_find_panic(res->console))) {
		res->status = PK_BOOT_PANIC;
		res->detail = panic;
	} else if (pr->end == PK_PROC_TIMEOUT) {
		const char *c = res->console;
		size_t n = strlen(c);

		res->status = PK_BOOT_TIMEOUT;
		res->detail = g_strdup_printf("no power-off within %.0f s; %sconsole tail:\n%s",
					      timeout, cut, n > 1500 ? c + n - 1500 : c);
	} else if (!pk_proc_ok(pr) || !res->capture->complete) {
		g_autofree char *how = pk_proc_describe(pr);
		size_t n = strlen(res->console);

		res->status = PK_BOOT_FAILED;
		res->detail = g_strdup_printf("qemu %s; capture %s\n%s%s%s", how,
					      res->capture->complete ? "complete" : "incomplete", cut,
					      res->capture->problems->str,
					      n > 1500 ? res->console + n - 1500 : res->console);
	} else {
		res->status = PK_BOOT_OK;
		if (*cut)
			res->detail = g_strdup(cut);
	}
}

/* The guest's vCPUs (-smp below). */
#define GUEST_CPUS 2

/*
 * TCG runs both vCPUs on one host thread, in turns (thread=single), not
 * one thread each (QEMU's default on x86).  With a thread each, a vCPU
 * whose thread the host deschedules stalls the other one waiting on it
 * (an IPI, a lock): beside two busy loops on 2 CPUs boots of 2.8 s took
 * 8.0 s on average, up to 24 s, and one never reached its end within the
 * 60 s timeout (a false boot-failed); in turns they took 4.9 s, at most
 * 6.0, and quiet no longer than before (bench/boot-tcg.sh).
 */
#define TCG_ACCEL "tcg,thread=single"

/*
 * Take one of the machine's boot slots (one per GUEST_CPUS online CPUs,
 * at least one), waiting up to wait seconds for one: the fd that holds
 * it, or -1 and the boot runs unslotted (no slot file, or every slot held
 * that long: a stopped process may hold one).  Machine-wide, not per lab:
 * the workers of one machine each have their own lab.  Without slots two
 * workers on 2 CPUs ran two 2-vCPU guests at once beside their builds; a
 * descheduled vCPU stalls the other one waiting on it, and boots of 3 s
 * took 27-53 s, one past its 60 s timeout (a false boot-failed).  That
 * was with a host thread per vCPU (TCG_ACCEL now runs them in turns);
 * the slots stay until workers are measured without it.
 */
static int boot_slot_take(double wait)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *dir = pk_runtime_dir(&err);
	long slots = MAX(1L, sysconf(_SC_NPROCESSORS_ONLN) / GUEST_CPUS);
	double until = pk_now() + wait;

	if (!dir) {
		pk_info("booting without a boot slot: %s", err->message);
		return -1;
	}
	do {
		for (long i = 0; i < slots; i++) {
			g_autofree char *path = g_strdup_printf("%s/boot-slot.%ld", dir, i);
			/* in a dir only the bot's user writes: no other user holds one, no link stands there */
			int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

			if (fd < 0)
				return -1;
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				return fd;
			close(fd);
		}
		g_usleep(100000);
	} while (pk_now() < until);
	pk_info("every boot slot of this machine (%s/boot-slot.*) was held for %.0f s: "
		"booting without one", dir, wait);
	return -1;
}

int pk_boot_kernel(struct pk_boot_result *out, const struct pk_lab *lab,
		   const struct pk_boot_opts *opts, GError **err)
{
	PK_PROFILE_SCOPE("boot");
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	struct pk_limits limits = { .file_size = sc->capture_cap };
	g_autoptr(GString) cut = g_string_new(NULL);
	g_autofree char *tmpdir = NULL;
	const struct pk_arch *arch = pk_lab_arch(lab);
	const struct pk_board *board = lab->board;
	const char *capture_port = board && board->capture_port ? board->capture_port : arch->capture_port;
	g_autofree char *dtb = NULL;
	g_autofree char *cap_path = NULL, *chardev = NULL, *cmdline = NULL, *capture_word = NULL;
	g_autofree char *cap_buf = NULL;
	g_autoptr(GString) console = g_string_new(NULL);
	struct pk_proc_opts popts = PK_PROC_OPTS_INIT;
	struct pk_boot_result res = { 0 };
	struct pk_proc_result pr;
	GError *local = NULL;
	size_t cap_len = 0;

	/*
	 * The image (and a board's device tree, beside it in the build dir)
	 * come from a build dir, which the sandbox writes: handed to QEMU (its
	 * bind made by root) only as plain files of their own, never links to
	 * a host file.  Anything else is this boot's failure.
	 */
	{
		g_autofree char *image_dir = g_path_get_dirname(opts->vmlinux);
		g_autofree char *image_name = g_path_get_basename(opts->vmlinux);
		/* the build dir: the image is arch->image in it */
		g_autofree char *build_dir = g_str_has_suffix(opts->vmlinux, arch->image)
			? g_strndup(opts->vmlinux, strlen(opts->vmlinux) - strlen(arch->image)) : NULL;
		g_autofree char *dtb_rel = board && board->dtb
			? g_strdup_printf("arch/%s/boot/dts/%s", arch->karch, board->dtb) : NULL;
		const char *what = "the kernel image";
		g_autoptr(GError) why = NULL;
		int have = pk_beneath_regular(image_dir, image_name, NULL, &why);

		if (have > 0 && dtb_rel) {
			what = "the device tree";
			have = build_dir ? pk_beneath_regular(build_dir, dtb_rel, NULL, &why) : 0;
			dtb = g_build_filename(build_dir ? build_dir : image_dir, dtb_rel, NULL);
		}
		if (have <= 0) {
			res.status = PK_BOOT_FAILED;
			res.accel = "none";
			res.cmdline = g_strdup("");
			res.console = g_strdup("");
			res.capture = pk_capture_parse("", 0);
			res.detail = have ? g_strdup_printf("%s was not booted: %s", what, why->message)
					  : g_strdup_printf("%s %s is not there", what, dtb ? dtb : opts->vmlinux);
			*out = res;
			return 0;
		}
	}
	tmpdir = g_dir_make_tmp("printkbot-boot-XXXXXX", &local);
	if (!tmpdir) {
		pk_error(err, PK_ERROR_FAILED, "cannot make a boot dir: %s", local->message);
		g_error_free(local);
		return -1;
	}
	cap_path = g_build_filename(tmpdir, "capture", NULL);
	chardev = g_strdup_printf("file,id=capture,path=%s", cap_path);
	/* the guest's init writes its capture to ttyS1 unless told another port (qemu/init.c) */
	capture_word = strcmp(capture_port, "ttyS1") ? g_strconcat(" printkbot.capture=", capture_port, NULL)
						     : g_strdup("");
	/* attached devices probe asynchronously (USB enumeration): the guest waits for a quiet log */
	cmdline = g_strconcat("console=", board && board->console ? board->console : arch->console, " ",
			      BASE_CMDLINE, capture_word,
			      lab->qemu_args ? " " PK_LAB_SETTLE_CMDLINE : "",
			      opts->extra_cmdline ? " " : "", opts->extra_cmdline ? opts->extra_cmdline : "", NULL);
	res.accel = probe_accel(lab);
	{
		bool kvm = strcmp(res.accel, "kvm") == 0;
		const char *base[] = {
			arch->qemu, "-accel", kvm ? "kvm" : TCG_ACCEL,
			"-machine", board ? board->machine : arch->machine,
			"-m", board && board->memory ? board->memory : "256",
			"-smp", board && board->smp ? board->smp : G_STRINGIFY(GUEST_CPUS), "-sandbox", QEMU_SECCOMP,
			"-nodefaults", "-no-user-config", "-display", "none",
			"-no-reboot", "-nic", "none",
			"-kernel", opts->vmlinux, "-initrd", lab->initrd, "-append", cmdline, "-chardev", chardev,
		};
		g_autoptr(GPtrArray) args = g_ptr_array_new();
		const char *const *argv;
		const char *ro[] = { opts->vmlinux, lab->initrd, dtb, NULL };

		for (size_t i = 0; i < G_N_ELEMENTS(base); i++)
			g_ptr_array_add(args, (char *)base[i]);
		if (board) {
			/* a board has its CPU (QEMU refuses another) and its UARTs in the order of its row */
			if (dtb) {
				g_ptr_array_add(args, "-dtb");
				g_ptr_array_add(args, dtb);
			}
			g_ptr_array_add(args, "-serial");
			g_ptr_array_add(args, board->capture_first ? "chardev:capture" : "stdio");
			g_ptr_array_add(args, "-serial");
			g_ptr_array_add(args, board->capture_first ? "stdio" : "chardev:capture");
		} else {
			g_ptr_array_add(args, "-cpu");
			g_ptr_array_add(args, kvm ? "host" : (char *)arch->tcg_cpu);
			g_ptr_array_add(args, "-serial");
			g_ptr_array_add(args, "stdio");
			for (const char *const *a = arch->capture; *a; a++)
				g_ptr_array_add(args, (char *)*a);
		}
		/* the devices the patch's drivers need (qemu/devices, derive.h) */
		for (char **a = lab->qemu_args; a && *a; a++)
			g_ptr_array_add(args, *a);
		g_ptr_array_add(args, NULL);
		argv = (const char *const *)args->pdata;

		popts.capture = console;
		popts.output_cap = sc->console_cap;
		popts.timeout = opts->timeout > 0 ? opts->timeout : 60;
		popts.limits = &limits;
		/* as long as a boot may take, and twice that: a boot ahead, and another */
		int slot = boot_slot_take(3 * popts.timeout);
		int rc = run_qemu(&pr, argv, ro, tmpdir, kvm, &popts, err);

		if (slot >= 0)
			close(slot);
		if (rc < 0) {
			g_unlink(cap_path);
			g_rmdir(tmpdir);
			return -1;
		}
	}
	res.seconds = pr.seconds;
	res.cmdline = g_steal_pointer(&cmdline);
	if (pr.truncated)
		g_string_append_printf(cut, "the console was cut at its limit of %" G_GUINT64_FORMAT " bytes\n",
				       sc->console_cap);
	if (capture_cut(cap_path, sc->capture_cap))
		g_string_append_printf(cut, "the capture port was cut at its limit of %" G_GUINT64_FORMAT
				       " bytes\n", sc->capture_cap);
	if (pk_read_file(&cap_buf, &cap_len, cap_path, sc->capture_cap ? sc->capture_cap : 0, &local) < 0) {
		g_clear_error(&local);
		cap_buf = g_strdup("");
		cap_len = 0;
	}
	g_unlink(cap_path);
	g_rmdir(tmpdir);
	res.capture = pk_capture_parse(cap_buf, cap_len);
	say_at_console_end(console, cut->str, res.capture->problems->str);
	res.console = g_string_free(g_steal_pointer(&console), FALSE);

	res.cut = cut->len > 0;
	judge_boot(&res, &pr, cut->str, popts.timeout);
	*out = res;
	return 0;
}
