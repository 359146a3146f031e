/*
 * tree.h - what a kernel source tree says about the messages of a file: the
 * pr_fmt() in effect, the KBUILD_MODNAME the file is built with, and so the
 * exact prefix every pr_*() call of it prints.
 *
 * pk_tree_open() takes a directory holding a kernel source tree and gives a
 * struct pk_tree that reads it lazily: a source file or a Kbuild makefile is
 * read the first time a question needs it and then kept, so scanning a
 * whole mailbox reads each directory once.  The tree is never written to.
 * The answers come from the text alone (nothing is configured or built), so
 * every conditional is taken as enabled: an object under obj-$(CONFIG_X)
 * counts as built, a pr_fmt() inside #ifdef counts as defined.
 *
 * How a file is placed:
 * - its translation unit is the file itself when a makefile of its
 *   directory (or of a parent, as "sub/foo.o") names its object, else the
 *   one file of the same directory that #includes it, followed upwards
 *   (kernel/sched/topology.c is compiled inside kernel/sched/build_utility.c,
 *   kernel/rcu/tree_plugin.h inside kernel/rcu/tree.c);
 * - KBUILD_MODNAME is the composite object that lists the unit
 *   (8250-y += 8250_core.o gives "8250"), else the unit's own basename
 *   ("build_utility"), with '-' and ',' made '_' as Kbuild does;
 * - pr_fmt() is the file's own #define, else one in a header it includes
 *   with quotes, else the unit's, up to the line that #includes the file;
 *   without any, printk.h's default (no prefix) applies.
 *
 * Everything returned is owned by the caller unless said otherwise.
 */
#ifndef PK_TREE_H
#define PK_TREE_H

#include <glib.h>

struct pk_tree;

/* What the tree says about one file; every field may be NULL (unknown). */
struct pk_tree_file {
	char *path;         /* relative to the tree (as asked when outside it) */
	char *unit;         /* the .c file compiled for it (itself, or its includer) */
	char *modname;      /* KBUILD_MODNAME of the unit */
	char *pr_fmt;       /* the pr_fmt() body in effect, its parameter named fmt
			       (KBUILD_MODNAME ": " fmt); NULL: printk.h's default */
	char *pr_fmt_file;  /* the file whose #define that is */
	/*
	 * The prefix a pr_*() message of the file prints, C escapes kept
	 * ("build_utility: "); "" when no pr_fmt() applies; NULL when the
	 * body uses something the tree cannot resolve (an unknown macro, or
	 * KBUILD_MODNAME of a file no makefile builds).  The prefix's own
	 * conversions are folded with the arguments after fmt (fold.h): those
	 * known per call only (pr_fmt(fmt) "%s: " fmt, __func__) stay as
	 * written, and their arguments are prefix_args.
	 */
	char *prefix;
	char **prefix_args;     /* NULL-terminated, as written; NULL: none */
	/* .c files the file #includes locally that inherit its pr_fmt() */
	GPtrArray *includes;    /* char* paths */
	GPtrArray *scope;       /* private: the files read, where macros are looked up */
};

/*
 * Open the kernel tree at dir (it must hold a Makefile and scripts/).  On
 * success *out is a new tree freed with pk_tree_free(); -1 and err set when
 * dir is not a kernel tree.
 */
int pk_tree_open(struct pk_tree **out, const char *dir, GError **err);
void pk_tree_free(struct pk_tree *t);

/* The tree's directory, borrowed. */
const char *pk_tree_dir(const struct pk_tree *t);

/*
 * The text of a file of the tree (path relative to it), borrowed from the
 * tree's cache and valid until pk_tree_free(); NULL when it does not exist.
 */
const char *pk_tree_read(struct pk_tree *t, const char *path);

/*
 * Describe path (relative to the tree, or absolute inside it).  text is the
 * file's content to use instead of the tree's (the post-image of a patch),
 * or NULL to read it from the tree; a file the tree does not hold yet can be
 * described from its text.  Never fails: what cannot be worked out is NULL,
 * and for a path outside the tree everything but path is.  Free with
 * pk_tree_file_free().
 */
struct pk_tree_file *pk_tree_describe(struct pk_tree *t, const char *path, const char *text);
void pk_tree_file_free(struct pk_tree_file *f);

/*
 * The prefix a pr_fmt() body (as pk_tree_pr_fmt_body() gives it) prints in
 * the file f describes, with f's KBUILD_MODNAME and the string macros of the
 * files f was read from; NULL when something in it cannot be resolved.
 * This is how the prefix of a definition a patch adds or changes is known.
 * Conversions known per call only stay, as in struct pk_tree_file's prefix:
 * when out_args is not NULL, *out_args gets their arguments (a new
 * NULL-terminated array, g_strfreev()) or NULL for none.
 */
char *pk_tree_eval_prefix(struct pk_tree *t, const struct pk_tree_file *f, const char *body,
			  char ***out_args);

/*
 * Without a tree: the KBUILD_MODNAME of the object a .c file is built as
 * (kernel/foo.c as foo.o gives "foo"), NULL for another file or NULL path.
 * A composite object (8250-y += 8250_core.o) has another: only a tree knows.
 */
char *pk_tree_guess_modname(const char *path);

/*
 * Without a tree: the prefix body prints in the file at path, with
 * KBUILD_MODNAME (and KBUILD_BASENAME) from pk_tree_guess_modname() and
 * string macros looked up in text (what is known of the file, may be NULL).
 * NULL when something in body cannot be resolved, or path is NULL (a diff
 * that names no file).  out_args as for pk_tree_eval_prefix().
 */
char *pk_tree_guess_prefix(const char *path, const char *text, const char *body, char ***out_args);

/*
 * The body of a "#define pr_fmt(p) body" line with the parameter renamed to
 * fmt and blanks trimmed ("#define pr_fmt(f) KBUILD_MODNAME \": \" f" gives
 * "KBUILD_MODNAME \": \" fmt"), or NULL when line is not such a definition.
 */
char *pk_tree_pr_fmt_body(const char *line);

typedef struct pk_tree pk_tree;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_tree, pk_tree_free)
typedef struct pk_tree_file pk_tree_file;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_tree_file, pk_tree_file_free)

#endif
