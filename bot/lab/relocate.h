/*
 * relocate.h - a build dir under a name its tools/ build did not record.
 *
 * Kbuild records the kernel's own objects relative to the build dir, but
 * the host tools it makes with their own build system (tools/build/:
 * objtool on x86) are made with OUTPUT= an absolute path, and their .cmd
 * files record it: "cmd_/cache/build/A/tools/objtool/check.o := gcc ...".
 * In a build dir copied under another name (derive.h: a derived config's
 * dir starts as a copy of the nearest build), or in a cache moved
 * elsewhere, every tools/ target then looks as if its command changed:
 * objtool is linked again, and since every object of the kernel depends
 * on objtool, every object is compiled again.  A whole build, each time,
 * and in a layer (layer.h) that keeps nothing: on a derived 6.1 config a
 * patch that added one driver file built for 12 minutes.
 *
 * pk_build_dir_relocate() reads the path the tools/ .cmd files record
 * and, when it is another dir's, rewrites it to build_dir's in every .cmd
 * and .d file under tools/, each file keeping its times (make compares
 * mtimes).  Run it on the build dir itself, not through a layer: what a
 * layer's build rewrites is dropped with it.  Returns how many files it
 * rewrote (0 when they already named build_dir, or there is no tools/),
 * -1 with err set.
 */
#ifndef PK_RELOCATE_H
#define PK_RELOCATE_H

#include <glib.h>

int pk_build_dir_relocate(const char *build_dir, GError **err);

#endif
