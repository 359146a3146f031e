/*
 * fold.h - what the compiler knows of a printk format, folded into its
 * text before texts are compared: "%s: port %d\n", __func__ inside
 * neo_parse_modem() prints "neo_parse_modem: port %d\n", as the old
 * "neo_parse_modem: port %d\n" did.
 *
 * One way for every place that reads a format: a call's format and
 * arguments (scan.c) and a pr_fmt() body, its prefix and the arguments
 * after its fmt (tree.c).  What is known: string literals, __func__
 * (__FUNCTION__, __PRETTY_FUNCTION__) when the enclosing function is,
 * KBUILD_MODNAME and KBUILD_BASENAME when the object is.
 *
 * A folded text is still a format (C escapes kept): a value put in for a
 * "%s" has its '%' doubled, so that folding it again with the arguments
 * that are left gives the same text.  Everything returned is the caller's.
 */
#ifndef PK_FOLD_H
#define PK_FOLD_H

#include <glib.h>

/* What is known where a format is folded; NULL: unknown. */
struct pk_fold_env {
	const char *func;       /* the enclosing function (__func__) */
	const char *modname;    /* KBUILD_MODNAME, without quotes */
	const char *basename;   /* KBUILD_BASENAME */
};

/*
 * The text a name stands for in env (KBUILD_MODNAME, __func__...),
 * borrowed from env; NULL when env does not know it or it is no such name.
 */
const char *pk_fold_name(const struct pk_fold_env *env, const char *name, gsize len);

/*
 * The C string literal at p (its opening '"'): its body as written, C
 * escapes kept, appended to out.  Returns what follows its closing
 * quote, or NULL when it has none (a cut-off hunk).
 */
const char *pk_fold_literal(const char *p, GString *out);

/*
 * The string an expression as written is, when the compiler knows it: a
 * sequence of string literals and pk_fold_name() names, joined, literals
 * without their quotes and with their C escapes kept ("\"x\" KBUILD_MODNAME"
 * in foo.c gives "xfoo").  NULL for anything else (a variable, a call).
 */
char *pk_fold_value(const struct pk_fold_env *env, const char *expr);

/*
 * fmt with each plain "%s" (no flags, width, precision or length) whose
 * argument pk_fold_value() knows replaced by that value, its '%' doubled;
 * every other conversion stays as written.  args holds the n arguments
 * after the format, as written, args[0] being the first conversion's; a
 * conversion past the last of them stays.  When out_left is not NULL it
 * gets a new NULL-terminated array (g_strfreev()) of the arguments of the
 * conversions that stayed, in order: what folding the result again takes.
 */
char *pk_fold_format(const char *fmt, const char *const *args, guint n,
		     const struct pk_fold_env *env, char ***out_left);

#endif
