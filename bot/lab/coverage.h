/*
 * coverage.h - what of a patch the tested kernel holds: for every file the
 * patch touches, whether the lab's build compiled it into vmlinux, read
 * from the build dir once the build is done (no make is run).
 *
 * Kbuild leaves the answer in a make O= dir:
 *   vmlinux.a            the thin archive of every object linked whole into
 *                        vmlinux; its name table lists them
 *                        ("kernel/printk/printk.o").  Made afresh by every
 *                        build, so an object a config no longer builds is
 *                        not in it even when its stale .o still lies around
 *                        (built-in.a serves a tree older than 6.1);
 *   lib/lib.a ...        archives vmlinux links members of as they are
 *                        used, named in .vmlinux.o.cmd;
 *   <dir>/.<obj>.o.cmd   per compiled object: source_<obj> (the source)
 *                        and deps_<obj> (every file it read: headers, and
 *                        the .c files it includes).
 * A C source is built when its object is linked, or when a linked object
 * read it (kernel/sched/build_policy.c includes rt.c); a header when a
 * linked object's dependency list names it.  A file the patch deletes is
 * built when the kernel before the patch had entries of it in its printk
 * index, or (a .c) its object is still in the build dir, where Kbuild
 * leaves it.
 *
 * The states, strongest first:
 *   booted     built, and a record of the after boot is attributed to a
 *              printk index entry of the file (kdiff.h's attribution, as
 *              the diff attributes changes): its code ran and printed;
 *   built      compiled and linked in: its messages are in the printk
 *              index, printed at boot or not;
 *   not-built  not shown to be in the kernel; reason says why: the
 *              Kconfig symbol its directory's Makefile adds its object or
 *              its directory with (obj-$(CONFIG_X) += ...) is not set in
 *              the build's .config, it is compiled but not linked, or it
 *              is not code (documentation, the build system).
 */
#ifndef PK_COVERAGE_H
#define PK_COVERAGE_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/kmsg.h"
#include "base/patch.h"
#include "base/verdict.h"

enum pk_coverage_state {
	PK_COVERAGE_BOOTED,
	PK_COVERAGE_BUILT,
	PK_COVERAGE_NOT_BUILT,
};

/* One touched file's coverage. */
struct pk_file_coverage {
	char *file;      /* as the patch names it: the new path, the old one when deleted */
	enum pk_coverage_state state;
	char *reason;    /* not-built: why, one clause; built or booted: a note
	                    ("included by kernel/sched/build_policy.o"), or NULL */
	bool source;     /* a C source or header: only these decide a verdict */
};

/* What pk_coverage_read() reads; everything is borrowed. */
struct pk_coverage_input {
	const char *build_dir;           /* the make O= dir, as the after side's build left it */
	const char *tree;                /* the kernel tree, absolute, as the build saw it */
	const struct pk_patch *patch;
	const struct pk_capture *before; /* the boot before the patch (deleted files), or NULL */
	const struct pk_capture *after;  /* the boot after it (booted), or NULL */
};

/*
 * The coverage of every file in->patch touches, in the patch's order:
 * *out is a new array of struct pk_file_coverage* (unref frees them).  A
 * build dir that holds no vmlinux.a or built-in.a makes every file
 * not-built, saying so.  -1 with err only when a file that is there
 * cannot be read.
 */
int pk_coverage_read(GPtrArray **out, const struct pk_coverage_input *in, GError **err);

/*
 * The Kconfig symbols that put C source file (relative to tree) into the
 * kernel, as read from the Kbuild makefiles of its directory and of every
 * directory above it (obj-$(CONFIG_X) += name.o, obj-$(CONFIG_X) += dir/,
 * composite objects one level deep; coverage-why.c's reading): appended
 * to groups as char* "A|B", one per makefile line that adds it, any one
 * alternative of which is enough.  Lines without a symbol (obj-y), what
 * is not a .c file and a path that is not inside the tree (absolute, or
 * through "..") add nothing.  -1 with err only when a makefile
 * that is there cannot be read.
 */
int pk_coverage_kbuild_groups(const char *tree, const char *file, GPtrArray *groups, GError **err);

/* A new pk_file_coverage (strings copied); pk_file_coverage_free() frees it. */
struct pk_file_coverage *pk_file_coverage_new(const char *file, enum pk_coverage_state state,
					      const char *reason, bool source);
void pk_file_coverage_free(gpointer c);

/* "booted", "built", "not-built" (the stable words of the JSON and the store). */
const char *pk_coverage_state_name(enum pk_coverage_state state);
bool pk_coverage_state_parse(const char *name, enum pk_coverage_state *out);

/*
 * The sentence a not-built verdict gives: which C sources and headers of
 * coverage are not built, each with its reason, and what that means.  NULL
 * when every one of them is built (caller frees).
 */
char *pk_coverage_not_built_sentence(const GPtrArray *coverage);

/*
 * Its list alone: "file (reason); file (reason)", or "file, file" without
 * reasons; *count (may be NULL) files; NULL when none.
 */
char *pk_coverage_not_built_list(const GPtrArray *coverage, bool reasons, unsigned *count);

/* The entry of coverage for file when its kernel built it (booted counts too), else NULL. */
const struct pk_file_coverage *pk_coverage_built_file(const GPtrArray *coverage, const char *file);

/*
 * How many C sources and headers coverage's kernel built (booted counts
 * too) that other's did not (both of the same patch, e.g. on two
 * architectures; other NULL: every one built).
 */
unsigned pk_coverage_built_beyond(const GPtrArray *coverage, const GPtrArray *other);

/*
 * The verdict of a built and booted patch once coverage is known: the
 * comparison's verdict, except that no-visible-change becomes not-built
 * when a touched C source or header is not built (nothing may be vouched
 * for what was not compiled), with *out_reason set to
 * pk_coverage_not_built_sentence() (caller frees; untouched otherwise).
 * A console-changed verdict stays: the change is real, and the review
 * lists the files that were not built beside it.
 */
enum pk_verdict pk_coverage_verdict(enum pk_verdict compared, const GPtrArray *coverage, char **out_reason);

#endif
