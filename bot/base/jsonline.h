/*
 * jsonline.h - one JSON value written into a GString, member by member, for
 * the --json of `printkbot scan`.
 *
 * Why not json-glib (jsonout.h, which every other command uses): it would
 * be the one library scan loads beyond GLib and GMime, and loading it
 * costs more than scanning a patch (bench/scan.sh).  Scan prints objects,
 * arrays, strings, integers, booleans and null; those are written here,
 * as compact as json-glib writes them, strings escaped as RFC 8259 asks.
 *
 * name is the member's name inside an object, NULL inside an array or for
 * the top value.  The caller owns out; nothing here allocates else.
 */
#ifndef PK_JSONLINE_H
#define PK_JSONLINE_H

#include <glib.h>

/* Open an object ('{') or an array ('['); close it with pk_jl_close(). */
void pk_jl_open(GString *out, const char *name, char bracket);
void pk_jl_close(GString *out, char bracket);
/* A string member; NULL is written as null. */
void pk_jl_str(GString *out, const char *name, const char *value);
void pk_jl_int(GString *out, const char *name, gint64 value);
void pk_jl_bool(GString *out, const char *name, gboolean value);

#endif
