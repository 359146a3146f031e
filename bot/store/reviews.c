/*
 * reviews.c - what a test leaves: the test with its console and index
 * changes and the confirmations of the static findings, the review, and
 * the history questions asked of them all.  See store.h for the contracts.
 */
#include "store/private.h"
#include "analysis/kdiff.h"
#include "analysis/scan.h"
#include "base/verdict.h"

#include <string.h>

/* ---- tests and reviews ------------------------------------------------- */

static void bind_level(store_stmt *st, int i, int level)
{
	if (level >= 0)
		bind_int(st, i, level);
	else
		bind_null(st, i);
}

static void bind_origin(store_stmt *st, int first, const struct pk_origin *o)
{
	bind_text(st, first, o->file);
	if (o->file)
		bind_int(st, first + 1, o->line);
	bind_text(st, first + 2, o->func);
	bind_text(st, first + 3, o->format);
}

static int insert_changes(struct pk_store *s, gint64 test_id, const struct pk_kdiff *d,
			  GError **err)
{
	g_autoptr(store_stmt) c = prep(s, "INSERT INTO console_changes (test_id, seq, kind, "
					 "old_level, new_level, old_text, new_text, file, line, func, "
					 "format, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
					 "?10, ?11, ?12)", err);
	g_autoptr(store_stmt) x = prep(s, "INSERT INTO index_changes (test_id, seq, kind, "
					 "old_level, new_level, old_format, new_format, file, line, "
					 "func, format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
					 "?10, ?11)", err);

	if (!c || !x)
		return -1;
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *ch = d->changes->pdata[i];

		bind_int(c, 1, test_id);
		bind_int(c, 2, (int)i);
		bind_text(c, 3, pk_change_kind_name(ch->kind));
		bind_level(c, 4, ch->old_level);
		bind_level(c, 5, ch->new_level);
		bind_text(c, 6, ch->old_text);
		bind_text(c, 7, ch->new_text);
		bind_origin(c, 8, &ch->origin);
		bind_text(c, 12, ch->message);
		if (run(s, c, err) < 0)
			return -1;
	}
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *ch = d->index_changes->pdata[i];

		bind_int(x, 1, test_id);
		bind_int(x, 2, (int)i);
		bind_text(x, 3, pk_change_kind_name(ch->kind));
		bind_level(x, 4, ch->old_level);
		bind_level(x, 5, ch->new_level);
		bind_text(x, 6, ch->old_format);
		bind_text(x, 7, ch->new_format);
		bind_origin(x, 8, &ch->origin);
		if (run(s, x, err) < 0)
			return -1;
	}
	return 0;
}

/* Pair each stored finding of the patch (scan order) with its confirmation. */
static int insert_confirmations(struct pk_store *s, gint64 test_id, const struct pk_store_test *t,
				GError **err)
{
	g_autoptr(store_stmt) f = prep(s, "SELECT id FROM findings WHERE patch_id = ?1 ORDER BY seq", err);
	g_autoptr(store_stmt) ins = prep(s, "INSERT INTO finding_checks (test_id, finding_id, "
					   "confirmation) VALUES (?1, ?2, ?3)", err);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (!f || !ins)
		return -1;
	bind_int(f, 1, t->patch_id);
	while ((rc = step(s, f, err)) > 0) {
		gint64 id = col_int(f, 0);

		g_array_append_val(ids, id);
	}
	if (rc < 0)
		return -1;
	if (ids->len != t->n_confirmations)
		return pk_error(err, PK_ERROR_INPUT, "%s: patch %" G_GINT64_FORMAT " has %u stored "
				"findings but the test confirms %u", s->path, t->patch_id,
				ids->len, t->n_confirmations);
	for (guint i = 0; i < ids->len; i++) {
		bind_int(ins, 1, test_id);
		bind_int(ins, 2, g_array_index(ids, gint64, i));
		bind_text(ins, 3, t->confirmations[i]);
		if (run(s, ins, err) < 0)
			return -1;
	}
	return 0;
}

/* What of the patch the kernel held, one row per touched file in the patch's order. */
static int insert_coverage(struct pk_store *s, gint64 test_id, const GPtrArray *coverage, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "INSERT INTO test_coverage (test_id, seq, file, state, reason) "
					  "VALUES (?1, ?2, ?3, ?4, ?5)", err);

	if (!st)
		return -1;
	for (guint i = 0; i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];

		bind_int(st, 1, test_id);
		bind_int(st, 2, (int)i);
		bind_text(st, 3, c->file);
		bind_text(st, 4, pk_coverage_state_name(c->state));
		bind_text(st, 5, c->reason);
		if (run(s, st, err) < 0)
			return -1;
	}
	return 0;
}

static int insert_test(struct pk_store *s, gint64 *out_id, const struct pk_store_test *t,
		       GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "INSERT INTO tests (patch_id, before_build, after_build, "
					  "before_boot, after_boot, verdict, reason, seconds, "
					  "records_before, records_after, noise_dropped, created) VALUES "
					  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id", err);
	g_autoptr(store_stmt) upd = prep(s, "UPDATE patches SET verdict = ?2 WHERE id = ?1", err);
	gint64 test_id;

	if (!st || !upd)
		return -1;
	bind_int(st, 1, t->patch_id);
	bind_id(st, 2, t->before_build);
	bind_id(st, 3, t->after_build);
	bind_id(st, 4, t->before_boot);
	bind_id(st, 5, t->after_boot);
	bind_text(st, 6, pk_verdict_name(t->verdict));
	bind_text(st, 7, t->reason);
	bind_double(st, 8, t->seconds);
	if (t->diff) {
		bind_int(st, 9, (int)t->diff->records_before);
		bind_int(st, 10, (int)t->diff->records_after);
		bind_int(st, 11, (int)t->diff->noise_dropped);
	}
	bind_int(st, 12, unix_now());
	if (run_id(s, st, &test_id, err) < 0)
		return -1;
	if (t->diff && insert_changes(s, test_id, t->diff, err) < 0)
		return -1;
	if (t->confirmations && insert_confirmations(s, test_id, t, err) < 0)
		return -1;
	if (t->coverage && insert_coverage(s, test_id, t->coverage, err) < 0)
		return -1;
	bind_int(upd, 1, t->patch_id);
	bind_text(upd, 2, pk_verdict_name(t->verdict));
	if (run(s, upd, err) < 0)
		return -1;
	*out_id = test_id;
	return 0;
}

int pk_store_add_test(struct pk_store *store, gint64 *out_id,
		      const struct pk_store_test *test, GError **err)
{
	gint64 id = 0;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = tx_end(store, insert_test(store, &id, test, err), err);
	if (rc == 0)
		*out_id = id;
	return rc;
}

int pk_store_add_review(struct pk_store *store, gint64 *out_id, gint64 test_id,
			const char *model_json, const char *body, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "INSERT INTO reviews (test_id, model, body, created) "
					  "VALUES (?1, ?2, ?3, ?4) RETURNING id", err);

	if (!st)
		return -1;
	bind_id(st, 1, test_id);
	bind_text(st, 2, model_json);
	bind_text(st, 3, body);
	bind_int(st, 4, unix_now());
	if (run_id(store, st, out_id, err) < 0)
		return -1;
	return 0;
}

int pk_store_review_posted(struct pk_store *store, gint64 review_id, const char *posted_to,
			   const char *reply_message_id, gint64 time, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "UPDATE reviews SET posted_to = ?2, "
					  "reply_message_id = ?3, posted_at = ?4 WHERE id = ?1", err);
	g_autofree char *mid = store_bare_msgid(reply_message_id);

	if (!st)
		return -1;
	bind_int(st, 1, review_id);
	bind_text(st, 2, posted_to);
	bind_text(st, 3, mid);
	bind_int(st, 4, time ? time : unix_now());
	if (run(store, st, err) < 0)
		return -1;
	if (!store_changes(store))
		return pk_error(err, PK_ERROR_INPUT, "%s: no review %" G_GINT64_FORMAT,
				store->path, review_id);
	return 0;
}

int pk_store_review_get(struct pk_store *store, gint64 review_id, char **out_model_json,
			char **out_body, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT model, body FROM reviews WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, review_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no review %" G_GINT64_FORMAT,
					      store->path, review_id);
	if (out_model_json)
		*out_model_json = col_text(st, 0);
	if (out_body)
		*out_body = col_text(st, 1);
	return 0;
}

int pk_store_review_of_commit(struct pk_store *store, const char *commit, gint64 *out_review_id,
			      GError **err)
{
	g_autofree char *prefix = g_ascii_strdown(commit, -1);
	g_autoptr(store_stmt) st = NULL;
	g_autofree char *first = NULL;
	gint64 review = 0;
	int rc;

	if (strlen(prefix) < 4 || strspn(prefix, "0123456789abcdef") != strlen(prefix))
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a commit id (4 to 40 hex digits)", commit);
	/* the newest review of each commit the prefix names, newest first */
	st = prep(store, "SELECT max(r.id), p.commit_id FROM reviews r JOIN tests t ON t.id = r.test_id "
		  "JOIN patches p ON p.id = t.patch_id WHERE substr(p.commit_id, 1, length(?1)) = ?1 "
		  "GROUP BY p.commit_id ORDER BY 1 DESC", err);
	if (!st)
		return -1;
	bind_text(st, 1, prefix);
	while ((rc = step(store, st, err)) > 0) {
		if (first)
			return pk_error(err, PK_ERROR_INPUT, "'%s' names more than one tested commit (%.12s, "
					"%.12s): give more of it", commit, first, col_str(st, 1));
		first = col_text(st, 1);
		review = col_int(st, 0);
	}
	if (rc < 0)
		return -1;
	if (!first)
		return 0;
	*out_review_id = review;
	return 1;
}

/* ---- history ----------------------------------------------------------- */

void pk_history_row_free(struct pk_history_row *row)
{
	if (!row)
		return;
	g_free(row->subject);
	g_free(row->message_id);
	g_free(row->commit);
	g_free(row->author);
	g_free(row->verdict);
	g_free(row->stage);
	g_free(row->kind);
	g_free(row->file);
	g_free(row->func);
	g_free(row->old_text);
	g_free(row->new_text);
	g_free(row->source);
	g_free(row->link);
	g_free(row->arch);
	g_free(row);
}

/*
 * The three places a change is stored, as arms of one UNION ALL: what each
 * calls its columns, so one set of filter clauses serves them all.
 */
struct history_arm {
	const char *stage;
	const char *from;       /* joins the change table c to patches p */
	const char *test_id;
	const char *review_id;  /* the review `report` takes for the row: its test's newest, else its patch's */
	const char *verdict;
	const char *func;       /* NULL: the arm has no function (the filter skips it) */
	const char *old_text, *new_text;
	const char *arch;       /* what the kernels were built for: the test's builds' arch */
};

/* A test's architecture: its after build's (the before build's when nothing after was built). */
#define HISTORY_TEST_ARCH "(SELECT b.arch FROM builds b WHERE b.id = coalesce(t.after_build, t.before_build))"

static const struct history_arm history_arms[] = {
	{ "static", "findings c JOIN patches p ON p.id = c.patch_id", "0",
	  "(SELECT max(r.id) FROM reviews r JOIN tests t2 ON t2.id = r.test_id WHERE t2.patch_id = p.id)",
	  "p.verdict", NULL, "c.old_text", "c.new_text", "NULL" },
	{ "boot", "console_changes c JOIN tests t ON t.id = c.test_id JOIN patches p ON p.id = t.patch_id",
	  "t.id", "(SELECT max(r.id) FROM reviews r WHERE r.test_id = t.id)",
	  "t.verdict", "c.func", "c.old_text", "c.new_text", HISTORY_TEST_ARCH },
	{ "index", "index_changes c JOIN tests t ON t.id = c.test_id JOIN patches p ON p.id = t.patch_id",
	  "t.id", "(SELECT max(r.id) FROM reviews r WHERE r.test_id = t.id)",
	  "t.verdict", "c.func", "c.old_format", "c.new_format", HISTORY_TEST_ARCH },
};

/*
 * One arm's SELECT.  Only the clauses of the filters that are set are
 * written; every value is a named parameter bound later, never text.
 */
static gboolean history_has_patch_filter(const struct pk_history_filter *f);

static void history_arm_sql(GString *q, const struct history_arm *a, int order,
			    const struct pk_history_filter *f, const char *instr)
{
	g_string_append_printf(q, "SELECT p.id, %s, p.subject, p.message_id, p.commit_id, p.author, "
			       "p.time, %s, '%s', c.kind, c.file, c.line, %s, %s, %s, s.name, "
			       "%d AS stage_order, c.seq, %s, s.url, %s FROM %s LEFT JOIN sources s ON "
			       "s.id = p.source_id WHERE 1 = 1", a->test_id, a->verdict, a->stage,
			       a->func ? a->func : "NULL", a->old_text, a->new_text, order, a->review_id, a->arch,
			       a->from);
	if (f->file)
		g_string_append(q, " AND c.file = :file");
	if (f->func)
		g_string_append_printf(q, " AND %s = :func", a->func);
	if (f->grep)
		g_string_append_printf(q, " AND (%s(%s, :grep) > 0 OR %s(%s, :grep) > 0)",
				       instr, a->old_text, instr, a->new_text);
	if (f->kind)
		g_string_append(q, " AND c.kind = :kind");
	if (f->verdict)
		g_string_append_printf(q, " AND %s = :verdict", a->verdict);
	if (history_has_patch_filter(f))
		g_string_append(q, " AND p.id IN (SELECT id FROM sel)");
}

/*
 * The filters on the patch rather than the change select the patches once,
 * in a CTE that each arm then walks by index, instead of each arm testing
 * every one of its changes' patches.
 */
static gboolean history_has_patch_filter(const struct pk_history_filter *f)
{
	return f->author || f->source || f->commit || f->message_id || f->since || f->until;
}

static void history_patch_sql(GString *q, const struct pk_history_filter *f, const char *instr)
{
	g_string_append(q, "WITH sel(id) AS MATERIALIZED (SELECT p.id FROM patches p LEFT JOIN "
			"sources s ON s.id = p.source_id WHERE 1 = 1");
	if (f->author)
		g_string_append_printf(q, " AND %s(lower(coalesce(p.author, '') || ' ' || "
				       "coalesce(p.author_name, '') || ' ' || coalesce(p.author_email, '')), "
				       ":author) > 0", instr);
	if (f->source)
		g_string_append(q, " AND (s.name = :source OR s.url = :source OR s.kind = :source)");
	if (f->commit)
		g_string_append(q, " AND substr(p.commit_id, 1, length(:commit)) = :commit");
	if (f->message_id)
		g_string_append(q, " AND p.message_id = :mid");
	if (f->since)
		g_string_append(q, " AND p.time >= :since");
	if (f->until)
		g_string_append(q, " AND p.time < :until");
	g_string_append(q, ") ");
}

static void bind_named(store_stmt *st, const char *name, const char *value)
{
	int i = bind_index(st, name);

	if (i && value)
		bind_text(st, i, value);
}

/*
 * Where a row's patch can be read: a mail the daemon read from a list
 * (its source has a url) on lore.kernel.org; a mail `printkbot test`
 * read from a file (no url) by its Message-ID, for no archive may have
 * it; a commit by its id.
 */
static char *history_link(const char *mid, const char *commit, const char *source_url)
{
	g_autofree char *esc = NULL;

	if (mid && !source_url)
		return g_strdup_printf("<%s>", mid);
	if (mid) {
		esc = g_uri_escape_string(mid, "@!$&'()*+,;=:", FALSE);
		return g_strconcat("https://lore.kernel.org/r/", esc, NULL);
	}
	return g_strdup(commit);
}

static struct pk_history_row *history_row(store_stmt *st)
{
	struct pk_history_row *r = g_new0(struct pk_history_row, 1);

	r->patch_id = col_int(st, 0);
	r->test_id = col_int(st, 1);
	r->subject = col_text(st, 2);
	r->message_id = col_text(st, 3);
	r->commit = col_text(st, 4);
	r->author = col_text(st, 5);
	r->time = col_int(st, 6);
	r->verdict = col_text(st, 7);
	r->stage = col_text(st, 8);
	r->kind = col_text(st, 9);
	r->file = col_text(st, 10);
	r->line = col_int(st, 11);
	r->func = col_text(st, 12);
	r->old_text = col_text(st, 13);
	r->new_text = col_text(st, 14);
	r->source = col_text(st, 15);
	r->review_id = col_int(st, 18);   /* after stage_order and seq, which only order */
	r->link = history_link(r->message_id, r->commit, col_str(st, 19));
	r->arch = col_text(st, 20);
	return r;
}

int pk_store_history(struct pk_store *store, GPtrArray **out,
		     const struct pk_history_filter *f, GError **err)
{
	g_autoptr(GString) q = g_string_new(NULL);
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_history_row_free);
	g_autofree char *mid = store_bare_msgid(f->message_id);
	g_autofree char *author = f->author ? g_ascii_strdown(f->author, -1) : NULL;
	g_autofree char *commit = f->commit ? g_ascii_strdown(f->commit, -1) : NULL;
	enum pk_verdict verdict;
	enum pk_finding_kind finding;
	enum pk_change_kind change;
	int arms = 0, rc;

	/* a word no row can hold is a typo, said as one: not the empty answer of no match */
	if (f->verdict && !pk_verdict_parse(f->verdict, &verdict))
		return pk_error(err, PK_ERROR_INPUT, "unknown verdict '%s' ('printkbot help verdicts' lists them)",
				f->verdict);
	if (f->kind && !pk_finding_kind_parse(f->kind, &finding) && !pk_change_kind_parse(f->kind, &change))
		return pk_error(err, PK_ERROR_INPUT, "unknown kind '%s' ('printkbot help findings' lists them)",
				f->kind);
	if (history_has_patch_filter(f))
		history_patch_sql(q, f, store->be->instr);
	g_string_append(q, "SELECT * FROM (");
	for (size_t i = 0; i < G_N_ELEMENTS(history_arms); i++) {
		const struct history_arm *a = &history_arms[i];

		if ((f->stage && strcmp(f->stage, a->stage)) || (f->func && !a->func))
			continue;
		if (arms++)
			g_string_append(q, " UNION ALL ");
		history_arm_sql(q, a, (int)i, f, store->be->instr);
	}
	if (!arms) {
		if (f->stage && strcmp(f->stage, "static") && strcmp(f->stage, "boot") &&
		    strcmp(f->stage, "index"))
			return pk_error(err, PK_ERROR_INPUT, "unknown stage '%s' (static, boot, index)",
					f->stage);
		*out = g_steal_pointer(&rows);
		return 0;
	}
	/* NULLS LAST: SQLite's order for a patch without a date, which PostgreSQL puts first */
	g_string_append(q, ") AS h ORDER BY 7 DESC NULLS LAST, 1 DESC, stage_order, 2, seq");
	if (f->limit)
		g_string_append(q, " LIMIT :limit");
	if (!(st = prep(store, q->str, err)))
		return -1;
	bind_named(st, ":file", f->file);
	bind_named(st, ":func", f->func);
	bind_named(st, ":grep", f->grep);
	bind_named(st, ":kind", f->kind);
	bind_named(st, ":verdict", f->verdict);
	bind_named(st, ":author", author);
	bind_named(st, ":source", f->source);
	bind_named(st, ":commit", commit);
	bind_named(st, ":mid", mid);
	if (f->since)
		bind_int(st, bind_index(st, ":since"), f->since);
	if (f->until)
		bind_int(st, bind_index(st, ":until"), f->until);
	if (f->limit)
		bind_int(st, bind_index(st, ":limit"), f->limit);
	while ((rc = step(store, st, err)) > 0)
		g_ptr_array_add(rows, history_row(st));
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}
