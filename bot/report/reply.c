/* reply.c - the reply mail under a tested patch; see reply.h. */
#include "report/reply.h"
#include "lab/arch.h"
#include "report/review.h"
#include "report/compose.h"
#include "intake/mailcmd.h"
#include "intake/series.h"
#include "lab/lab.h"
#include "base/util.h"

#include <string.h>

#define REPLY_WIDTH 72

/* Finding kinds that point at a mistake rather than at an intended change. */
static const enum pk_finding_kind mistakes[] = {
	PK_FINDING_LEVEL_MISSING, PK_FINDING_NEWLINE_LOST, PK_FINDING_CONT_BROKEN, PK_FINDING_STRING_SPLIT,
};

void pk_reply_clear(struct pk_reply *r)
{
	g_free(r->message_id);
	g_free(r->sender);
	if (r->recipients)
		g_ptr_array_unref(r->recipients);
	g_free(r->text);
	memset(r, 0, sizeof *r);
}

char *pk_reply_message_id(const char *patch_message_id, const char *from, const char *secret)
{
	g_autofree char *addr = pk_mail_addr(from);
	const char *at = addr ? strchr(addr, '@') : NULL;
	g_autofree char *sum = g_compute_hmac_for_string(G_CHECKSUM_SHA256, (const guchar *)secret,
							 strlen(secret), patch_message_id, -1);

	return g_strdup_printf("printkbot-%.24s@%s", sum, at && at[1] ? at + 1 : "printkbot.invalid");
}

/* The verdict a review model (review.h) states; PK_VERDICT_NONE when it states none. */
static enum pk_verdict model_verdict(JsonObject *model)
{
	enum pk_verdict v = PK_VERDICT_NONE;

	pk_verdict_parse(json_object_get_string_member_with_default(model, "verdict", ""), &v);
	return v;
}

/* The first lines: what was found, as the kernel test robot opens its reports (of a patch). */
static const char *found_sentence(enum pk_verdict verdict)
{
	static const char *const found[] = {
		[PK_VERDICT_CONSOLE_CHANGED] = "printkbot built and booted the kernel before and after "
				"this patch, and the patch changes what the kernel prints:",
		[PK_VERDICT_NO_VISIBLE_CHANGE] = "printkbot built and booted the kernel before and after "
				"this patch: it changes logging calls, but not what the kernel prints.",
		[PK_VERDICT_NO_CHURN] = "printkbot read this patch: it changes no printk-family call, so "
				"it was not built.",
		[PK_VERDICT_DOES_NOT_APPLY] = "printkbot could not apply this patch:",
		[PK_VERDICT_BUILD_FAILED] = "printkbot found that the kernel does not build with this patch:",
		[PK_VERDICT_BOOT_FAILED] = "printkbot found that the kernel with this patch builds but does "
				"not boot:",
		[PK_VERDICT_REFUSED] = "printkbot did not build this patch (its policy does not allow it):",
		[PK_VERDICT_NOT_BUILT] = "printkbot built and booted the kernel before and after this "
				"patch, but its kernel config does not compile all of the code the patch "
				"touches, so it cannot tell what that code prints:",
	};

	if ((unsigned)verdict < G_N_ELEMENTS(found) && found[verdict])
		return found[verdict];
	return "printkbot tested this patch:";
}

/* The same of a commit: "this commit", "the commit" (new). */
static char *found_sentence_commit(enum pk_verdict verdict)
{
	g_auto(GStrv) parts = g_strsplit(found_sentence(verdict), "patch", -1);

	return g_strjoinv("commit", parts);
}

/* Whether the review holds something the author should fix (build, boot, a mistake). */
static bool has_something_to_fix(JsonObject *model)
{
	enum pk_verdict verdict = model_verdict(model);
	JsonArray *findings = json_object_has_member(model, "findings")
			      ? json_object_get_array_member(model, "findings") : NULL;

	if (verdict == PK_VERDICT_BUILD_FAILED || verdict == PK_VERDICT_BOOT_FAILED)
		return true;
	for (guint i = 0; findings && i < json_array_get_length(findings); i++) {
		JsonObject *f = json_array_get_object_element(findings, i);
		const char *name = f ? json_object_get_string_member_with_default(f, "kind", "") : "";
		enum pk_finding_kind kind;

		if (!pk_finding_kind_parse(name, &kind))
			continue;
		for (size_t k = 0; k < G_N_ELEMENTS(mistakes); k++)
			if (kind == mistakes[k])
				return true;
	}
	return false;
}

/* A name to greet: the display name's first word, else the address's local part. */
static char *greeting(const struct pk_mail *m)
{
	if (m->from_name && *m->from_name) {
		g_auto(GStrv) words = g_strsplit(m->from_name, " ", 2);
		if (words[0] && *words[0])
			return g_strdup(words[0]);
	}
	if (m->from_addr)
		return g_strndup(m->from_addr, strcspn(m->from_addr, "@"));
	return g_strdup("there");
}

static void add_string(JsonObject *o, const char *name, const char *value)
{
	if (value)
		json_object_set_string_member(o, name, value);
	else
		json_object_set_null_member(o, name);
}

/* Add addr (lower case) unless it is there already, is the bot's, or PK_REPLY_MAX_RECIPIENTS are. */
static void add_recipient(GPtrArray *addrs, GPtrArray *shown, const char *mailbox, const char *bot)
{
	g_autofree char *addr = NULL;
	g_autofree char *lower = NULL;

	if (addrs->len >= PK_REPLY_MAX_RECIPIENTS)
		return;
	addr = pk_mail_addr(mailbox);
	lower = addr ? g_ascii_strdown(addr, -1) : NULL;
	if (!lower || (bot && !g_ascii_strcasecmp(lower, bot)))
		return;
	for (guint i = 0; i < addrs->len; i++)
		if (!strcmp(addrs->pdata[i], lower))
			return;
	g_ptr_array_add(addrs, g_steal_pointer(&lower));
	g_ptr_array_add(shown, g_strdup(mailbox));
}

/*
 * add_recipient(), but never not (an address, any case; NULL: none) nor
 * one of muted (NULL-terminated, may be NULL: the lists whose group says
 * reply = off, which a reply-all would Cc all the same).
 */
static void add_recipient_but(GPtrArray *addrs, GPtrArray *shown, const char *mailbox, const char *bot,
			      const char *not, const char *const *muted)
{
	g_autofree char *addr = pk_mail_addr(mailbox);

	if (addr && not && !g_ascii_strcasecmp(addr, not))
		return;
	for (const char *const *m = muted; addr && m && *m; m++)
		if (!g_ascii_strcasecmp(addr, *m))
			return;
	add_recipient(addrs, shown, mailbox, bot);
}

/* The author as a mailbox the header can carry: "Name <addr>" or addr. */
static char *author_mailbox(const struct pk_mail *m)
{
	return pk_mail_mailbox(m->from_name, m->from_addr);
}

char *pk_reply_archive_link(const char *archive, const char *message_id)
{
	g_autofree char *id = NULL;

	if (!archive || !message_id)
		return NULL;
	/* '/', '?', '#' and '%' would end or change the path; '@' and the like stay, as lore writes them */
	id = g_uri_escape_string(message_id, G_URI_RESERVED_CHARS_ALLOWED_IN_PATH_ELEMENT, FALSE);
	return g_strdup_printf("%s%s%s/", archive, g_str_has_suffix(archive, "/") ? "" : "/", id);
}

/* A word as a shell reads it back: as it is when it holds nothing the shell acts on, else quoted. */
static char *shell_word(const char *s)
{
	for (const char *p = s; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("@%+=:,./_-", *p))
			return g_shell_quote(s);
	return g_strdup(s);
}

char *pk_reply_reproduce(const char *message_id, const char *subject, const char *base,
			 const struct pk_arch *arch)
{
	g_autoptr(GString) cmd = g_string_new("b4 am -o -");
	g_autofree char *id = shell_word(message_id);
	struct pk_subject s;

	pk_subject_parse(&s, subject);
	/* b4 takes the newest version in the thread unless told which */
	if (s.version > 1)
		g_string_append_printf(cmd, " -v %d", s.version);
	/* patch n of a series was tested on 1..n-1: b4 gives the whole series unless told */
	if (s.total > 1 && s.number > 1)
		g_string_append_printf(cmd, " -P 1-%d", s.number);
	else if (s.total > 1)
		g_string_append(cmd, " -P 1");
	/* "--": the Message-ID is the sender's, and one that starts with '-' would be an option of b4 */
	g_string_append_printf(cmd, " -- %s | printkbot test", id);
	if (arch && arch != &pk_arch_x86_64)
		g_string_append_printf(cmd, " --arch %s", arch->name);
	if (base && strcmp(base, PK_LAB_BASE_TAG)) {
		g_autofree char *rev = shell_word(base);
		g_string_append_printf(cmd, " --base %s", rev);
	}
	g_string_append(cmd, " -");
	pk_subject_clear(&s);
	return g_string_free(g_steal_pointer(&cmd), FALSE);
}

/* What the reply's head says beside the review model's own members (templates/reply.txt). */
/*
 * The head's config: line, "x86_64 tinyconfig + qemu/kernel.config HASH"
 * (the arch and its fragment as the model says, lab/arch.h), with what
 * was added for the patch and whether its lines follow.  model may be NULL.
 */
static char *config_head(JsonObject *model, const char *added, const char *hash, bool below)
{
	const struct pk_arch *arch =
		pk_arch_by_name(model ? json_object_get_string_member_with_default(model, "arch", NULL) : NULL);

	if (!arch)
		arch = &pk_arch_x86_64;
	return g_strdup_printf("%s tinyconfig + qemu/%s%s %s%s", arch->name, arch->fragment, added, hash,
			       below ? " (below)" : "");
}

static void add_head(JsonObject *o, const struct pk_mail *pm, const struct pk_reply_info *info,
		     const char *reply_id)
{
	const char *hash = json_object_get_string_member_with_default(o, "config_hash", "");
	const char *derived = json_object_get_string_member_with_default(o, "config_derived", NULL);
	/* the site's page of the series, which links the archive's in turn */
	g_autofree char *link = info->site_page ? g_strdup(info->site_page)
				: pk_reply_archive_link(info->archive, pm->message_id);
	g_autofree char *closes = pk_reply_archive_link(info->archive, reply_id);
	g_autofree char *config = config_head(o, derived ? " + lines for this patch" : "", hash,
					      info->config_lines != NULL);
	g_autofree char *subject = pk_mail_clean_subject(pm->subject ? pm->subject : "");
	g_auto(GStrv) extra = derived ? g_strsplit(derived, "\n", -1) : NULL;
	JsonArray *lines = json_array_new();

	for (const char *const *l = info->config_lines; l && *l; l++)
		json_array_add_string_element(lines, *l);
	/* a config derived for the patch (lab/derive.h): its own lines follow the fragment's */
	for (char **l = extra; info->config_lines && l && *l; l++)
		if (**l)
			json_array_add_string_element(lines, *l);
	add_string(o, "kernel", info->kernel ? info->kernel : info->base);
	add_string(o, "patch_link", link);
	add_string(o, "patch_subject", subject);
	add_string(o, "config_name", config);
	add_string(o, "compiler", info->compiler);
	add_string(o, "closes", closes);
	json_object_set_boolean_member(o, "has_config_lines", json_array_get_length(lines) > 0);
	json_object_set_array_member(o, "config_lines", lines);
	/* the review inside the reply leaves out what the head says (review.txt) */
	json_object_set_boolean_member(o, "in_reply", TRUE);
}

/* Lines of text (a last line without its newline counts). */
static unsigned count_lines(const char *text)
{
	unsigned n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n + (*text && text[strlen(text) - 1] != '\n');
}

static guint array_length(JsonObject *o, const char *name)
{
	return json_object_has_member(o, name) ? json_array_get_length(json_object_get_array_member(o, name)) : 0;
}

/*
 * What a reply over its lines may lose, in this order, whole entries at a
 * time: the boot-log and index changes (what the issue is about, and the
 * longest), the kernel config's lines (reproduce: makes the same config),
 * checkpatch's advice, the coverage of each file, the findings' groups.
 * Each with the flag its template asks (NULL: none), the member that says
 * what was left out, and how one entry is named.
 */
static const struct cut_stage {
	const char *lists[2];        /* the model's arrays, cut in this order */
	const char *flags[2];        /* "has_..." of each, or NULL */
	const char *note;            /* the template's member for "... and N more" */
	const char *what;            /* the entries, "%s" where the plural's s goes */
	bool all_or_none;            /* a part of it would mislead (the config) */
} cut_stages[] = {
	{ { "console", "index" }, { "has_console", "has_index" }, "more_changes_wrapped",
	  "change%s of the boot log and the printk index", false },
	{ { "config_lines", NULL }, { "has_config_lines", NULL }, "config_left_out_wrapped",
	  "line%s of the kernel config", true },
	{ { "advice", NULL }, { "has_advice", NULL }, "more_advice_wrapped", "kind%s of advice", false },
	{ { "coverage", NULL }, { "has_coverage", NULL }, "more_coverage_wrapped", "file%s of the patch", false },
	/* has_digest stays: without it the review would list every finding */
	{ { "digest", NULL }, { NULL, NULL }, "more_findings_wrapped", "group%s of findings", false },
};

static guint stage_total(JsonObject *o, const struct cut_stage *st)
{
	return array_length(o, st->lists[0]) + (st->lists[1] ? array_length(o, st->lists[1]) : 0);
}

/*
 * The arrays of stage st cut to their first keep entries (the first
 * array's first), from full (the uncut model's object), and a sentence
 * of what was left out and where it all is (where: "every one is on URL").
 */
static void cut_to(JsonObject *o, JsonObject *full, const struct cut_stage *st, guint keep, const char *where)
{
	guint left = 0;

	for (size_t k = 0; k < G_N_ELEMENTS(st->lists) && st->lists[k]; k++) {
		JsonArray *all = json_object_has_member(full, st->lists[k])
				 ? json_object_get_array_member(full, st->lists[k]) : NULL;
		JsonArray *kept = json_array_new();

		for (guint i = 0; all && i < json_array_get_length(all); i++) {
			if (keep) {
				json_array_add_element(kept, json_node_copy(json_array_get_element(all, i)));
				keep--;
			} else {
				left++;
			}
		}
		if (st->flags[k])
			json_object_set_boolean_member(o, st->flags[k], json_array_get_length(kept) > 0);
		json_object_set_array_member(o, st->lists[k], kept);
	}
	g_autofree char *what = g_strdup_printf(st->what, left == 1 ? "" : "s");
	g_autofree char *more = st->all_or_none
		? g_strdup_printf("The %u %s are left out to keep this mail short: `printkbot setup` and the "
				  "reproduce line above make the same config.", left, what)
		: g_strdup_printf("... and %u more %s, left out to keep this mail short: %s", left, what, where);
	/* the config's note is a paragraph of the mail, the others sit in the review's lists */
	g_autofree char *wrapped = st->all_or_none ? pk_wrap(more, REPLY_WIDTH, "") : pk_wrap(more, REPLY_WIDTH - 2, "  ");
	g_autofree char *indented = st->all_or_none ? g_strdup(wrapped) : g_strconcat("  ", wrapped, NULL);

	json_object_set_string_member(o, st->note, left ? indented : "");
}

/*
 * A copy of model the reply may change: json_node_copy() shares the
 * object (and so the caller's model would get the reply's members).
 */
static JsonNode *model_copy(JsonNode *model)
{
	g_autofree char *text = json_to_string(model, FALSE);

	return json_from_string(text, NULL);
}

/* Render the review, then the mail around it through tmpl. */
static char *render_around(JsonNode *reply_model, const char *tmpl, GError **err)
{
	g_autofree char *review = pk_review_render(reply_model, "review.txt", err);

	if (!review)
		return NULL;
	add_string(json_node_get_object(reply_model), "review", review);
	return pk_review_render(reply_model, tmpl, err);
}

/*
 * The mail through tmpl cut so that it has at most max lines (0: no
 * limit): stage after stage of cut_stages[], each only while the mail is
 * still over, as few entries cut as that takes (a binary search on how
 * many are kept; each try renders the mail again, a millisecond).  A mail
 * over max with every stage cut is the shortest there is.
 */
static char *render_capped(JsonNode *reply_model, const char *tmpl, unsigned max, const char *where,
			   GError **err)
{
	JsonObject *o = json_node_get_object(reply_model);
	/* the whole model, which cut_to() takes the entries from */
	g_autoptr(JsonNode) full = model_copy(reply_model);
	char *text = render_around(reply_model, tmpl, err);

	for (size_t k = 0; text && max && count_lines(text) > max && k < G_N_ELEMENTS(cut_stages); k++) {
		const struct cut_stage *st = &cut_stages[k];
		guint total = stage_total(o, st), lo = 0, hi = total;

		if (!total)
			continue;
		/* the largest keep in [lo, hi) that fits; keep 0 when none does */
		while (!st->all_or_none && lo + 1 < hi) {
			guint mid = (lo + hi) / 2;
			g_autofree char *t = NULL;

			cut_to(o, json_node_get_object(full), st, mid, where);
			if (!(t = render_around(reply_model, tmpl, err))) {
				g_free(text);
				return NULL;
			}
			if (count_lines(t) <= max)
				lo = mid;
			else
				hi = mid;
		}
		cut_to(o, json_node_get_object(full), st, lo, where);
		g_free(text);
		text = render_around(reply_model, tmpl, err);
	}
	return text;
}

/* Where every change of a cut reply is: the series' page, the patch's, else how to run it again. */
static char *all_changes_where(const struct pk_reply_info *info, const char *message_id)
{
	g_autofree char *link = info->site_page ? g_strdup(info->site_page)
				: pk_reply_archive_link(info->archive, message_id);

	return link ? g_strdup_printf("every one is on %s", link)
		    : g_strdup("`reproduce:` above prints every one");
}

/* The body: the review model with the reply's members, the review inside, through reply.txt. */
static char *render_body(JsonNode *model, const struct pk_mail *pm, const struct pk_reply_config *cfg,
			 const struct pk_reply_info *info, const char *mid, GError **err)
{
	g_autoptr(JsonNode) reply_model = model_copy(model);
	JsonObject *o = json_node_get_object(reply_model);
	g_autofree char *hello = greeting(pm);
	g_autofree char *found = pk_wrap(found_sentence(model_verdict(o)), REPLY_WIDTH, "");
	g_autofree char *note = info->base_note ? pk_wrap(info->base_note, REPLY_WIDTH - 2, " ") : NULL;
	g_autofree char *where = all_changes_where(info, pm->message_id);

	add_string(o, "greeting", hello);
	add_string(o, "found_wrapped", found);
	add_string(o, "base", info->base);
	add_string(o, "base_note_wrapped", note);
	add_string(o, "base_note", info->base_note);
	json_object_set_boolean_member(o, "to_fix", has_something_to_fix(o));
	add_string(o, "bot", cfg->from);
	add_string(o, "reply_message_id", mid);
	add_head(o, pm, info, mid);
	if (info->same_as) {
		/* an earlier mail said it all: one sentence */
		g_autofree char *same = pk_wrap(info->same_as, REPLY_WIDTH, "");

		add_string(o, "same_as_wrapped", same);
		return pk_review_render(reply_model, "reply-same.txt", err);
	}
	return render_capped(reply_model, "reply.txt", info->max_lines, where, err);
}

char *pk_reply_commit_reproduce(const char *tree_url, const char *branch, const char *commit)
{
	g_autofree char *url = shell_word(tree_url), *b = shell_word(branch);

	return g_strdup_printf("git fetch --no-tags %s %s && printkbot run %.12s^!", url, b, commit);
}

/* A name to greet in a mailbox "Name <addr>": the name's first word, else the address's local part. */
static char *greeting_of(const char *mailbox)
{
	g_autofree char *addr = pk_mail_addr(mailbox);
	const char *lt = mailbox ? strchr(mailbox, '<') : NULL;
	g_autofree char *name = lt ? g_strstrip(g_strndup(mailbox, lt - mailbox)) : NULL;

	if (name && *name) {
		g_auto(GStrv) words = g_strsplit(name, " ", 2);
		return g_strdup(words[0]);
	}
	return addr ? g_strndup(addr, strcspn(addr, "@")) : g_strdup("there");
}

/* The body of a commit's mail: the review model with the head's members, through commit.txt. */
static char *render_commit_body(JsonNode *model, const struct pk_reply_commit *c,
				const struct pk_reply_config *cfg, const struct pk_reply_info *info,
				const char *mid, GError **err)
{
	g_autoptr(JsonNode) reply_model = model_copy(model);
	JsonObject *o = json_node_get_object(reply_model);
	const char *hash = json_object_get_string_member_with_default(o, "config_hash", "");
	const char *derived = json_object_get_string_member_with_default(o, "config_derived", NULL);
	g_autofree char *hello = greeting_of(c->author);
	g_autofree char *found_text = found_sentence_commit(model_verdict(o));
	g_autofree char *found = pk_wrap(found_text, REPLY_WIDTH, "");
	g_autofree char *subject = pk_mail_clean_subject(c->subject ? c->subject : "");
	g_autofree char *config = config_head(o, derived ? " + lines for this commit" : "", hash,
					      info->config_lines != NULL);
	g_autofree char *reproduce = pk_reply_commit_reproduce(c->tree_url, c->branch, c->commit);
	g_auto(GStrv) extra = derived ? g_strsplit(derived, "\n", -1) : NULL;
	JsonArray *lines = json_array_new();

	for (const char *const *l = info->config_lines; l && *l; l++)
		json_array_add_string_element(lines, *l);
	for (char **l = extra; info->config_lines && l && *l; l++)
		if (**l)
			json_array_add_string_element(lines, *l);
	add_string(o, "greeting", hello);
	add_string(o, "found_wrapped", found);
	add_string(o, "tree_url", c->tree_url);
	add_string(o, "branch", c->branch);
	add_string(o, "head", c->head);
	add_string(o, "commit", c->commit);
	add_string(o, "commit_subject", subject);
	add_string(o, "commit_author", c->author);
	add_string(o, "commit_date", c->date);
	add_string(o, "config_name", config);
	add_string(o, "compiler", info->compiler);
	add_string(o, "reproduce_commit", reproduce);
	json_object_set_boolean_member(o, "to_fix", has_something_to_fix(o));
	add_string(o, "bot", cfg->from);
	json_object_set_boolean_member(o, "has_config_lines", json_array_get_length(lines) > 0);
	json_object_set_array_member(o, "config_lines", lines);
	/* the review inside the mail leaves out what the head says (review.txt) */
	json_object_set_boolean_member(o, "in_reply", TRUE);
	return render_capped(reply_model, "commit.txt", info->max_lines, "`reproduce:` above prints every one",
			     err);
}

int pk_reply_build_commit(struct pk_reply *out, const struct pk_reply_commit *c, JsonNode *model,
			  const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err)
{
	g_autofree char *bot_addr = pk_mail_addr(cfg->from);
	g_autofree char *author_addr = c->author ? pk_mail_addr(c->author) : NULL;
	g_autofree char *key = g_strdup_printf("commit %s", c->commit);
	g_autofree char *mid = NULL, *body = NULL, *subject = NULL, *clean = NULL, *xheader = NULL;
	g_autofree char *defused = NULL;
	g_autofree char *auto_submitted = g_strdup("Auto-Submitted: auto-generated");
	g_autoptr(GPtrArray) addrs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) to_shown = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) cc_shown = g_ptr_array_new_with_free_func(g_free);
	enum pk_verdict verdict = model_verdict(json_node_get_object(model));
	struct pk_mail_out m = { 0 };
	char *text;

	if (!author_addr)
		return pk_error(err, PK_ERROR_INPUT, "commit %.12s: its author '%s' cannot be mailed", c->commit,
				c->author ? c->author : "");
	if (!bot_addr)
		return pk_error(err, PK_ERROR_INPUT, "[daemon] from: '%s' is not a mailbox", cfg->from);
	if (!info->id_secret || !*info->id_secret)
		return pk_error(err, PK_ERROR_FAILED, "commit %.12s: no secret to key the mail's Message-ID with",
				c->commit);
	mid = pk_reply_message_id(key, cfg->from, info->id_secret);
	if (!(body = render_commit_body(model, c, cfg, info, mid, err)))
		return -1;
	/* To the author (else the list); Cc the committer (who pushed or applied it) and the tree's list */
	if (!info->policy || info->policy->to_author || !c->list)
		add_recipient(addrs, to_shown, c->author, bot_addr);
	else
		add_recipient(addrs, to_shown, c->list, bot_addr);
	if (c->committer)
		add_recipient(addrs, cc_shown, c->committer, bot_addr);
	if (c->list && (!info->policy || info->policy->cc_list))
		add_recipient(addrs, cc_shown, c->list, bot_addr);
	if (!addrs->len)
		return pk_error(err, PK_ERROR_INPUT, "commit %.12s: nobody to mail but the bot", c->commit);
	g_ptr_array_add(to_shown, NULL);
	g_ptr_array_add(cc_shown, NULL);

	/* as the kernel test robot names a commit of a tree it follows: [tree:branch n/m] */
	clean = pk_mail_clean_subject(c->subject ? c->subject : "");
	subject = c->total > 1 ? g_strdup_printf("[%s:%s %u/%u] %s: %s", c->tree, c->branch, c->index, c->total,
						 clean, pk_verdict_name(verdict))
			       : g_strdup_printf("[%s:%s] %s: %s", c->tree, c->branch, clean, pk_verdict_name(verdict));
	xheader = g_strdup_printf("X-Printkbot: printkbot %s; verdict=%s; commit=%s", PK_VERSION,
				  pk_verdict_name(verdict), c->commit);
	m.from = cfg->from;
	m.to = (const char *const *)to_shown->pdata;
	m.cc = (const char *const *)cc_shown->pdata;
	m.subject = subject;
	m.message_id = mid;
	m.date = info->date ? info->date : g_get_real_time() / G_USEC_PER_SEC;
	m.extra = (const char *const[]){ xheader, auto_submitted, NULL };
	/* a reply that carries this one unquoted must give the bot no command */
	m.body = defused = pk_mailcmd_defuse(body);
	if (!(text = pk_mail_compose(&m, err)))
		return -1;
	out->message_id = g_steal_pointer(&mid);
	out->sender = g_steal_pointer(&bot_addr);
	out->recipients = g_steal_pointer(&addrs);
	out->text = text;
	return 0;
}

/*
 * The References of a reply to m, onto refs (borrowed, NULL-terminated):
 * m's own (or its In-Reply-To) and m, the well-formed ones; too many: the
 * thread's root and the nearest ones, as RFC 5322 3.6.4 allows.
 */
static void thread_references(GPtrArray *refs, const struct pk_mail *m)
{
	for (guint i = 0; i < m->references->len; i++)
		if (pk_mail_msgid_ok(m->references->pdata[i]))
			g_ptr_array_add(refs, m->references->pdata[i]);
	if (!m->references->len && m->in_reply_to && pk_mail_msgid_ok(m->in_reply_to))
		g_ptr_array_add(refs, m->in_reply_to);
	g_ptr_array_add(refs, m->message_id);
	if (refs->len > PK_REPLY_MAX_REFERENCES)
		g_ptr_array_remove_range(refs, 1, refs->len - PK_REPLY_MAX_REFERENCES);
	g_ptr_array_add(refs, NULL);
}

/*
 * The answer to mail `to`, composed into out: From the bot, To and Cc as
 * shown (NULL-terminated), threaded under `to` (thread_references()), "Re:"
 * its subject (fallback when it has none), the X-Printkbot header xheader
 * and Auto-Submitted; date 0: now.  Takes *mid, *bot_addr and *addrs on
 * success.
 */
static int compose_answer(struct pk_reply *out, const struct pk_reply_config *cfg, const struct pk_mail *to,
			  const char *fallback, const char *xheader, GPtrArray *to_shown, GPtrArray *cc_shown,
			  const char *body, gint64 date, char **mid, char **bot_addr, GPtrArray **addrs,
			  GError **err)
{
	g_autoptr(GPtrArray) refs = g_ptr_array_new();
	g_autofree char *clean = pk_mail_clean_subject(to->subject ? to->subject : fallback);
	g_autofree char *subject = g_ascii_strncasecmp(clean, "re:", 3) ? g_strdup_printf("Re: %s", clean)
				 : g_strdup(clean);
	/* RFC 3834: an automatic reply, which vacation responders leave unanswered (a copy:
	   pk_mail_compose() trims the values of extra in place) */
	g_autofree char *auto_submitted = g_strdup("Auto-Submitted: auto-generated");
	g_autofree char *xh = g_strdup(xheader);
	g_autofree char *defused = NULL;
	struct pk_mail_out m = { 0 };
	char *text;

	thread_references(refs, to);
	m.from = cfg->from;
	m.to = (const char *const *)to_shown->pdata;
	m.cc = (const char *const *)cc_shown->pdata;
	m.subject = subject;
	m.message_id = *mid;
	m.in_reply_to = to->message_id;
	m.references = (const char *const *)refs->pdata;
	m.date = date ? date : g_get_real_time() / G_USEC_PER_SEC;
	m.extra = (const char *const[]){ xh, auto_submitted, NULL };
	/* a reply that carries this one unquoted must give the bot no command */
	m.body = defused = pk_mailcmd_defuse(body);
	if (!(text = pk_mail_compose(&m, err)))
		return -1;
	out->message_id = g_steal_pointer(mid);
	out->sender = g_steal_pointer(bot_addr);
	out->recipients = g_steal_pointer(addrs);
	out->text = text;
	return 0;
}

int pk_reply_build(struct pk_reply *out, const struct pk_mail *pm, JsonNode *model,
		   const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err)
{
	g_autofree char *bot_addr = pk_mail_addr(cfg->from);
	g_autofree char *body = NULL;
	g_autofree char *author = NULL, *author_addr = NULL, *mid = NULL;
	g_autoptr(GPtrArray) addrs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) to_shown = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) cc_shown = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *xheader = NULL, *list_addr = NULL;
	enum pk_verdict verdict = model_verdict(json_node_get_object(model));
	bool to_author, cc_list;

	if (!pm->message_id || !pk_mail_msgid_ok(pm->message_id))
		return pk_error(err, PK_ERROR_INPUT, "the patch has no usable Message-ID to reply to");
	if (!pm->from_addr || !(author = author_mailbox(pm)) || !(author_addr = pk_mail_addr(author)))
		return pk_error(err, PK_ERROR_INPUT, "%s: the patch's From cannot be replied to", pm->message_id);
	if (!bot_addr)
		return pk_error(err, PK_ERROR_INPUT, "[daemon] from: '%s' is not a mailbox", cfg->from);
	if (!info->id_secret || !*info->id_secret)
		return pk_error(err, PK_ERROR_FAILED, "%s: no secret to key the reply's Message-ID with",
				pm->message_id);
	mid = pk_reply_message_id(pm->message_id, cfg->from, info->id_secret);
	if (!(body = render_body(model, pm, cfg, info, mid, err)))
		return -1;

	/* To the author (else the list); Cc the list, then (cc_original) whoever the patch went to */
	to_author = !info->policy || info->policy->to_author || !info->list;
	cc_list = !info->policy || info->policy->cc_list;
	/* a list that said cc_list = false is left out wherever the patch named it */
	list_addr = !cc_list && info->list ? pk_mail_addr(info->list) : NULL;
	add_recipient(addrs, to_shown, to_author ? author : info->list, bot_addr);
	if (info->list && cc_list)
		add_recipient(addrs, cc_shown, info->list, bot_addr);
	if (cfg->cc_original || !info->list) {
		for (guint i = 0; i < pm->to->len; i++)
			add_recipient_but(addrs, cc_shown, pm->to->pdata[i], bot_addr, list_addr, info->muted);
	}
	if (cfg->cc_original)
		for (guint i = 0; i < pm->cc->len; i++)
			add_recipient_but(addrs, cc_shown, pm->cc->pdata[i], bot_addr, list_addr, info->muted);
	g_ptr_array_add(to_shown, NULL);
	g_ptr_array_add(cc_shown, NULL);

	xheader = g_strdup_printf("X-Printkbot: printkbot %s; verdict=%s", PK_VERSION, pk_verdict_name(verdict));
	return compose_answer(out, cfg, pm, "your patch", xheader, to_shown, cc_shown, body, info->date, &mid,
			      &bot_addr, &addrs, err);
}

/* ---- the answer to a command by mail ------------------------------------- */

/* A JSON array of strings (NULL-terminated; NULL: empty). */
static JsonArray *string_array(const char *const *v)
{
	JsonArray *a = json_array_new();

	for (; v && *v; v++)
		json_array_add_string_element(a, *v);
	return a;
}

/* Each tested patch as command.txt lists it: position, subject, verdict, and its review. */
static JsonArray *command_patches(const struct pk_reply_command *c, GError **err)
{
	g_autoptr(JsonArray) out = json_array_new();

	for (unsigned i = 0; i < c->n; i++) {
		g_autoptr(JsonNode) model = json_node_copy(c->models[i]);
		JsonObject *m = json_node_get_object(model);
		JsonObject *p = json_object_new();
		g_autofree char *review = NULL;

		/* the review inside the answer leaves out what its head says (review.txt) */
		json_object_set_boolean_member(m, "in_reply", TRUE);
		if (!(review = pk_review_render(model, "review.txt", err))) {
			json_object_unref(p);
			return NULL;
		}
		add_string(p, "position", json_object_get_string_member_with_default(m, "position", NULL));
		add_string(p, "subject", json_object_get_string_member_with_default(m, "subject", ""));
		add_string(p, "verdict", c->verdicts && c->verdicts[i] ? c->verdicts[i]
			   : json_object_get_string_member_with_default(m, "verdict", ""));
		add_string(p, "review", review);
		json_array_add_object_element(out, p);
	}
	return g_steal_pointer(&out);
}

/* The body of a command's answer, through command.txt. */
static char *render_command_body(const struct pk_mail *cmd, const struct pk_reply_command *c,
				 const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err)
{
	g_autoptr(JsonNode) root = json_node_new(JSON_NODE_OBJECT);
	JsonObject *o = json_object_new();
	JsonObject *first = c->n ? json_node_get_object(c->models[0]) : NULL;
	const char *hash = first ? json_object_get_string_member_with_default(first, "config_hash", "") : "";
	g_autofree char *hello = greeting(cmd);
	g_autofree char *problem = c->problem ? pk_wrap(c->problem, REPLY_WIDTH, "") : NULL;
	g_autofree char *note = info->base_note ? pk_wrap(info->base_note, REPLY_WIDTH - 2, " ") : NULL;
	g_autofree char *config = config_head(first, "", hash, info->config_lines != NULL);
	JsonArray *patches = NULL;

	json_node_take_object(root, o);
	if (c->n && !(patches = command_patches(c, err)))
		return NULL;
	add_string(o, "greeting", hello);
	add_string(o, "line", c->line);
	json_object_set_boolean_member(o, "help", c->help);
	add_string(o, "problem_wrapped", problem);
	json_object_set_boolean_member(o, "has_bases", c->bases && *c->bases);
	json_object_set_array_member(o, "bases", string_array(c->bases));
	json_object_set_boolean_member(o, "tested", c->n > 0);
	add_string(o, "series", c->series);
	add_string(o, "base", info->base);
	add_string(o, "base_note_wrapped", note);
	add_string(o, "kernel", info->kernel ? info->kernel : info->base);
	add_string(o, "config_name", config);
	add_string(o, "compiler", info->compiler);
	json_object_set_boolean_member(o, "has_config_lines", c->n && info->config_lines && *info->config_lines);
	json_object_set_array_member(o, "config_lines", string_array(c->n ? info->config_lines : NULL));
	json_object_set_array_member(o, "patches", patches ? patches : json_array_new());
	add_string(o, "bot", cfg->from);
	add_string(o, "tool", "printkbot " PK_VERSION);
	return pk_review_render(root, "command.txt", err);
}

int pk_reply_build_command(struct pk_reply *out, const struct pk_mail *cmd, const struct pk_reply_command *c,
			   const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err)
{
	g_autofree char *bot_addr = pk_mail_addr(cfg->from);
	g_autofree char *sender = NULL, *key = NULL, *mid = NULL, *body = NULL, *xheader = NULL;
	g_autoptr(GPtrArray) addrs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) to_shown = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) cc_shown = g_ptr_array_new_with_free_func(g_free);

	if (!cmd->message_id || !pk_mail_msgid_ok(cmd->message_id))
		return pk_error(err, PK_ERROR_INPUT, "the command has no usable Message-ID to reply to");
	if (!cmd->from_addr || !(sender = author_mailbox(cmd)))
		return pk_error(err, PK_ERROR_INPUT, "%s: the command's From cannot be replied to", cmd->message_id);
	if (!bot_addr)
		return pk_error(err, PK_ERROR_INPUT, "[daemon] from: '%s' is not a mailbox", cfg->from);
	if (!info->id_secret || !*info->id_secret)
		return pk_error(err, PK_ERROR_FAILED, "%s: no secret to key the answer's Message-ID with",
				cmd->message_id);
	/* "command <id>": never the id of a reply to the same mail as a patch (pk_reply_build()) */
	key = g_strdup_printf("command %s", cmd->message_id);
	mid = pk_reply_message_id(key, cfg->from, info->id_secret);
	if (!(body = render_command_body(cmd, c, cfg, info, err)))
		return -1;

	/* To who asked, Cc the list: never whoever else the command names (a relay for a forger) */
	add_recipient(addrs, to_shown, sender, bot_addr);
	if (info->list)
		add_recipient(addrs, cc_shown, info->list, bot_addr);
	if (!addrs->len)
		return pk_error(err, PK_ERROR_INPUT, "%s: nobody to answer but the bot", cmd->message_id);
	g_ptr_array_add(to_shown, NULL);
	g_ptr_array_add(cc_shown, NULL);

	xheader = g_strdup_printf("X-Printkbot: printkbot %s; command=%s", PK_VERSION,
				  c->n ? "tested" : c->help ? "help" : "refused");
	return compose_answer(out, cfg, cmd, "#printkbot", xheader, to_shown, cc_shown, body, info->date, &mid,
			      &bot_addr, &addrs, err);
}
