/*
 * listpolicy.h - what a list wants mailed: which [list NAME] group a
 * patch mail belongs to, and whether a tested patch's outcome is the
 * author's to hear about or the bot's own limit.
 *
 * Maintainers have said it of review bots in public: send what is
 * relevant to the developer's submission, never a mail because the bot's
 * code or its infrastructure failed, and nothing to a list that did not
 * ask.  So a list is answered only once it has a group (or [daemon]
 * reply_on says otherwise), and under reply = changes only an outcome
 * the patch itself caused is mailed: a console change, or a build or a
 * boot the patch broke, shown from evidence (the base built and booted;
 * the errors or the console name the patch's files).  Every other
 * outcome (no base takes the series, no config builds a file, the base
 * lacks a name the series needs, the policy or the lab failed) is the
 * bot's limit: stored, shown on the site and in history, never mailed.
 *
 * Pure functions over the configuration and a review model (review.h);
 * the daemon gathers the evidence that needs the lab (lab/absent.h) and
 * the store (the brakes, an earlier version's mail) and decides.
 * Everything returned is borrowed from the arguments unless said.
 */
#ifndef PK_LISTPOLICY_H
#define PK_LISTPOLICY_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>

#include "base/verdict.h"

/*
 * Which tested patches (or pushed commits) a list is mailed about: the
 * reply key of [list NAME], [tree NAME] and [daemon] reply_on.  What
 * "the author's" is: pk_reply_judge(), below.
 */
enum pk_reply_mode {
	PK_REPLY_OFF,      /* none: tested and stored only ("never" is the old word for it) */
	PK_REPLY_CHANGES,  /* what is the author's: the console changed, or the patch broke the build
			      or the boot; never the bot's limits */
	PK_REPLY_ALWAYS,   /* every tested patch, the bot's limits included */
};
/* The word of the config for a mode ("off", "changes", "always"). */
const char *pk_reply_mode_name(enum pk_reply_mode mode);

/*
 * What a list wants mailed, and how: the keys a [list NAME] group and a
 * [tree NAME] group share (config.example says each one's default).
 */
struct pk_reply_policy {
	enum pk_reply_mode reply;
	bool to_author;           /* To the author (default true); false: To the list */
	bool cc_list;             /* Cc the list (default true) */
	bool positive;            /* with changes, also a no-visible-change patch (default false) */
	unsigned embargo_minutes; /* a mail waits this long; a later version or a resend inside the
				     window replaces it (default 0: at once) */
	char **subject_prefixes;  /* lower case: only a [PATCH ...] tag with one of these words is
				     mailed; NULL: any */
	unsigned max_per_day;     /* mails to the list in any 24 hours; over it: held, logged;
				     0: no limit (default 50) */
	unsigned max_per_author_day; /* the same per author (default 20) */
};

/*
 * [list NAME]: a mailing list the bot may answer, with its policy.  A
 * patch mail is the list's when its List-Id is list_id, else when address
 * is in its To or Cc (pk_list_match() says the order).
 */
struct pk_list_config {
	char *name;               /* NAME of [list NAME] */
	char *address;            /* address = (lower case): the list's posting address */
	char *list_id;            /* list_id = (lower case, no <>), default address with its @ made
				     a dot, as vger's and most lists' List-Id reads */
	struct pk_reply_policy policy;
};

/* A patch mail's list and the policy it is answered under. */
struct pk_list_match {
	const struct pk_list_config *list;   /* its [list NAME] group, or NULL: none matched */
	struct pk_reply_policy policy;       /* the group's, or [daemon] reply_on's with the defaults
						of a group (subject_prefixes borrowed) */
	const char *address;                 /* the list's address, to Cc; NULL when unknown */
	const char *how;                     /* "List-Id", "To/Cc", "the source's list", or "no
						[list] group" (static) */
};

/*
 * The list of a patch mail among lists (the [list NAME] groups, struct
 * pk_list_config *, in the file's order; may be NULL): the group whose
 * list_id its List-Id names (the list that delivered this copy); else the first group, in
 * the file's order, whose address is in its To or Cc (addrs: the
 * addr-specs of both, any case, NULL-terminated); else the group of the
 * source's list = (the source is that list's archive).  None of them:
 * list NULL, the policy reply_on's ([daemon]'s: off unless it says
 * otherwise), address the source's list.  list_id is the header as sent
 * ("Name <id>"), or NULL; source_list may be NULL.
 */
void pk_list_match(struct pk_list_match *out, const GPtrArray *lists, enum pk_reply_mode reply_on,
		   const char *list_id, const char *const *addrs, const char *source_list);

/*
 * Whether a subject passes subject_prefixes: its leading [...] tags
 * ("[PATCH tty-next v2 1/3]", "[RFC PATCH net]") hold one of the words,
 * any case.  NULL prefixes: every subject passes.
 */
bool pk_list_subject_ok(const char *const *prefixes, const char *subject);

/* Whose an outcome is, as judged by pk_reply_judge(). */
enum pk_reply_class {
	PK_REPLY_AUTHORS,   /* the patch's own effect or fault: mailed under changes */
	PK_REPLY_POSITIVE,  /* it changes nothing the kernel prints: mailed under positive */
	PK_REPLY_LIMIT,     /* the bot's limit (or nothing to say): never mailed but under always */
};

/* What pk_reply_judge() says, and why. */
struct pk_reply_judgement {
	enum pk_reply_class cls;
	/*
	 * The rule that held, a stable word the log, the store and the
	 * bench use: console-changed, build-broken, boot-broken,
	 * missing-select, no-visible-change; does-not-apply, not-built,
	 * base-lacks, base-broken, lab-failed, refused, errors-elsewhere,
	 * console-elsewhere, no-churn (static).
	 */
	const char *rule;
	char *why;          /* a sentence (new; pk_reply_judgement_clear()) */
};
void pk_reply_judgement_clear(struct pk_reply_judgement *j);

/* The evidence pk_reply_judge() weighs beside the review model. */
struct pk_reply_facts {
	const char *const *files;      /* the paths the patch touches, NULL-terminated */
	const char *const *functions;  /* the functions its hunks are in (pk_reply_patch_functions()) */
	/*
	 * Of pk_reply_missing_names() of the build errors, those no C source
	 * or header of the tree the patch went on has (lab/absent.h); NULL
	 * when they were not looked for.
	 */
	const char *const *absent;
	/* the tree the patch went on is the series' own base-commit: what it lacks, the author's lacked */
	bool own_base;
	/*
	 * Why no base takes the whole series (its patches were tried on the
	 * first base all the same, each on what the ones before it made, a
	 * patch that did not apply left out), or NULL when one does.
	 */
	const char *series_gap;
};

/*
 * Whose the outcome of a review model (review.h: verdict, before and
 * after, build_errors, console_tail, relinked, coverage) is, by these
 * rules in this order:
 *   no-churn: nothing to say;
 *   does-not-apply: the bot's limit;
 *   any other outcome of a series no base takes whole (facts->series_gap):
 *   series-does-not-apply, the bot's limit (the tree it was tested on is
 *   not the author's);
 *   no-visible-change: positive;
 *   console-changed: the author's;
 *   does-not-apply, not-built, refused: the bot's limits;
 *   build-failed or boot-failed of a base that did not build or boot
 *   itself: base-broken;
 *   build-failed whose kernel did not link for an option the patch does
 *   not select (relinked): missing-select, the author's;
 *   build-failed with names absent from the base (facts->absent not
 *   empty), unless the base is the series' own: base-lacks;
 *   build-failed whose errors name one of the patch's files: the
 *   author's (build-broken); else errors-elsewhere;
 *   boot-failed whose boot failed in QEMU or its capture (status
 *   failed): lab-failed; whose console names one of the patch's files
 *   or functions: the author's (boot-broken); else console-elsewhere.
 */
void pk_reply_judge(struct pk_reply_judgement *out, JsonObject *model, const struct pk_reply_facts *facts);

/* Whether a judgement is mailed under policy p. */
bool pk_reply_policy_mails(const struct pk_reply_policy *p, const struct pk_reply_judgement *j);

/*
 * The names a compiler's errors say are missing (an implicit declaration
 * of a function, an undeclared identifier, an unknown type name) and the
 * linker's undefined references, each once, in order: a new array of
 * strings (at most 32).
 */
GPtrArray *pk_reply_missing_names(const char *errors);

/*
 * The functions a patch's hunks are in, from their headers' section
 * text ("static int foo(struct x *y)" gives foo), each once: a new array
 * of strings.  files: struct pk_diff_file* (base/patch.h).
 */
GPtrArray *pk_reply_patch_functions(const GPtrArray *files);

/*
 * What a tested patch does, as a key equal for two patches that print
 * the same: the verdict, then every static finding (kind, file, texts,
 * levels and prefixes; not its line, which moves between versions),
 * every boot-log change and every printk index change (kind, file,
 * function, both sides), each list sorted, hashed (SHA-256, hex).  A
 * resend or a v2 with the same key says nothing new.  New string.
 */
char *pk_reply_effect_key(JsonObject *model);

#endif
