/*
 * patches.c - what intake and scan hand the store: sources, series,
 * patches (their raw text kept gzip-compressed) and static findings.  See
 * store.h for the contracts.
 */
#include "store/private.h"

#include <string.h>

/* ---- sources and series ------------------------------------------------ */

int pk_store_add_source(struct pk_store *store, gint64 *out_id, const char *kind,
			const char *name, const char *url, GError **err)
{
	g_autoptr(store_stmt) find = prep(store, "SELECT id FROM sources WHERE kind = ?1 AND name = ?2", err);
	g_autoptr(store_stmt) ins = NULL;
	int rc;

	if (!find)
		return -1;
	bind_text(find, 1, kind);
	bind_text(find, 2, name);
	if ((rc = step(store, find, err)) < 0)
		return -1;
	if (rc) {
		*out_id = col_int(find, 0);
		return 0;
	}
	ins = prep(store, "INSERT INTO sources (kind, name, url) VALUES (?1, ?2, ?3) RETURNING id", err);
	if (!ins)
		return -1;
	bind_text(ins, 1, kind);
	bind_text(ins, 2, name);
	bind_text(ins, 3, url);
	if (run_id(store, ins, out_id, err) < 0)
		return -1;
	return 0;
}

int pk_store_source_name(struct pk_store *store, gint64 source_id, char **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT name FROM sources WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, source_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = col_text(st, 0);
	return 1;
}

int pk_store_add_series(struct pk_store *store, gint64 *out_id,
			const struct pk_store_series *series, GError **err)
{
	g_autofree char *mid = store_bare_msgid(series->cover_message_id);
	g_autoptr(store_stmt) find = NULL;
	g_autoptr(store_stmt) ins = NULL;
	int rc;

	if (mid) {
		find = prep(store, "SELECT id FROM series WHERE cover_message_id = ?1", err);
		if (!find)
			return -1;
		bind_text(find, 1, mid);
		if ((rc = step(store, find, err)) < 0)
			return -1;
		if (rc) {
			*out_id = col_int(find, 0);
			return 0;
		}
	}
	ins = prep(store, "INSERT INTO series (source_id, cover_message_id, cover_subject, "
		   "version, total, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id", err);
	if (!ins)
		return -1;
	bind_id(ins, 1, series->source_id);
	bind_text(ins, 2, mid);
	bind_text(ins, 3, series->cover_subject);
	bind_int(ins, 4, MAX(series->version, 1));
	bind_int(ins, 5, MAX(series->total, 1));
	bind_int(ins, 6, unix_now());
	if (run_id(store, ins, out_id, err) < 0)
		return -1;
	return 0;
}

/* ---- patches ----------------------------------------------------------- */

/*
 * [PATCH v2 3/7] from the first bracketed group of a subject.  Intake knows
 * these best and passes them; this reads them when it did not.
 */
static void subject_numbers(const char *subject, int *version, int *number, int *total)
{
	const char *open = subject ? strchr(subject, '[') : NULL;
	const char *close = open ? strchr(open, ']') : NULL;
	g_autofree char *tag = NULL;
	g_auto(GStrv) words = NULL;

	if (!close)
		return;
	tag = g_strndup(open + 1, (gsize)(close - open - 1));
	words = g_strsplit_set(tag, " \t", -1);
	for (int i = 0; words[i]; i++) {
		const char *w = words[i];
		char *end;
		gint64 a, b;

		if ((w[0] == 'v' || w[0] == 'V') && g_ascii_isdigit(w[1])) {
			a = g_ascii_strtoll(w + 1, &end, 10);
			if (!*end && a > 0 && a < 10000)
				*version = (int)a;
		} else if (g_ascii_isdigit(w[0])) {
			a = g_ascii_strtoll(w, &end, 10);
			if (*end != '/')
				continue;
			b = g_ascii_strtoll(end + 1, &end, 10);
			if (!*end && a >= 0 && b > 0 && a <= b && b < 100000) {
				*number = (int)a;
				*total = (int)b;
			}
		}
	}
}

/* Find a stored patch by Message-ID, or by commit when it has none: 1 found. */
static int find_patch(struct pk_store *s, const char *mid, const char *commit, gint64 *out,
		      GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	if (!mid && !commit)
		return 0;
	st = prep(s, mid ? "SELECT id FROM patches WHERE message_id = ?1"
			 : "SELECT id FROM patches WHERE message_id IS NULL AND commit_id = ?1 "
			   "ORDER BY id LIMIT 1", err);
	if (!st)
		return -1;
	bind_text(st, 1, mid ? mid : commit);
	if ((rc = step(s, st, err)) > 0)
		*out = col_int(st, 0);
	return rc;
}

/* The raw patch as kept: the commit message, "---" and the diff, as in a mail body. */
static GBytes *raw_patch(const struct pk_patch *p, size_t *out_size, GError **err)
{
	g_autoptr(GString) raw = g_string_new(NULL);

	if (p->description) {
		g_string_append(raw, p->description);
		if (raw->len && raw->str[raw->len - 1] != '\n')
			g_string_append_c(raw, '\n');
		g_string_append(raw, "---\n");
	}
	if (p->diff)
		g_string_append(raw, p->diff);
	*out_size = raw->len;
	return store_gzip(raw->str, raw->len, err);
}

static int insert_patch(struct pk_store *s, gint64 *out_id, const struct pk_patch *p,
			const struct pk_store_patch_opts *o, const char *mid, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(GBytes) raw = NULL;
	int version = o->version, number = o->number, total = o->total;
	size_t raw_size = 0;

	if (!version && !number && !total) {
		version = number = total = 1;
		subject_numbers(p->subject, &version, &number, &total);
	}
	if (o->keep_raw && !(raw = raw_patch(p, &raw_size, err)))
		return -1;
	st = prep(s, "INSERT INTO patches (source_id, series_id, message_id, commit_id, subject, "
		  "author, author_name, author_email, date, time, tz_minutes, version, number, "
		  "total, raw, raw_size, raw_ref, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
		  "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) RETURNING id", err);
	if (!st)
		return -1;
	bind_id(st, 1, o->source_id);
	bind_id(st, 2, o->series_id);
	bind_text(st, 3, mid);
	bind_text(st, 4, o->commit);
	bind_text(st, 5, p->subject);
	bind_text(st, 6, p->author);
	bind_text(st, 7, p->author_name);
	bind_text(st, 8, p->author_email);
	bind_text(st, 9, p->date);
	if (p->time)
		bind_int(st, 10, p->time);
	bind_int(st, 11, p->tz_minutes);
	bind_int(st, 12, MAX(version, 1));
	bind_int(st, 13, MAX(number, 0));
	bind_int(st, 14, MAX(total, 1));
	bind_blob(st, 15, raw);
	if (raw)
		bind_int(st, 16, (gint64)raw_size);
	bind_text(st, 17, o->raw_ref);
	bind_int(st, 18, unix_now());
	if (run_id(s, st, out_id, err) < 0)
		return -1;
	return 0;
}

int pk_store_add_patch(struct pk_store *store, gint64 *out_id, bool *out_existed,
		       const struct pk_patch *patch, const struct pk_store_patch_opts *opts,
		       GError **err)
{
	static const struct pk_store_patch_opts defaults = PK_STORE_PATCH_OPTS_INIT;
	const struct pk_store_patch_opts *o = opts ? opts : &defaults;
	g_autofree char *mid = store_bare_msgid(patch->message_id);
	gint64 id = 0;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = find_patch(store, mid, o->commit, &id, err);
	if (rc == 0)
		rc = insert_patch(store, &id, patch, o, mid, err);
	else if (rc > 0)
		rc = 1;
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	*out_id = id;
	if (out_existed)
		*out_existed = rc == 1;
	return 0;
}

int pk_store_patch_raw(struct pk_store *store, gint64 patch_id, char **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT raw FROM patches WHERE id = ?1", err);
	char *raw;
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, patch_id);
	if ((rc = step(store, st, err)) < 0)
		return -1;
	if (!rc || col_null(st, 0))
		return pk_error(err, PK_ERROR_INPUT, "%s: patch %" G_GINT64_FORMAT
				" has no stored raw patch", store->path, patch_id);
	raw = col_gunzip(st, 0, err);
	if (!raw)
		return -1;
	*out = raw;
	return 0;
}
/* ---- findings ---------------------------------------------------------- */

static int insert_findings(struct pk_store *s, gint64 patch_id, const struct pk_scan *scan,
			   GError **err)
{
	g_autoptr(store_stmt) have = prep(s, "SELECT 1 FROM findings WHERE patch_id = ?1 LIMIT 1", err);
	g_autoptr(store_stmt) ins = NULL;
	g_autoptr(store_stmt) upd = NULL;
	int rc;

	if (!have)
		return -1;
	bind_int(have, 1, patch_id);
	if ((rc = step(s, have, err)) < 0)
		return -1;
	ins = prep(s, "INSERT INTO findings (patch_id, seq, file, line, kind, old_call, new_call, "
		   "old_level, new_level, old_text, new_text, message) VALUES (?1, ?2, ?3, ?4, "
		   "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!ins)
		return -1;
	for (guint i = 0; !rc && i < scan->findings->len; i++) {
		const struct pk_finding *f = scan->findings->pdata[i];

		bind_int(ins, 1, patch_id);
		bind_int(ins, 2, (int)i);
		bind_text(ins, 3, f->file);
		bind_int(ins, 4, f->line);
		bind_text(ins, 5, pk_finding_kind_name(f->kind));
		bind_text(ins, 6, f->old_call);
		bind_text(ins, 7, f->new_call);
		bind_text(ins, 8, f->old_level);
		bind_text(ins, 9, f->new_level);
		bind_text(ins, 10, f->old_text);
		bind_text(ins, 11, f->new_text);
		bind_text(ins, 12, f->message);
		if (run(s, ins, err) < 0)
			return -1;
	}
	/* an untested patch's verdict is the scan's */
	upd = prep(s, "UPDATE patches SET scan_verdict = ?2, calls_changed = ?3, verdict = "
		   "COALESCE((SELECT t.verdict FROM tests t WHERE t.patch_id = ?1 ORDER BY t.id "
		   "DESC LIMIT 1), ?2) WHERE id = ?1", err);
	if (!upd)
		return -1;
	bind_int(upd, 1, patch_id);
	bind_text(upd, 2, pk_verdict_name(scan->verdict));
	bind_int(upd, 3, (int)scan->calls_changed);
	if (run(s, upd, err) < 0)
		return -1;
	if (!store_changes(s))
		return pk_error(err, PK_ERROR_INPUT, "%s: no patch %" G_GINT64_FORMAT,
				s->path, patch_id);
	return 0;
}

int pk_store_add_findings(struct pk_store *store, gint64 patch_id,
			  const struct pk_scan *scan, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, insert_findings(store, patch_id, scan, err), err);
}
