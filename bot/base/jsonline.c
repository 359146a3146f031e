/* jsonline.c - JSON written by hand for scan; see jsonline.h for why. */
#include "base/jsonline.h"

/* The comma before every member but an object's or array's first, then the name. */
static void member(GString *out, const char *name)
{
	char last = out->len ? out->str[out->len - 1] : '{';

	if (last != '{' && last != '[')
		g_string_append_c(out, ',');
	if (name) {
		g_string_append_c(out, '"');
		g_string_append(out, name);
		g_string_append(out, "\":");
	}
}

static void escaped(GString *out, const char *s)
{
	g_string_append_c(out, '"');
	for (; *s; s++) {
		switch (*s) {
		case '"': g_string_append(out, "\\\""); break;
		case '\\': g_string_append(out, "\\\\"); break;
		case '\b': g_string_append(out, "\\b"); break;
		case '\f': g_string_append(out, "\\f"); break;
		case '\n': g_string_append(out, "\\n"); break;
		case '\r': g_string_append(out, "\\r"); break;
		case '\t': g_string_append(out, "\\t"); break;
		default:
			if ((unsigned char)*s < 0x20)
				g_string_append_printf(out, "\\u%04x", (unsigned char)*s);
			else
				g_string_append_c(out, *s);
		}
	}
	g_string_append_c(out, '"');
}

void pk_jl_open(GString *out, const char *name, char bracket)
{
	if (out->len)
		member(out, name);
	g_string_append_c(out, bracket);
}

void pk_jl_close(GString *out, char bracket)
{
	g_string_append_c(out, bracket);
}

void pk_jl_str(GString *out, const char *name, const char *value)
{
	member(out, name);
	if (value)
		escaped(out, value);
	else
		g_string_append(out, "null");
}

void pk_jl_int(GString *out, const char *name, gint64 value)
{
	member(out, name);
	g_string_append_printf(out, "%" G_GINT64_FORMAT, value);
}

void pk_jl_bool(GString *out, const char *name, gboolean value)
{
	member(out, name);
	g_string_append(out, value ? "true" : "false");
}
