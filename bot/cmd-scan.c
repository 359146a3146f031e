/* cmd-scan.c - `printkbot scan`: static findings for patches and mails. */
#include "commands.h"
#include "jsonout.h"
#include "scan.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A mailbox larger than this is refused rather than read into memory. */
#define SCAN_MAX_INPUT (512u * 1024 * 1024)

static const char scan_usage[] =
	"usage: printkbot scan [--json] [FILE|-]...\n\n"
	"Read patches (a plain diff, a patch mail or an mbox; '-' or no FILE is\n"
	"standard input) and report what they do to printk-family calls, without\n"
	"building anything.\n\n"
	"    --json    one JSON object per patch (JSON Lines)\n\n"
	"text output: a '# subject' line per patch, then file:line: kind: sentence\n"
	"exit status: 0 no findings, 1 findings, 2 bad input or usage\n";

static void json_finding(JsonBuilder *b, const struct pk_finding *f)
{
	json_builder_begin_object(b);
	pk_json_str(b, "file", f->file);
	pk_json_int(b, "line", f->line);
	pk_json_str(b, "kind", f->kind);
	pk_json_str(b, "old_call", f->old_call);
	pk_json_str(b, "new_call", f->new_call);
	pk_json_str(b, "old_level", f->old_level);
	pk_json_str(b, "new_level", f->new_level);
	pk_json_str(b, "old_text", f->old_text);
	pk_json_str(b, "new_text", f->new_text);
	pk_json_str(b, "message", f->message);
	json_builder_end_object(b);
}

static void print_json(const struct pk_patch *p, const struct pk_scan *s)
{
	g_autoptr(JsonBuilder) b = json_builder_new();

	json_builder_begin_object(b);
	pk_json_str(b, "subject", p->subject);
	pk_json_str(b, "message_id", p->message_id);
	pk_json_str(b, "author", p->author);
	pk_json_str(b, "verdict", s->verdict);
	pk_json_str(b, "error", p->error);
	json_builder_set_member_name(b, "findings");
	json_builder_begin_array(b);
	for (guint i = 0; i < s->findings->len; i++)
		json_finding(b, s->findings->pdata[i]);
	json_builder_end_array(b);
	json_builder_end_object(b);
	pk_json_print(b);
}

static void print_text(const char *input, const struct pk_patch *p, const struct pk_scan *s)
{
	printf("# %s: %s\n", p->subject ? p->subject : input, s->verdict);
	if (p->error)
		fprintf(stderr, "printkbot: %s: %s: malformed diff: %s\n", input,
			p->message_id ? p->message_id : "(no Message-ID)", p->error);
	for (guint i = 0; i < s->findings->len; i++) {
		const struct pk_finding *f = s->findings->pdata[i];
		printf("%s:%d: %s: %s\n", f->file, f->line, f->kind, f->message);
	}
}

/* Scan one input; returns 0 clean, 1 findings, 2 bad input. */
static int scan_one(const char *path, gboolean json)
{
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0;
	size_t len = 0;
	int rc = 0;

	if (pk_read_file(&buf, &len, path, SCAN_MAX_INPUT, &err) < 0 ||
	    pk_patch_read_mails(&patches, &skipped, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		g_autoptr(pk_scan_result) s = pk_scan(p);

		if (json)
			print_json(p, s);
		else
			print_text(path, p, s);
		rc = MAX(rc, p->error ? 2 : s->findings->len ? 1 : 0);
	}
	if (skipped)
		pk_info("%s: %u mail(s) without a diff skipped", path, skipped);
	return rc;
}

int cmd_scan(int argc, char **argv)
{
	gboolean json = FALSE;
	int rc = 0, i, files = 0;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(scan_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = TRUE;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(stderr, "printkbot: unknown option '%s'\n%s", argv[i], scan_usage);
			return 2;
		}
	}
	for (; i < argc; i++, files++) {
		int one = scan_one(argv[i], json);   /* not inside MAX(): it evaluates twice */
		rc = MAX(rc, one);
	}
	if (!files)
		rc = scan_one("-", json);
	return rc;
}
