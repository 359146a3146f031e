/*
 * jsonout.h - one-line json-glib builder members, so that commands printing
 * --json read as a list of fields.  A NULL string becomes JSON null.
 */
#ifndef PK_JSONOUT_H
#define PK_JSONOUT_H

#include <json-glib/json-glib.h>

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

#endif
