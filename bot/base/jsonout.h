/*
 * jsonout.h - one-line json-glib builder members, so that commands printing
 * --json read as a list of fields.  A NULL string becomes JSON null.
 */
#ifndef PK_JSONOUT_H
#define PK_JSONOUT_H

#include <json-glib/json-glib.h>
#include <stdio.h>

static inline void pk_json_str(JsonBuilder *b, const char *name, const char *value)
{
	json_builder_set_member_name(b, name);
	if (value)
		json_builder_add_string_value(b, value);
	else
		json_builder_add_null_value(b);
}

static inline void pk_json_int(JsonBuilder *b, const char *name, gint64 value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, value);
}

static inline void pk_json_bool(JsonBuilder *b, const char *name, gboolean value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_boolean_value(b, value);
}

static inline void pk_json_double(JsonBuilder *b, const char *name, double value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_double_value(b, value);
}

/* Print the builder's finished value on one line of stdout. */
static inline void pk_json_print(JsonBuilder *b)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autoptr(JsonNode) root = json_builder_get_root(b);
	g_autofree char *text = NULL;

	json_generator_set_root(gen, root);
	text = json_generator_to_data(gen, NULL);
	puts(text);
}

#endif
