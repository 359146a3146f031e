/*
 * patch.h - read patches: a unified diff into files, hunks and lines, and a
 * mail or mbox into the patches it carries.
 *
 * Parsing works on an in-memory buffer and never does I/O.  A malformed
 * diff (bad hunk header, hunk cut short) is a partial result, not a
 * failure: the patch keeps every hunk that could be read and patch->error
 * says what went wrong, naming the input line.  Everything returned is owned
 * by the caller and freed with pk_patch_free(), which accepts NULL.
 *
 * Mailer damage is repaired where the hunk header's line counts leave one
 * reading only: a line the mailer wrapped (a hunk header's function text,
 * a '+', '-' or context line) is joined back to the line above when what
 * follows then fills the hunk exactly (and the line above is longer than
 * mailers let lines be).  In a mail, a diff still in quoted-printable the
 * mail does not declare is decoded when only the decoded text reads whole.
 * Each repair is listed in patch->damage; patch->diff stays the text as
 * sent, which git am rejects, so nothing downstream may apply a damaged
 * patch as if it were clean (lab/apply.c refuses it).  Not damage, because
 * git am undoes it too: format=flowed (undone when the mail reads), and a
 * context line whose lone blank was stripped (read as an empty context
 * line, as GNU diff can write it).  Tabs a mailer turned into blanks are
 * damage without a repair (scan reads through blanks): a diff without a
 * tab whose hunk lines are indented by 7 (+ 8k) blanks, where a tab after
 * the kind character ends.  Not recognised: a wrapped last line of a hunk
 * (nothing after it confirms it).
 */
#ifndef PK_PATCH_H
#define PK_PATCH_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* One diff line: kind is ' ' (context), '-' (removed) or '+' (added). */
struct pk_diff_line {
	char kind;
	int old_no;         /* pre-image line number, 0 for '+' lines */
	int new_no;         /* post-image line number, 0 for '-' lines */
	char *text;         /* without the kind character and the newline */
};

struct pk_hunk {
	int old_start, old_count, new_start, new_count;
	char *section;      /* the text after the second "@@" (diff -p's enclosing
			       function, as git writes it), or NULL */
	GPtrArray *lines;   /* struct pk_diff_line* */
};

struct pk_diff_file {
	char *old_path;     /* without "a/", NULL for /dev/null */
	char *new_path;     /* without "b/", NULL for /dev/null */
	GPtrArray *hunks;   /* struct pk_hunk* */
};

/* One repair of mailer damage (see above). */
struct pk_patch_damage {
	int line;           /* the damaged line of the diff text, from 1 */
	char *path;         /* the file of the damaged hunk, or NULL */
	int file_line;      /* its post-image line (pre-image for '-'), 0 for none */
	char *what;         /* "was wrapped by the mailer", as a predicate */
};

struct pk_patch {
	char *subject;      /* NULL for a plain diff */
	char *message_id;
	char *author;
	char *author_name;  /* From: decoded into name and address, or NULL */
	char *author_email;
	char *date;         /* the mail's Date header, NULL for a plain diff */
	gint64 time;        /* Date as seconds since the epoch, 0 when unknown */
	int tz_minutes;     /* Date's offset from UTC */
	char *description;  /* the commit message: the body before the diff, or NULL */
	char *diff;         /* the diff text as read (what apply applies) */
	GPtrArray *files;   /* struct pk_diff_file* */
	char *error;        /* why the diff was only partly read, or NULL */
	GPtrArray *damage;  /* struct pk_patch_damage*: mailer damage repaired */
	int diff_line;      /* the line of the mail where diff starts, 0 unknown */
	char *over_limit;   /* why the diff was not read (a size limit its reader held it to,
			       lab/repo.h), or NULL; files then has paths and no hunks */
};

/*
 * One repair as a clause: "line 57 (the end of an added line) was wrapped
 * by the mailer", the line being the mail's when known (diff_line), else
 * "line 9 of its diff".  Caller frees.
 */
char *pk_patch_damage_describe(const struct pk_patch *p, const struct pk_patch_damage *d);

/*
 * Why patch is over the size limits of policy (base/settings.h's
 * max_files and max_lines, 0 being none) or was not read for one
 * (patch->over_limit): one sentence naming the limit and its key, or NULL
 * when it is within them (caller frees).  It only counts what was parsed,
 * so every door a patch comes in by asks it first: nothing over a limit
 * is scanned, applied or built.
 */
struct pk_policy;
char *pk_patch_over_limits(const struct pk_patch *patch, const struct pk_policy *policy);

/* The path a finding should name: the post-image one unless deleted. */
const char *pk_diff_file_path(const struct pk_diff_file *f);

/* Whether the patch touches (adds, changes, removes or renames) a file whose path starts with prefix. */
bool pk_patch_touches(const struct pk_patch *patch, const char *prefix);

/*
 * Parse a unified diff from buf (len bytes; text before the first file
 * header, like a commit message, is skipped).  Always returns a patch; on
 * malformed input patch->error is set and the readable hunks are kept.
 */
struct pk_patch *pk_patch_parse_diff(const char *buf, size_t len);

/*
 * The post-image of one file of a diff: old_text (the file the diff was made
 * against, NUL-terminated; "" for a new file) with f's hunks applied.  A hunk
 * whose context and removed lines are not at its stated line are looked for
 * elsewhere in the file, nearest first, as patch(1) does without fuzz.
 * Returns a new string (caller frees), or NULL when a hunk matches nowhere.
 */
char *pk_diff_file_apply(const struct pk_diff_file *f, const char *old_text);

/*
 * Read every patch in buf: an mbox (git format-patch output, a list
 * archive), a single mail, or a plain diff.  Mails are decoded (MIME parts,
 * quoted-printable, base64) and the diff is taken from the body or from an
 * attachment; mails without a diff are counted in *out_skipped and dropped.
 *
 * An mbox is read as mboxrd, the format of public-inbox and lore archives:
 * a body line ">From " becomes "From " and ">>From " becomes ">From ".  On
 * an mboxo file this also unquotes a line that was written as ">From " in
 * the first place; mboxo cannot tell the two apart anyway.  A text part in
 * another charset is converted to UTF-8 (GMime's charset filter); one that
 * declares none and is not valid UTF-8 is guessed with GMime's fallback
 * charsets, so every string of a patch is valid UTF-8.  A format=flowed
 * part is unflowed as git mailinfo does it (RFC 3676).
 *
 * On success *out is a new array of struct pk_patch* (freeing the array
 * frees them).  Returns -1 with err set when buf cannot be read at all.
 */
int pk_patch_read_mails(GPtrArray **out, unsigned *out_skipped, const char *buf,
			size_t len, GError **err);

void pk_patch_free(struct pk_patch *p);
typedef struct pk_patch pk_patch;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_patch, pk_patch_free)
/* pk_patch_free for GPtrArray element destructors. */
void pk_patch_free_void(gpointer p);

#endif
