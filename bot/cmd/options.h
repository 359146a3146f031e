/*
 * options.h - the one option parser of printkbot's commands, on GLib's
 * GOptionContext.
 *
 * A command lists its options in a table of struct pk_option (ended by
 * { NULL }).  Each entry says where its value goes: an offset into the
 * command's own options struct, or, for the options main acts on before
 * the command runs (--config, --db, --no-store: commands.h), into struct
 * pk_cmd_common.  Every option is long and takes its value as --name=V or
 * --name V alike; -h and --help ask for the command's usage.
 *
 * Values are typed, and a value that does not parse is an error naming
 * the option and the value (G_OPTION_ERROR_BAD_VALUE): `--timeout abc` is
 * refused instead of silently meaning the default, `--timeout 1m` is 60
 * seconds instead of one.  An unknown option is G_OPTION_ERROR_UNKNOWN_OPTION;
 * a flag given a value (--json=1) is G_OPTION_ERROR_BAD_VALUE.
 */
#ifndef PK_OPTIONS_H
#define PK_OPTIONS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum pk_option_type {
	PK_OPT_FLAG,       /* bool: given or not */
	PK_OPT_STRING,     /* const char *: the bytes as given (no charset conversion) */
	PK_OPT_COUNT,      /* unsigned: a whole number, 1 or more */
	PK_OPT_DURATION,   /* double seconds: 90 or 90s, 1.5m, 2m, 1h (0 allowed: "the default") */
	PK_OPT_DATE,       /* gint64 Unix time: YYYY-MM-DD is its midnight UTC, else ISO 8601 (UTC default) */
	PK_OPT_DATE_END,   /* the same, but YYYY-MM-DD is the next midnight: "until D" includes D */
};

/* The options main acts on before the command runs; each command's table says which it takes. */
struct pk_cmd_common {
	const char *config_path;  /* --config FILE, NULL: the default file */
	const char *db;           /* --db FILE, NULL: the config's [store] path, else the default */
	bool no_store;            /* --no-store */
	const char *arch;         /* --arch NAME (setup, boot, test): the lab's architecture (lab/arch.h) */
};

struct pk_option {
	const char *name;          /* the long name, without "--" */
	enum pk_option_type type;
	bool common;               /* the value goes in struct pk_cmd_common, not the command's struct */
	size_t offset;             /* where in that struct */
};

/*
 * Table entries: PK_OPTION_DURATION("timeout", struct test_opts, timeout).
 * The field's C type is checked at compile time against the option's type,
 * since the parser writes through the offset.
 */
#define PK_OPTION_AT(st, field, ctype) \
	(offsetof(st, field) + 0 * sizeof(char[__builtin_types_compatible_p( \
		__typeof__(((st *)0)->field), ctype) ? 1 : -1]))
#define PK_OPTION_FLAG(name, st, field)     { name, PK_OPT_FLAG, false, PK_OPTION_AT(st, field, bool) }
#define PK_OPTION_STRING(name, st, field)   { name, PK_OPT_STRING, false, PK_OPTION_AT(st, field, const char *) }
#define PK_OPTION_COUNT(name, st, field)    { name, PK_OPT_COUNT, false, PK_OPTION_AT(st, field, unsigned) }
#define PK_OPTION_DURATION(name, st, field) { name, PK_OPT_DURATION, false, PK_OPTION_AT(st, field, double) }
#define PK_OPTION_DATE(name, st, field)     { name, PK_OPT_DATE, false, PK_OPTION_AT(st, field, gint64) }
#define PK_OPTION_DATE_END(name, st, field) { name, PK_OPT_DATE_END, false, PK_OPTION_AT(st, field, gint64) }
#define PK_OPTION_CONFIG   { "config", PK_OPT_STRING, true, offsetof(struct pk_cmd_common, config_path) }
#define PK_OPTION_DB       { "db", PK_OPT_STRING, true, offsetof(struct pk_cmd_common, db) }
#define PK_OPTION_NO_STORE { "no-store", PK_OPT_FLAG, true, offsetof(struct pk_cmd_common, no_store) }
#define PK_OPTION_ARCH     { "arch", PK_OPT_STRING, true, offsetof(struct pk_cmd_common, arch) }

/* What one command line says; filled by pk_cmdline_parse(), freed by pk_cmdline_clear(). */
struct pk_cmdline {
	struct pk_cmd_common common;
	void *opts;            /* the command's options struct: zero where an option was not given */
	char **args;           /* the other arguments in order ("-" and all after "--" too); never NULL */
	unsigned n_args;
	bool help;             /* -h or --help was given */
	GPtrArray *strings;    /* holds the strings opts and common point to */
};

/*
 * Parse argv (argv[0] is the command's name, as main passes it) against
 * options into a new opts struct of opts_size bytes.  argv is not changed
 * and need not outlive *out.  On failure *out is left cleared and err says
 * what was wrong, naming the option.
 */
int pk_cmdline_parse(struct pk_cmdline *out, const struct pk_option *options, size_t opts_size,
		     int argc, char **argv, GError **err);
/* Free what a parse made; a cleared (zeroed) cmdline is fine. */
void pk_cmdline_clear(struct pk_cmdline *cl);

/* The entry of options named name (without "--"), or NULL. */
const struct pk_option *pk_option_find(const struct pk_option *options, const char *name);
/*
 * Where option name's value is in cl (a bool, const char *, unsigned,
 * double or gint64 by its type), or NULL when options has no such option:
 * for code (and tests) that reach options through the table.
 */
const void *pk_cmdline_value(const struct pk_cmdline *cl, const struct pk_option *options,
			     const char *name);

/* A duration in seconds: "90", "90s", "1.5m", "2m", "1h"; -1 (*out untouched) when text is not one. */
int pk_duration_parse(double *out, const char *text);

#endif
