/* options.c - the commands' option parser on GOptionContext; see options.h. */
#include "cmd/options.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the GOption callback writes into: one parse in progress. */
struct parse {
	const struct pk_option *options;
	struct pk_cmdline *cl;
};

const struct pk_option *pk_option_find(const struct pk_option *options, const char *name)
{
	for (const struct pk_option *o = options; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static void *value_at(const struct pk_cmdline *cl, const struct pk_option *o)
{
	return (char *)(o->common ? (void *)&cl->common : cl->opts) + o->offset;
}

const void *pk_cmdline_value(const struct pk_cmdline *cl, const struct pk_option *options,
			     const char *name)
{
	const struct pk_option *o = pk_option_find(options, name);

	return o ? value_at(cl, o) : NULL;
}

int pk_duration_parse(double *out, const char *text)
{
	static const struct { char unit; double seconds; } units[] = {
		{ '\0', 1 }, { 's', 1 }, { 'm', 60 }, { 'h', 3600 },
	};
	char *end = NULL;
	double v;

	if (!g_ascii_isdigit(*text) && *text != '.')   /* no sign, no space, no "inf" */
		return -1;
	v = g_ascii_strtod(text, &end);
	if (end == text || !isfinite(v))
		return -1;
	for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
		if (end[0] != units[i].unit || (end[0] && end[1]))
			continue;
		*out = v * units[i].seconds;
		return 0;
	}
	return -1;
}

/* YYYY-MM-DD (midnight UTC, or the next one with end_of_day), else ISO 8601 with UTC as default. */
static int parse_date(gint64 *out, const char *text, bool end_of_day)
{
	g_autoptr(GTimeZone) utc = g_time_zone_new_utc();
	g_autoptr(GDateTime) t = NULL;
	int y, m, d;
	char extra;

	if (sscanf(text, "%4d-%2d-%2d%c", &y, &m, &d, &extra) == 3) {
		t = g_date_time_new(utc, y, m, d, 0, 0, 0);
		if (t && end_of_day) {
			GDateTime *next = g_date_time_add_days(t, 1);

			g_date_time_unref(t);
			t = next;
		}
	} else {
		t = g_date_time_new_from_iso8601(text, utc);
	}
	if (!t)
		return -1;
	*out = g_date_time_to_unix(t);
	return 0;
}

/* Convert one value by its option's type; the error names the option as it was spelt. */
static int set_value(struct parse *p, const struct pk_option *o, const char *spelt, const char *value,
		     GError **err)
{
	void *to = value_at(p->cl, o);
	guint64 n;

	switch (o->type) {
	case PK_OPT_FLAG:
		*(bool *)to = true;
		return 0;
	case PK_OPT_STRING: {
		char *copy = g_strdup(value);

		g_ptr_array_add(p->cl->strings, copy);
		*(const char **)to = copy;
		return 0;
	}
	case PK_OPT_COUNT:
		if (!g_ascii_string_to_unsigned(value, 10, 1, G_MAXUINT, &n, NULL))
			break;
		*(unsigned *)to = (unsigned)n;
		return 0;
	case PK_OPT_DURATION:
		if (pk_duration_parse(to, value) < 0)
			break;
		return 0;
	case PK_OPT_DATE:
	case PK_OPT_DATE_END:
		if (parse_date(to, value, o->type == PK_OPT_DATE_END) < 0)
			break;
		/* 0 is "no filter" to the store: an end at or before 1970 would match everything */
		if (*(gint64 *)to < 0 || (o->type == PK_OPT_DATE_END && *(gint64 *)to == 0)) {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: '%s' is not after "
				    "1970-01-01 00:00 UTC: no patch is dated so early", spelt, value);
			return -1;
		}
		return 0;
	}
	g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: '%s' is not %s", spelt, value,
		    o->type == PK_OPT_COUNT ? "a positive whole number"
		    : o->type == PK_OPT_DURATION ? "a duration (seconds, or with a unit: 90s, 2m, 1h)"
		    : "a date (YYYY-MM-DD or ISO 8601)");
	return -1;
}

/* GOption's callback for every option: spelt is "--name" (or "-h"), value NULL for flags. */
static gboolean on_option(const char *spelt, const char *value, gpointer data, GError **err)
{
	struct parse *p = data;
	const struct pk_option *o;

	if (!strcmp(spelt, "-h") || !strcmp(spelt, "--help")) {
		p->cl->help = true;
		return TRUE;
	}
	o = pk_option_find(p->options, spelt + 2);
	g_return_val_if_fail(o, FALSE);   /* GOption only calls back for entries we gave it */
	return set_value(p, o, spelt, value, err) == 0;
}

/*
 * GOption drops the value of a flag spelt --json=1 without a word; refuse
 * it instead.  Walks argv as GOption will: a value-taking option spelt
 * without '=' takes the next argument whatever it looks like.
 */
static int check_flag_values(const struct pk_option *options, int argc, char **argv, GError **err)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *eq = strchr(argv[i], '=');
		g_autofree char *name = NULL;
		const struct pk_option *o;
		bool flag;

		if (!g_str_has_prefix(argv[i], "--"))
			continue;
		name = eq ? g_strndup(argv[i] + 2, eq - argv[i] - 2) : g_strdup(argv[i] + 2);
		o = pk_option_find(options, name);
		flag = !strcmp(name, "help") || (o && o->type == PK_OPT_FLAG);
		if (flag && eq) {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--%s takes no value (given '%s')", name, eq + 1);
			return -1;
		}
		if (o && !flag && !eq)
			i++;
	}
	return 0;
}

/* The GOption entries for options: every one through on_option(), then -h/--help and the rest. */
static GArray *option_entries(const struct pk_option *options, char ***rest)
{
	GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));   /* zero-terminated */
	GOptionEntry help = { "help", 'h', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, on_option, NULL, NULL };
	GOptionEntry remaining = { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, rest, NULL, NULL };

	for (const struct pk_option *o = options; o->name; o++) {
		/* FILENAME: the bytes as given, where STRING would insist on the locale's charset */
		GOptionEntry e = { o->name, 0, o->type == PK_OPT_FLAG ? G_OPTION_FLAG_NO_ARG : G_OPTION_FLAG_FILENAME,
				   G_OPTION_ARG_CALLBACK, on_option, NULL, NULL };

		g_array_append_val(entries, e);
	}
	g_array_append_val(entries, help);
	g_array_append_val(entries, remaining);
	return entries;
}

/* GLib's messages start with a capital ("Unknown option --x"); ours do not. */
static void lower_first(GError *err)
{
	if (err && err->message && g_ascii_isupper(err->message[0]))
		err->message[0] = g_ascii_tolower(err->message[0]);
}

int pk_cmdline_parse(struct pk_cmdline *out, const struct pk_option *options, size_t opts_size,
		     int argc, char **argv, GError **err)
{
	struct pk_cmdline cl = { 0 };
	struct parse p = { options, &cl };
	g_autoptr(GOptionContext) context = g_option_context_new(NULL);
	g_autoptr(GArray) entries = NULL;
	g_auto(GStrv) copy = g_new0(char *, argc + 1);
	GOptionGroup *group;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	cl.opts = g_malloc0(MAX(opts_size, 1));
	cl.strings = g_ptr_array_new_with_free_func(g_free);
	entries = option_entries(options, &cl.args);
	/* GOption's own --help knows nothing of our usage texts: the commands print theirs */
	g_option_context_set_help_enabled(context, FALSE);
	group = g_option_group_new(argv[0], NULL, NULL, &p, NULL);
	g_option_group_add_entries(group, (const GOptionEntry *)entries->data);
	g_option_context_set_main_group(context, group);
	for (int i = 0; i < argc; i++)
		copy[i] = g_strdup(argv[i]);
	if (check_flag_values(options, argc, argv, err) < 0 ||
	    !g_option_context_parse_strv(context, &copy, err)) {
		if (err)
			lower_first(*err);
		goto cleanup;
	}
	if (!cl.args)
		cl.args = g_new0(char *, 1);
	cl.n_args = g_strv_length(cl.args);
	*out = cl;
	memset(&cl, 0, sizeof(cl));
	rc = 0;
cleanup:
	pk_cmdline_clear(&cl);
	return rc;
}

void pk_cmdline_clear(struct pk_cmdline *cl)
{
	g_free(cl->opts);
	g_strfreev(cl->args);
	if (cl->strings)
		g_ptr_array_unref(cl->strings);
	memset(cl, 0, sizeof(*cl));
}
