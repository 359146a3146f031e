/*
 * reply-gate.c - whether a tested patch's or commit's mail goes out, and
 * when: the list's policy (report/listpolicy.h) with the evidence only
 * the lab and the store have (the names a base lacks, an earlier mail of
 * the same effect, the mails of the last 24 hours).  One decision per
 * tested patch or commit, logged with the rule that held.  See private.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/mail.h"
#include "intake/series.h"
#include "lab/absent.h"
#include "report/listpolicy.h"
#include "base/util.h"

#include <string.h>

#define DAY (24 * 3600)

void daemon_gate_clear(struct daemon_gate *g)
{
	g_free(g->list_name);
	if (g->muted)
		g_ptr_array_unref(g->muted);
	g_free(g->author);
	g_free(g->effect);
	g_free(g->held);
	g_free(g->same_as);
	pk_reply_judgement_clear(&g->judgement);
	memset(g, 0, sizeof *g);
}

/* The paths a patch touches, NULL-terminated, into paths (borrowed from patch). */
static void patch_paths(GPtrArray *paths, const struct pk_patch *patch)
{
	for (guint i = 0; patch && i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (f->old_path && g_strcmp0(f->old_path, f->new_path))
			g_ptr_array_add(paths, f->old_path);
		if (f->new_path)
			g_ptr_array_add(paths, f->new_path);
	}
	g_ptr_array_add(paths, NULL);
}

/*
 * The judgement of the patch's outcome.  A build that failed with names
 * the compiler or the linker lacked has those names looked for in the
 * tree the patch went on (before.commit): the evidence of base-lacks.
 */
static int gate_judge(struct daemon_gate *g, JsonObject *model, const struct pk_test_result *res,
		      const struct pk_patch *patch, const struct pk_lab *lab, bool own_base, const char *series_gap,
		      GError **err)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new();
	g_autoptr(GPtrArray) functions = pk_reply_patch_functions(patch ? patch->files : NULL);
	g_autoptr(GPtrArray) absent = NULL;
	struct pk_reply_facts facts = { .own_base = own_base, .series_gap = series_gap };

	patch_paths(paths, patch);
	g_ptr_array_add(functions, NULL);
	facts.files = (const char *const *)paths->pdata;
	facts.functions = (const char *const *)functions->pdata;
	if (res->verdict == PK_VERDICT_BUILD_FAILED && res->before.build.ok && !res->relinked && res->before.commit) {
		g_autoptr(GPtrArray) names = pk_reply_missing_names(res->after.build.errors);

		if (names->len) {
			g_ptr_array_add(names, NULL);
			if (pk_absent_names(&absent, lab, res->before.commit, (const char *const *)names->pdata,
					    err) < 0)
				return -1;
			g_ptr_array_add(absent, NULL);
			facts.absent = (const char *const *)absent->pdata;
		}
	}
	pk_reply_judge(&g->judgement, model, &facts);
	return 0;
}

/* Hold the mail: why (new), said in the log with the rule that held. */
static void gate_hold(struct daemon_gate *g, char *why)
{
	g->mail = false;
	g_free(g->held);
	g->held = why;
}

/*
 * The brakes of the group: at most max_per_day mails under it in any 24
 * hours, max_per_author_day to one author.  Over one: held, saying which.
 */
static int gate_brakes(struct pk_daemon *d, struct daemon_gate *g, const char *group, GError **err)
{
	gint64 now = daemon_now(), n = 0;

	if (g->policy.max_per_day &&
	    pk_store_replies_mailed_since(d->store, g->list_name, NULL, now - DAY, &n, err) < 0)
		return -1;
	if (g->policy.max_per_day && n >= g->policy.max_per_day) {
		gate_hold(g, g_strdup_printf("max_per_day: %s had %" G_GINT64_FORMAT " mail%s in the last 24 hours "
					     "(at most %u)", group, n, n == 1 ? "" : "s", g->policy.max_per_day));
		return 0;
	}
	if (g->policy.max_per_author_day && g->author &&
	    pk_store_replies_mailed_since(d->store, g->list_name, g->author, now - DAY, &n, err) < 0)
		return -1;
	if (g->policy.max_per_author_day && g->author && n >= g->policy.max_per_author_day)
		gate_hold(g, g_strdup_printf("max_per_author_day: %s had %" G_GINT64_FORMAT " mail%s to %s in the "
					     "last 24 hours (at most %u)", group, n, n == 1 ? "" : "s", g->author,
					     g->policy.max_per_author_day));
	return 0;
}

/*
 * Once per change: a patch of the same author that does what one mailed
 * already does is not mailed again; with positive it gets one line.
 */
static int gate_once(struct pk_daemon *d, struct daemon_gate *g, GError **err)
{
	struct pk_store_reply *same = NULL;
	struct pk_store_mail *m = NULL;
	g_autofree char *subject = NULL, *version = NULL;
	int rc;

	if (!g->author || (rc = pk_store_reply_same_effect(d->store, g->author, g->effect, &same, err)) == 0)
		return 0;
	if (rc < 0)
		return -1;
	if (pk_store_mail_get(d->store, same->mail_id, &m, err) < 0) {
		pk_store_reply_free(same);
		return -1;
	}
	subject = m && m->subject ? pk_mail_clean_subject(m->subject) : g_strdup("an earlier patch");
	version = m && m->version > 1 ? g_strdup_printf(" (v%d)", m->version) : g_strdup("");
	if (g->policy.positive)
		g->same_as = g_strdup_printf("This patch prints what \"%s\"%s printed: the boot log, the printk "
					     "index and the static findings are the same (the review of it: <%s>).",
					     subject, version, same->message_id);
	else
		gate_hold(g, g_strdup_printf("the same effect as \"%s\", mailed as <%s>: once per change", subject,
					     same->message_id));
	pk_store_mail_free(m);
	pk_store_reply_free(same);
	return 0;
}

/* The steps every mail takes once its policy is known: rule, once per change, brakes, embargo. */
static int gate_steps(struct pk_daemon *d, struct daemon_gate *g, const char *group, bool once, GError **err)
{
	if (g->policy.reply == PK_REPLY_OFF) {
		gate_hold(g, g_strdup_printf("%s: reply = off", group));
		return 0;
	}
	if (!pk_reply_policy_mails(&g->policy, &g->judgement)) {
		gate_hold(g, g_strdup_printf("%s, and %s mails %s only", g->judgement.why, group,
					     g->policy.positive ? "the author's changes and no-visible-change"
								: "the author's changes"));
		return 0;
	}
	g->mail = true;
	if (once && g->judgement.cls != PK_REPLY_LIMIT && gate_once(d, g, err) < 0)
		return -1;
	if (g->mail && gate_brakes(d, g, group, err) < 0)
		return -1;
	if (g->mail && g->policy.embargo_minutes)
		g->not_before = daemon_now() + (gint64)g->policy.embargo_minutes * 60;
	return 0;
}

int daemon_gate_patch(struct pk_daemon *d, struct daemon_gate *out, const struct pk_mail *mail,
		      const char *source_list, JsonObject *model, const struct pk_test_result *res,
		      const struct pk_lab *lab, bool own_base, const char *series_gap, GError **err)
{
	struct pk_list_match match;
	g_autoptr(GPtrArray) addrs = g_ptr_array_new();
	g_autofree char *group = NULL;

	memset(out, 0, sizeof *out);
	for (guint i = 0; mail->cc_addrs && i < mail->cc_addrs->len; i++)
		g_ptr_array_add(addrs, mail->cc_addrs->pdata[i]);
	g_ptr_array_add(addrs, NULL);
	pk_list_match(&match, d->config.lists, d->config.daemon.reply_on, mail->list_id, (const char *const *)addrs->pdata, source_list);
	out->policy = match.policy;
	/* a list that said reply = off is not Cc'd by a reply-all either */
	out->muted = g_ptr_array_new();
	for (guint i = 0; d->config.lists && i < d->config.lists->len; i++) {
		const struct pk_list_config *l = d->config.lists->pdata[i];

		if (l->policy.reply == PK_REPLY_OFF)
			g_ptr_array_add(out->muted, l->address);
	}
	g_ptr_array_add(out->muted, NULL);
	out->list_name = match.list ? g_strdup_printf("list %s", match.list->name) : NULL;
	out->list_address = match.address;
	out->author = mail->from_addr ? g_ascii_strdown(mail->from_addr, -1) : NULL;
	out->effect = pk_reply_effect_key(model);
	group = match.list ? g_strdup_printf("[list %s] (by its %s)", match.list->name, match.how)
			   : g_strdup_printf("a list with no [list] group ([daemon] reply_on = %s)",
					     pk_reply_mode_name(match.policy.reply));
	if (gate_judge(out, model, res, mail->patch, lab, own_base, series_gap, err) < 0)
		return -1;
	if (out->policy.reply != PK_REPLY_OFF && !pk_list_subject_ok(
		    (const char *const *)out->policy.subject_prefixes, mail->subject)) {
		g_autofree char *words = g_strjoinv(", ", out->policy.subject_prefixes);

		gate_hold(out, g_strdup_printf("the subject's [PATCH ...] tag has none of %s's subject_prefixes "
					       "(%s)", group, words));
		return 0;
	}
	return gate_steps(d, out, group, true, err);
}

int daemon_gate_commit(struct pk_daemon *d, struct daemon_gate *out, const struct pk_tree_group *t,
		       const char *author, JsonObject *model, const struct pk_test_result *res,
		       const struct pk_lab *lab, GError **err)
{
	g_autofree char *group = g_strdup_printf("[tree %s]", t->tree.name);
	g_autofree char *addr = author ? pk_mail_addr(author) : NULL;

	memset(out, 0, sizeof *out);
	out->policy = t->policy;
	out->list_name = g_strdup_printf("tree %s", t->tree.name);
	out->list_address = t->list;
	out->author = addr ? g_ascii_strdown(addr, -1) : NULL;
	out->effect = pk_reply_effect_key(model);
	/* a commit's base is its parent, in the tree it was pushed to: the author's own base */
	if (gate_judge(out, model, res, res->patch, lab, true, NULL, err) < 0)
		return -1;
	/* a commit tested before (same patch-id on the same tree) is never mailed again already */
	return gate_steps(d, out, group, false, err);
}

void daemon_gate_log(const struct daemon_gate *g, gint64 job_id, const char *msgid, const char *what)
{
	if (g->mail)
		daemon_log(job_id, msgid, "%s: mailed (%s: %s)%s", what, g->judgement.rule, g->judgement.why,
			   g->same_as ? "; an earlier mail did the same: one line" : "");
	else
		daemon_log(job_id, msgid, "%s: no mail (%s): %s", what, g->judgement.rule, g->held);
}
