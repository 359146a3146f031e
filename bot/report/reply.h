/*
 * reply.h - the report stage's mail: the reply the daemon sends under a
 * tested patch, rendered from templates/reply.txt around the review of
 * templates/review.txt, threaded and addressed as kernel developers
 * expect from the kernel test robot.
 *
 * The reply is built once, when the patch's test is stored: its
 * Message-ID is derived from the patch's own and the store's secret (one
 * reply per patch, the same id however often it is rendered or sent, and
 * one nobody who only read the patch can compute), and the whole mail is
 * what the store keeps and the outbox sends.  Headers taken from the
 * patch mail are checked by mail.h; a patch whose From cannot be answered
 * gets no reply (an error, which the caller records).
 */
#ifndef PK_REPLY_H
#define PK_REPLY_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>

#include "base/verdict.h"
#include "intake/mail.h"
#include "lab/arch.h"
#include "report/listpolicy.h"

/* Who a reply is from and whom it copies: [daemon] from and cc_original. */
struct pk_reply_config {
	char *from;               /* the bot's From: (default "printkbot <printkbot@localhost>",
				     which pk_config_check_daemon() refuses when replies are on) */
	bool cc_original;         /* Cc the patch's own To and Cc too (default true) */
};

/*
 * What the reply says beside the review: the head the kernel test robot
 * writes (base:, patch link:, config:, compiler:, reproduce:).  All
 * borrowed; what is NULL is left out of the reply.
 */
struct pk_reply_info {
	const char *base;          /* the base as named (a tag, a commit) */
	const char *base_note;     /* why that base (a base-commit: the bot lacks), or NULL */
	const char *list;          /* the list to Cc (the source's list =), or NULL */
	gint64 date;               /* Unix time for the Date header */
	const char *kernel;        /* the base as a person names it (describe.h), or NULL */
	const char *archive;       /* the source's archive = (a URL a Message-ID is appended to), or NULL */
	/*
	 * The page of the patch's series on the bot's site ([site] url,
	 * pk_site_series_url()), or NULL: "patch link:" is then the archive's
	 * page of the patch, as without a site.  An http(s) URL.
	 */
	const char *site_page;
	const char *compiler;      /* `gcc --version`'s first line, or NULL */
	const char *const *config_lines; /* qemu/kernel.config's options (describe.h), or NULL */
	/* what the reply's Message-ID is keyed with: the store's secret (pk_store_secret()); required */
	const char *id_secret;
	/*
	 * Who is mailed (report/listpolicy.h): To the author unless
	 * to_author is false (then To the list), the list Cc'd unless
	 * cc_list is false (then it is left out even where the patch named
	 * it).  NULL: To the author, Cc the list.
	 */
	const struct pk_reply_policy *policy;
	/*
	 * Addresses never Cc'd from the patch's own To and Cc (cc_original):
	 * the lists whose [list] group says reply = off.  NULL-terminated, or
	 * NULL.
	 */
	const char *const *muted;
	/*
	 * A reply of one sentence instead of the review: an earlier mail
	 * said all of it (the same effect); NULL for the whole reply.
	 */
	const char *same_as;
	/*
	 * The most lines the reply's body may have ([daemon]
	 * max_reply_lines; 0: no limit): past it the boot-log and printk
	 * index changes are cut, whole changes at a time, and the reply
	 * says how many were left out and where they all are (site_page,
	 * else the archive's page of the patch, else reproduce:).
	 */
	unsigned max_lines;
};

/* The name of that secret in the store. */
#define PK_REPLY_ID_SECRET "reply-message-id"


/*
 * The most a reply carries, whatever the patch mail had: envelope
 * recipients (the author, the list, then its To and Cc in order; a
 * 10,000-address Cc is not answered to all) and References ids (the
 * thread's first and the nearest ones).
 */
#define PK_REPLY_MAX_RECIPIENTS 200   /* a real patch has up to ~100 (get_maintainer.pl) */
#define PK_REPLY_MAX_REFERENCES 20

/* A rendered reply; free with pk_reply_clear(). */
struct pk_reply {
	char *message_id;          /* without <> */
	char *sender;              /* envelope sender (the bot's address) */
	GPtrArray *recipients;     /* char*: envelope recipients, To then Cc, no duplicates */
	char *text;                /* the whole mail, CRLF line ends */
};
void pk_reply_clear(struct pk_reply *r);

/*
 * Build the reply to patch_mail (borrowed) from the review model (the
 * review.h JSON, borrowed; the review inside the reply is rendered from
 * it through templates/review.txt without what the reply's head says
 * already).  0, or -1 with err set (a template that does not render, a
 * header refused).  Every reply carries Auto-Submitted: auto-generated
 * (RFC 3834), so that vacation responders do not answer it, and no
 * line of its text (a patch's subject, a boot line) reads as a
 * #printkbot command: such a line is quoted (pk_mailcmd_defuse()), here
 * as in every mail this module builds.
 */
int pk_reply_build(struct pk_reply *out, const struct pk_mail *patch_mail, JsonNode *model,
		   const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err);

/*
 * What a mail about a pushed commit says of it beside the review (all
 * borrowed): the kernel test robot's head for a commit of a tree it
 * follows (tree:, head:, commit:, author:, date:).
 */
struct pk_reply_commit {
	const char *tree;          /* [tree NAME] */
	const char *branch;
	const char *tree_url;      /* the tree's url or path, as shown (a password as ***) */
	const char *head;          /* the branch's tip at the push (full id) */
	const char *commit;        /* full id */
	const char *subject;
	const char *author;        /* "Name <addr>": the mail's To */
	const char *committer;     /* "Name <addr>": Cc'd */
	const char *date;          /* the author's date as written (RFC 2822), or NULL */
	unsigned index, total;     /* its place among the push's commits (1-based) */
	const char *list;          /* the tree's list, Cc'd, or NULL */
};

/*
 * Build the mail about a pushed commit c from its review model (as
 * pk_reply_build() does for a patch mail): To its author, Cc its
 * committer and the tree's list, a new thread (no In-Reply-To), with the
 * head above and a reproduce that names the tree and the commit.  Its
 * Message-ID is derived from the commit id (pk_reply_message_id() of
 * "commit <id>"), so a mail built again keeps it.  info gives the date,
 * the compiler, the config lines and the secret (id_secret required);
 * its base, list and archive are not used.  0, or -1 with err set.
 */
int pk_reply_build_commit(struct pk_reply *out, const struct pk_reply_commit *c, JsonNode *model,
			  const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err);

/*
 * The commands that test a pushed commit again as the bot tested it, for
 * its review's reproduce member and its mail: fetch the branch from the
 * tree (shown as tree_url) into a kernel checkout, then `printkbot run`
 * of that commit alone.  Caller frees.
 */
char *pk_reply_commit_reproduce(const char *tree_url, const char *branch, const char *commit);

/*
 * The commands that test a patch mail again as the bot tested it, for
 * the review's reproduce member (review.h): b4 fetches the patch and the
 * ones before it in its series (-P 1-N, -v for a later version) as an
 * mbox on its standard output, which `printkbot test -` reads; base is
 * the revision the series went on (NULL or printkbot-base: the default,
 * not named).  The Message-ID follows "--" and is quoted for the shell
 * when it needs to be, so no Message-ID is read as an option of b4 or as
 * shell.  arch (NULL: x86_64) is named with --arch when it is another.
 * Caller frees.
 */
char *pk_reply_reproduce(const char *message_id, const char *subject, const char *base,
			 const struct pk_arch *arch);

/*
 * A mail's page in a list archive: archive (the source's archive =, a
 * "/" added when it has none) followed by the Message-ID, escaped for a
 * URL path, and "/", as lore.kernel.org and every public-inbox write
 * them.  NULL when archive is NULL.  Caller frees.
 */
char *pk_reply_archive_link(const char *archive, const char *message_id);

/*
 * The Message-ID of the reply to a mail: "printkbot-<hash>@<domain of
 * from>", hash an HMAC-SHA256 of the patch's Message-ID keyed with secret
 * (a plain hash of the patch's id anyone could compute and send a mail
 * under first, so that the reply would be dropped as a duplicate or thread
 * under the stranger's mail).  Caller frees.
 */
char *pk_reply_message_id(const char *patch_message_id, const char *from, const char *secret);

/*
 * The answer to a command by mail (#printkbot, daemon.h), beside the
 * reviews: what was asked and what came of it.  All borrowed.
 */
struct pk_reply_command {
	const char *line;          /* the command as understood ("#printkbot test debian:6.1"), quoted */
	bool help;                 /* the answer lists the commands (help, an unknown command) */
	const char *problem;       /* why nothing was tested (no series, an unknown base, an unknown
				      command), or NULL */
	const char *const *bases;  /* the bases the bot knows, for an unknown base; or NULL */
	const char *series;        /* the series' subject, when tested */
	JsonNode *const *models;   /* each tested patch's review model, in order (n of them) */
	unsigned n;
	const char *const *verdicts;   /* each patch's verdict name, in order */
};

/*
 * Build the one answer to a command mail cmd (borrowed): threaded under
 * it (In-Reply-To its Message-ID, its References extended), To its
 * sender, Cc info->list (none: no Cc; never the command's other To and
 * Cc, which its sender chose), with each tested patch's verdict and
 * review (templates/command.txt,
 * each review through review.txt), or the commands, or the problem.  Its
 * Message-ID is derived from the command's (pk_reply_message_id() of
 * "command <id>") and info->id_secret, so a reply built again keeps it.
 * info's base, base_note, kernel, compiler and config_lines are said
 * when something was tested.  0, or -1 with err set.
 */
int pk_reply_build_command(struct pk_reply *out, const struct pk_mail *cmd, const struct pk_reply_command *c,
			   const struct pk_reply_config *cfg, const struct pk_reply_info *info, GError **err);

#endif
