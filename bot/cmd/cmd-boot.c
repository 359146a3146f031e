/* cmd-boot.c - `printkbot boot`: build a revision, boot it, print its records. */
#include "lab/boot.h"
#include "lab/build.h"
#include "cmd/commands.h"
#include "base/jsonout.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "base/util.h"

#include <stdio.h>

static const char boot_usage[] =
	"usage: printkbot boot [--json] [--timeout SECONDS] [--cmdline ARGS] [--config FILE]\n"
	"                      [--arch ARCH] [REV]\n\n"
	"Check out REV (default: the base commit) in the bot's kernel tree, build\n"
	"it incrementally, boot it in QEMU and print its /dev/kmsg records.\n"
	"--json prints records, the printk index and timings as one JSON object.\n"
	"--timeout is per boot (default 60 s): SECONDS, or with a unit (90s, 2m).\n"
	"--cmdline adds ARGS to the kernel's command line.\n"
	"--arch ARCH builds and boots for ARCH: x86_64 (the default, QEMU's q35)\n"
	"or arm64 (QEMU's virt, a PL011 console); `setup --arch ARCH` first.\n"
	"--config FILE: its [policy] sandbox and limits and its [build] apply\n"
	"(default $PRINTKBOT_CONFIG, else /etc/printkbot.conf if present).\n\n"
	"exit status: 0 booted, 1 build or boot failed (panic, timeout), 2 bad usage.\n";

struct boot_opts {
	bool json;
	double timeout;          /* 0: the default */
	const char *cmdline;
};

static const struct pk_option boot_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_ARCH,
	PK_OPTION_FLAG("json", struct boot_opts, json),
	PK_OPTION_DURATION("timeout", struct boot_opts, timeout),
	PK_OPTION_STRING("cmdline", struct boot_opts, cmdline),
	{ NULL },
};

static void add_records(JsonBuilder *b, const struct pk_capture *cap)
{
	json_builder_set_member_name(b, "records");
	json_builder_begin_array(b);
	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];

		json_builder_begin_object(b);
		pk_json_int(b, "seq", (gint64)r->seq);
		pk_json_int(b, "level", r->level);
		pk_json_int(b, "facility", r->facility);
		pk_json_int(b, "ts_usec", (gint64)r->ts_usec);
		pk_json_bool(b, "cont", r->cont);
		pk_json_str(b, "caller", r->caller);
		pk_json_str(b, "text", r->text);
		json_builder_set_member_name(b, "dict");
		json_builder_begin_array(b);
		for (guint j = 0; j < r->dict->len; j++)
			json_builder_add_string_value(b, r->dict->pdata[j]);
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void add_index(JsonBuilder *b, const struct pk_capture *cap)
{
	json_builder_set_member_name(b, "index");
	json_builder_begin_array(b);
	for (guint i = 0; i < cap->index->len; i++) {
		const struct pk_index_entry *e = cap->index->pdata[i];

		json_builder_begin_object(b);
		pk_json_int(b, "level", e->level);
		pk_json_bool(b, "cont", e->cont);
		pk_json_str(b, "file", e->file);
		pk_json_int(b, "line", e->line);
		pk_json_str(b, "func", e->func);
		pk_json_str(b, "format", e->format);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void print_json(const char *rev, const struct pk_build_result *build,
		       const struct pk_boot_result *boot)
{
	g_autoptr(JsonBuilder) b = json_builder_new();

	json_builder_begin_object(b);
	pk_json_str(b, "rev", rev);
	json_builder_set_member_name(b, "build");
	json_builder_begin_object(b);
	pk_json_bool(b, "ok", build->ok);
	pk_json_double(b, "seconds", build->seconds);
	pk_json_str(b, "errors", build->errors);
	json_builder_end_object(b);
	if (boot) {
		json_builder_set_member_name(b, "boot");
		json_builder_begin_object(b);
		pk_json_str(b, "status", pk_boot_status_name(boot->status));
		pk_json_double(b, "seconds", boot->seconds);
		pk_json_str(b, "accel", boot->accel);
		pk_json_str(b, "cmdline", boot->cmdline);
		pk_json_str(b, "detail", boot->detail);
		pk_json_bool(b, "capture_complete", boot->capture->complete);
		pk_json_int(b, "records_lost", boot->capture->lost);
		json_builder_end_object(b);
		add_records(b, boot->capture);
		add_index(b, boot->capture);
	}
	json_builder_end_object(b);
	pk_json_print(b);
}

static void print_text(const struct pk_build_result *build, const struct pk_boot_result *boot)
{
	if (!build->ok) {
		pk_print_text("build failed after %.1f s:\n%s", build->seconds, build->errors);
		return;
	}
	for (guint i = 0; i < boot->capture->records->len; i++) {
		const struct pk_record *r = boot->capture->records->pdata[i];

		pk_print_text("%-6s %5" G_GUINT64_FORMAT "%s %s\n", pk_level_name(r->level), r->seq,
			      r->cont ? "+" : " ", r->text);
	}
	printf("-- build %.1f s, boot %.1f s (%s): %s; %u records, %u printk index entries\n",
	       build->seconds, boot->seconds, boot->accel, pk_boot_status_name(boot->status),
	       boot->capture->records->len, boot->capture->index->len);
	if (boot->detail)
		pk_print_text("%s\n", boot->detail);
}

/* Check out rev (in the tree of its kernel series, lab.h), build it, and boot it when it built; *booted says whether boot is filled. */
static int boot_rev(struct pk_build_result *build, struct pk_boot_result *boot, bool *booted,
		    const struct pk_lab *lab, const char *rev, struct pk_boot_opts *bopts, GError **err)
{
	struct pk_lab based;
	int rc = -1;

	if (pk_lab_for_rev(&based, lab, rev, err) < 0)
		return -1;
	if (pk_repo_checkout(&based, rev, err) < 0)
		goto out;
	pk_progress("building %s...", rev);
	if (pk_build_kernel(build, &based, err) < 0)
		goto out;
	if (build->ok) {
		bopts->vmlinux = build->vmlinux;
		pk_progress("booting %s...", rev);
		if (pk_boot_kernel(boot, &based, bopts, err) < 0)
			goto out;
		*booted = true;
	}
	pk_progress("%s", "");
	rc = 0;
out:
	pk_lab_clear(&based);
	return rc;
}

static int cmd_boot(struct pk_cmd_ctx *ctx)
{
	const struct boot_opts *o = ctx->cmdline.opts;
	const char *rev = ctx->cmdline.n_args ? ctx->cmdline.args[0] : PK_LAB_BASE_TAG;
	struct pk_boot_opts bopts = PK_BOOT_OPTS_INIT;
	struct pk_build_result build = { 0 };
	struct pk_boot_result boot = { 0 };
	g_autoptr(GError) err = NULL;
	bool booted = false;
	int status = 1;

	bopts.timeout = o->timeout;
	bopts.extra_cmdline = o->cmdline;
	if (boot_rev(&build, &boot, &booted, &ctx->lab, rev, &bopts, &err) < 0) {
		fprintf(stderr, "printkbot boot: %s\n", err->message);
		goto cleanup;
	}
	if (o->json)
		print_json(rev, &build, booted ? &boot : NULL);
	else
		print_text(&build, booted ? &boot : NULL);
	status = build.ok && boot.status == PK_BOOT_OK ? 0 : 1;
cleanup:
	pk_boot_result_clear(&boot);
	pk_build_result_clear(&build);
	return status;
}

/* A lab that is not set up is a failure to boot (1), as any other. */
const struct pk_cmd_spec cmd_boot_spec = {
	.usage = boot_usage,
	.options = boot_options,
	.opts_size = sizeof(struct boot_opts),
	.args_max = 1,
	.setup_status = 1,
	.run = cmd_boot,
};
