/*
 * lexer.h - the lexical layer of the scanner (scan.h): the printk-family
 * calls written on one side of a diff hunk, with their name, family,
 * level, format text and where each piece of the format is.
 *
 * pk_lexer_calls() reads a struct pk_hunk (base/patch.h), borrowed: the
 * calls it returns point at the hunk's lines (dl, kern_dl, toks[].dl), so
 * the hunk must outlive them.  Everything else in a call is its own, and
 * the returned array frees its calls (g_ptr_array_unref()).
 *
 * This is a lexer, not a C parser: it knows literals, comments, brackets
 * and identifiers, which is what finding a call and its format needs even
 * in a hunk that starts or ends in the middle of one.  scan.h lists the
 * family.
 */
#ifndef PK_LEXER_H
#define PK_LEXER_H

#include <glib.h>

#include "base/patch.h"

enum pk_call_family {
	PK_FAM_PRINTK,      /* printk(), printk_once(), ..., printk_deferred() */
	PK_FAM_PR,          /* pr_*(): the file's pr_fmt() applies */
	PK_FAM_DEV,         /* dev_*(), dev_err_probe(), dev_printk(): a device prefix */
	PK_FAM_NETDEV,      /* netdev_*(): a device prefix too */
	PK_FAM_WARN,        /* WARN(), WARN_ONCE(), WARN_RATELIMIT(), WARN_TAINT*(), <subsys>_WARN() */
	PK_FAM_SUBSYS,      /* <subsys>_<level>() wrappers (drm_err(), pci_info(), btrfs_err()...),
			       <subsys>_printk(): a prefix of their own */
	PK_FAM_PANIC,       /* panic(): KERN_EMERG, and the kernel stops */
};

/* One token of a call's format argument: a string literal or a macro. */
struct pk_fmt_tok {
	const struct pk_diff_line *dl;  /* the diff line it is on */
	gboolean literal;
	gsize start, len;               /* where it is in call->text (a literal without quotes) */
};

/* One printk-family call found on one side (pre- or post-image) of a hunk. */
struct pk_call {
	enum pk_call_family fam;
	char *name;
	const char *level;      /* static; NULL: printk() without a KERN_ level */
	gboolean cont;          /* pr_cont() or KERN_CONT */
	gboolean dynamic;       /* pr_debug(), dev_dbg(): compiled out by default */
	gboolean probe;         /* dev_err_probe(), dev_warn_probe(): "error %pe: " before the
				   text, and only at debug level when the error is -EPROBE_DEFER */
	int subsys_len;         /* PK_FAM_SUBSYS: the length of the wrapper's subsystem words
				   in name ("drm" of drm_err(), "bt_dev" of bt_dev_err()) */
	const struct pk_diff_line *kern_dl;  /* the line of a KERN_* token, or NULL */
	GString *text;          /* the format, literals joined, C escapes kept */
	GArray *toks;           /* struct pk_fmt_tok, in order */
	GPtrArray *args;        /* char*: the arguments after the format, as written
				   (whitespace folded), as far as the hunk shows them */
	int fmt_lines;          /* distinct source lines holding format literals */
	gboolean changed;       /* one of its lines is '-' or '+' */
	const struct pk_diff_line *dl;  /* its first line */
	int line;               /* that line's number on its side */
	char *func;             /* the function it is in, as far as the hunk shows */
	gboolean func_from_header;  /* func is the one the hunk header names (git takes
				       it from the pre-image), not a definition in the hunk */
	const struct pk_call *prev;  /* the call before it on this side of the hunk, or NULL */
	char *written;          /* the call as written, whitespace folded */
	gboolean paired;        /* FALSE here; the scanner marks calls it paired */
};

/*
 * Every printk-family call on one side of hunk h: which is '-' for the
 * pre-image (context and removed lines), '+' for the post-image.  In
 * source order; never fails.  A new array of struct pk_call*, freed with
 * its calls by g_ptr_array_unref().
 */
GPtrArray *pk_lexer_calls(const struct pk_hunk *h, char which);

/*
 * The name of the function a source line begins the definition of ("static
 * int __init foo_init(void)" at column 0 gives foo_init) as a new string,
 * or NULL.
 */
char *pk_lexer_function_defined(const char *line);

/* Whether a call gets the pr_fmt() prefix: pr_*() except pr_cont(). */
gboolean pk_call_uses_pr_fmt(const struct pk_call *c);

/*
 * The regex pattern compiled once into *slot (guarded by *once, both
 * static at the caller), in raw-byte mode: a plain diff's lines need not
 * be valid UTF-8.  Borrowed: it lives as long as the program.
 */
GRegex *pk_lexer_regex(GRegex **slot, gsize *once, const char *pattern);

#endif
