/*
 * prom.h - figures for monitoring, in Prometheus' text exposition format
 * (version 0.0.4), the format node_exporter's textfile collector reads
 * from *.prom files and a Prometheus server scrapes.
 *
 * A text is made one family at a time: pk_prom_family() writes its
 * "# HELP" and "# TYPE" lines, then pk_prom_sample() and
 * pk_prom_histogram() write its samples, so a family's lines are always
 * together, as the format asks.  Names (of families and labels) are the
 * caller's constants; label values may come from anywhere (a [source
 * NAME] of the config, a host name) and are escaped here: backslash,
 * double quote and newline as \\, \" and \n, and bytes that are not
 * UTF-8 replaced, as the format is UTF-8.  Values are written as Go's
 * parser reads them: integers without a fraction, NaN, +Inf, -Inf.
 *
 * pk_prom_write() replaces a file atomically (a temporary file in the
 * same directory, then rename(2)), so a scrape reads the old text or the
 * new one, never half of one.  The file is 0644 whatever the umask: the
 * node exporter runs as a user of its own.
 *
 * Ownership: a struct pk_prom is the caller's (pk_prom_free(), NULL is
 * fine); every string passed in is borrowed for the call.
 */
#ifndef PK_PROM_H
#define PK_PROM_H

#include <glib.h>

struct pk_prom;
typedef struct pk_prom pk_prom;

struct pk_prom *pk_prom_new(void);
void pk_prom_free(struct pk_prom *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_prom, pk_prom_free)

/*
 * Start the family name: type is "gauge", "counter" or "histogram"; help
 * one sentence (escaped here).  The samples that follow are this family's.
 */
void pk_prom_family(struct pk_prom *p, const char *name, const char *type, const char *help);

/*
 * A sample of the current family: its name, labels (pairs of name and
 * value, NULL-ended; NULL for none) and value.
 */
void pk_prom_sample(struct pk_prom *p, const char *const *labels, double value);

/*
 * The samples of one histogram of the current family (a "histogram"):
 * for each of the n bounds (ascending), le[i] observations at or below
 * bounds[i]; count observations in all (the +Inf bucket) and their sum.
 * labels as above; each bucket gets an "le" label after them.
 */
void pk_prom_histogram(struct pk_prom *p, const char *const *labels, const double *bounds,
		       const gint64 *le, guint n, gint64 count, double sum);

/* The text so far (borrowed, valid until the next call on p). */
const char *pk_prom_text(const struct pk_prom *p);

/* A label value as the format escapes it; caller frees. */
char *pk_prom_escape(const char *value);

/* A value as the format writes it ("3", "0.25", "+Inf", "NaN"); caller frees. */
char *pk_prom_value(double value);

/* Replace path with the text, atomically (see above).  0, or -1 with err. */
int pk_prom_write(const struct pk_prom *p, const char *path, GError **err);

#endif
