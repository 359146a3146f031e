/* fold.c - what the compiler knows, folded into a format; see fold.h. */
#include "analysis/fold.h"

#include <string.h>

const char *pk_fold_name(const struct pk_fold_env *env, const char *name, gsize len)
{
	static const struct {
		const char *name;
		gsize field;    /* offset of the value in struct pk_fold_env */
	} names[] = {
		{ "__func__", G_STRUCT_OFFSET(struct pk_fold_env, func) },
		{ "__FUNCTION__", G_STRUCT_OFFSET(struct pk_fold_env, func) },
		{ "__PRETTY_FUNCTION__", G_STRUCT_OFFSET(struct pk_fold_env, func) },
		{ "KBUILD_MODNAME", G_STRUCT_OFFSET(struct pk_fold_env, modname) },
		{ "KBUILD_BASENAME", G_STRUCT_OFFSET(struct pk_fold_env, basename) },
	};

	for (gsize i = 0; env && i < G_N_ELEMENTS(names); i++)
		if (strlen(names[i].name) == len && !strncmp(name, names[i].name, len))
			return G_STRUCT_MEMBER(const char *, env, names[i].field);
	return NULL;
}

const char *pk_fold_literal(const char *p, GString *out)
{
	const char *q = p + 1;

	while (*q && *q != '"')
		q += (*q == '\\' && q[1]) ? 2 : 1;
	if (!*q)
		return NULL;
	g_string_append_len(out, p + 1, q - p - 1);
	return q + 1;
}

char *pk_fold_value(const struct pk_fold_env *env, const char *expr)
{
	g_autoptr(GString) out = g_string_new(NULL);
	const char *p = expr;
	gboolean any = FALSE;

	while (*p) {
		if (g_ascii_isspace(*p)) {
			p++;
		} else if (*p == '"') {
			if (!(p = pk_fold_literal(p, out)))
				return NULL;
			any = TRUE;
		} else if (g_ascii_isalpha(*p) || *p == '_') {
			const char *q = p, *v;
			while (g_ascii_isalnum(*q) || *q == '_')
				q++;
			if (!(v = pk_fold_name(env, p, q - p)))
				return NULL;
			g_string_append(out, v);
			p = q;
			any = TRUE;
		} else {
			return NULL;
		}
	}
	return any ? g_string_free(g_steal_pointer(&out), FALSE) : NULL;
}

/* The end of the conversion starting at p ('%'), how many arguments it takes, whether it is a plain "%s". */
static const char *conversion(const char *p, guint *takes, gboolean *plain_s)
{
	const char *q = p + 1;

	*takes = 0;
	while (*q && strchr("-+ #0", *q))
		q++;
	if (*q == '*') {
		(*takes)++;
		q++;
	}
	while (g_ascii_isdigit(*q))
		q++;
	if (*q == '.') {
		if (*++q == '*') {
			(*takes)++;
			q++;
		}
		while (g_ascii_isdigit(*q))
			q++;
	}
	while (*q && strchr("hlLqjzt", *q))
		q++;
	if (!*q)
		return q;       /* a '%' at the end: nothing taken */
	*plain_s = *q == 's' && q == p + 1;
	(*takes)++;             /* %p's extension letters are text: only the count matters */
	return q + 1;
}

char *pk_fold_format(const char *fmt, const char *const *args, guint n,
		     const struct pk_fold_env *env, char ***out_left)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GPtrArray) left = out_left ? g_ptr_array_new() : NULL;
	const char *p = fmt;
	guint arg = 0;

	while (*p) {
		const char *pct = strchr(p, '%'), *end;
		guint takes;
		gboolean plain_s = FALSE;
		g_autofree char *value = NULL;

		if (!pct) {
			g_string_append(out, p);
			break;
		}
		g_string_append_len(out, p, pct - p);
		if (pct[1] == '%') {
			g_string_append(out, "%%");
			p = pct + 2;
			continue;
		}
		end = conversion(pct, &takes, &plain_s);
		if (plain_s && arg < n && (value = pk_fold_value(env, args[arg]))) {
			for (const char *v = value; *v; v++) {
				if (*v == '%')
					g_string_append_c(out, '%');
				g_string_append_c(out, *v);
			}
		} else {
			g_string_append_len(out, pct, end - pct);
			for (guint k = arg; left && k < arg + takes && k < n; k++)
				g_ptr_array_add(left, g_strdup(args[k]));
		}
		arg += takes;
		p = end;
	}
	if (out_left) {
		g_ptr_array_add(left, NULL);
		*out_left = (char **)g_ptr_array_free(g_steal_pointer(&left), FALSE);
	}
	return g_string_free(out, FALSE);
}
