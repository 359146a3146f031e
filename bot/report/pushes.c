/* pushes.c - a push to a watched branch as text and as JSON; see pushes.h. */
#include "report/pushes.h"
#include "base/jsonout.h"

#include <string.h>

static char *utc_time(gint64 t, const char *format)
{
	g_autoptr(GDateTime) d = t ? g_date_time_new_from_unix_utc(t) : NULL;

	return d ? g_date_time_format(d, format) : g_strdup("-");
}

/* What the mail about a commit did: "sent", "waiting" (in the outbox), "-" (none). */
static const char *mail_state(const struct pk_store_push_commit *c)
{
	return !c->mail_message_id ? "-" : c->mail_sent ? "sent" : "waiting";
}

char *pk_push_text(const struct pk_store_push *p, const GPtrArray *commits)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_autofree char *when = utc_time(p->created, "%F %H:%M UTC");

	g_string_append_printf(s, "push %" G_GINT64_FORMAT ", %s/%s, %s: %.12s..", p->id, p->tree, p->branch,
			       when, p->old_tip);
	if (p->new_tip)
		g_string_append_printf(s, "%.12s", p->new_tip);
	else
		g_string_append(s, "(deleted)");
	if (p->forced)
		g_string_append(s, ", forced");
	if (p->job_id)
		g_string_append_printf(s, ", job %" G_GINT64_FORMAT " %s", p->job_id,
				       p->job_state ? p->job_state : "?");
	g_string_append_c(s, '\n');
	if (p->note)
		g_string_append_printf(s, "  note: %s\n", p->note);
	if (commits && commits->len)
		g_string_append_printf(s, "  %-12s  %-13s  %-17s  %6s  %-7s  %s\n", "commit", "state", "verdict",
				       "review", "mail", "subject");
	for (guint i = 0; commits && i < commits->len; i++) {
		const struct pk_store_push_commit *c = commits->pdata[i];
		g_autofree char *review = c->review_id ? g_strdup_printf("%" G_GINT64_FORMAT, c->review_id)
					: g_strdup("-");

		g_string_append_printf(s, "  %.12s  %-13s  %-17s  %6s  %-7s  %s\n", c->commit_id, c->state,
				       c->verdict ? c->verdict : "-", review, mail_state(c),
				       c->subject ? c->subject : "");
		if (c->reason && strcmp(c->state, "merge"))
			g_string_append_printf(s, "  %12s  (%s)\n", "", c->reason);
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

static void json_id(JsonBuilder *b, const char *name, gint64 id)
{
	json_builder_set_member_name(b, name);
	if (id)
		json_builder_add_int_value(b, id);
	else
		json_builder_add_null_value(b);
}

JsonNode *pk_push_json(const struct pk_store_push *p, const GPtrArray *commits)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autofree char *when = utc_time(p->created, "%FT%TZ");

	json_builder_begin_object(b);
	pk_json_int(b, "push", p->id);
	pk_json_str(b, "tree", p->tree);
	pk_json_str(b, "branch", p->branch);
	pk_json_str(b, "date", when);
	pk_json_str(b, "old_tip", p->old_tip);
	pk_json_str(b, "new_tip", p->new_tip);
	pk_json_bool(b, "forced", p->forced);
	json_id(b, "job", p->job_id);
	pk_json_str(b, "job_state", p->job_state);
	pk_json_int(b, "left_out", p->left_out);
	pk_json_str(b, "note", p->note);
	json_builder_set_member_name(b, "commits");
	json_builder_begin_array(b);
	for (guint i = 0; commits && i < commits->len; i++) {
		const struct pk_store_push_commit *c = commits->pdata[i];
		g_autofree char *subject = c->subject && !g_utf8_validate(c->subject, -1, NULL)
					   ? g_utf8_make_valid(c->subject, -1) : NULL;

		json_builder_begin_object(b);
		pk_json_str(b, "commit", c->commit_id);
		pk_json_str(b, "parent", c->parent);
		pk_json_str(b, "subject", subject ? subject : c->subject);
		pk_json_str(b, "author", c->author);
		pk_json_str(b, "committer", c->committer);
		pk_json_str(b, "state", c->state);
		pk_json_str(b, "reason", c->reason);
		pk_json_str(b, "verdict", c->verdict);
		json_id(b, "review", c->review_id);
		pk_json_str(b, "mail", c->mail_message_id);
		pk_json_bool(b, "mail_sent", c->mail_sent != 0);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}
