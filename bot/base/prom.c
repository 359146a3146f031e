/*
 * prom.c - Prometheus' text exposition format and its atomic file; see prom.h.
 */
#include "base/prom.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pk_prom {
	GString *text;
	char *family;   /* the family pk_prom_family() started last */
};

struct pk_prom *pk_prom_new(void)
{
	struct pk_prom *p = g_new0(struct pk_prom, 1);

	p->text = g_string_new(NULL);
	return p;
}

void pk_prom_free(struct pk_prom *p)
{
	if (!p)
		return;
	g_string_free(p->text, TRUE);
	g_free(p->family);
	g_free(p);
}

const char *pk_prom_text(const struct pk_prom *p)
{
	return p->text->str;
}

/* s escaped into out: backslash and newline always, the double quote too in a label value. */
static void append_escaped(GString *out, const char *s, bool quote)
{
	g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);

	for (const char *c = valid; *c; c++) {
		if (*c == '\\')
			g_string_append(out, "\\\\");
		else if (*c == '\n')
			g_string_append(out, "\\n");
		else if (*c == '"' && quote)
			g_string_append(out, "\\\"");
		else
			g_string_append_c(out, *c);
	}
}

char *pk_prom_escape(const char *value)
{
	GString *out = g_string_new(NULL);

	append_escaped(out, value, true);
	return g_string_free(out, FALSE);
}

char *pk_prom_value(double v)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (isnan(v))
		return g_strdup("NaN");
	if (isinf(v))
		return g_strdup(v > 0 ? "+Inf" : "-Inf");
	if (v == floor(v) && fabs(v) < 9007199254740992.0)   /* 2^53: exact as an integer */
		return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v);
	/* the shortest of these that reads back as v: 0.1, not 0.10000000000000001 */
	for (int digits = 15; digits < 17; digits++) {
		g_autofree char *fmt = g_strdup_printf("%%.%dg", digits);

		g_ascii_formatd(buf, sizeof buf, fmt, v);
		if (g_ascii_strtod(buf, NULL) == v)
			return g_strdup(buf);
	}
	return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

void pk_prom_family(struct pk_prom *p, const char *name, const char *type, const char *help)
{
	g_free(p->family);
	p->family = g_strdup(name);
	g_string_append_printf(p->text, "# HELP %s ", name);
	append_escaped(p->text, help, false);
	g_string_append_printf(p->text, "\n# TYPE %s %s\n", name, type);
}

/* One line: the family's name with suffix, the labels (and le, when given), the value. */
static void sample_line(struct pk_prom *p, const char *suffix, const char *const *labels,
			const char *le, double value)
{
	g_autofree char *v = pk_prom_value(value);
	bool any = false;

	g_string_append_printf(p->text, "%s%s", p->family ? p->family : "", suffix);
	for (const char *const *l = labels; l && l[0] && l[1]; l += 2) {
		g_string_append_printf(p->text, "%s%s=\"", any ? "," : "{", l[0]);
		append_escaped(p->text, l[1], true);
		g_string_append_c(p->text, '"');
		any = true;
	}
	if (le) {
		g_string_append_printf(p->text, "%sle=\"%s\"", any ? "," : "{", le);
		any = true;
	}
	g_string_append_printf(p->text, "%s %s\n", any ? "}" : "", v);
}

void pk_prom_sample(struct pk_prom *p, const char *const *labels, double value)
{
	sample_line(p, "", labels, NULL, value);
}

void pk_prom_histogram(struct pk_prom *p, const char *const *labels, const double *bounds,
		       const gint64 *le, guint n, gint64 count, double sum)
{
	for (guint i = 0; i < n; i++) {
		g_autofree char *bound = pk_prom_value(bounds[i]);

		sample_line(p, "_bucket", labels, bound, (double)le[i]);
	}
	sample_line(p, "_bucket", labels, "+Inf", (double)count);
	sample_line(p, "_sum", labels, NULL, sum);
	sample_line(p, "_count", labels, NULL, (double)count);
}

/*
 * Not g_file_set_contents(): its file gets 0666 less the umask, and the
 * daemon's (systemd's UMask=0027) would hide it from the node exporter's
 * user.  The temporary name starts with a dot and does not end in .prom,
 * so the collector never reads it.
 */
int pk_prom_write(const struct pk_prom *p, const char *path, GError **err)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	g_autofree char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
	const char *at = p->text->str;
	size_t left = p->text->len;
	int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644), e;

	if (fd < 0)
		return pk_error(err, pk_errno_code(errno), "cannot write %s: %s", path, g_strerror(errno));
	if (fchmod(fd, 0644) < 0)
		goto fail;
	while (left) {
		ssize_t n = write(fd, at, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		at += n;
		left -= (size_t)n;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return pk_error(err, pk_errno_code(e), "cannot write %s: %s", path, g_strerror(e));
}
