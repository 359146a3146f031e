/*
 * build.h - the build stage: `make O=<build dir> vmlinux` in the lab's tree.
 *
 * Builds are reproducible (KBUILD_BUILD_TIMESTAMP/_USER/_HOST/_VERSION are
 * fixed), so two builds of the same source print the same `Linux version`
 * line, and incremental (the build dir is kept).  ccache is used when it is
 * installed.  A failed build is a result, not an error: ok == false with the
 * compiler's first error lines in errors.
 */
#ifndef PK_BUILD_H
#define PK_BUILD_H

#include <stdbool.h>
#include "lab.h"

struct pk_build_result {
	bool ok;
	double seconds;
	char *errors;    /* first error lines (file:line: error: ...), or NULL */
	char *log_path;  /* the full (capped) make log */
	char *vmlinux;   /* the kernel to boot when ok */
};

/* Build the kernel; returns -1 only when make could not be run at all. */
int pk_build_kernel(struct pk_build_result *out, const struct pk_lab *lab, GError **err);
void pk_build_result_clear(struct pk_build_result *res);

/*
 * The error lines of a make log (at most max_lines): errors with their
 * function and the macro expansion site, and the make line of the failed
 * object; paths under tree (may be NULL) made relative.  Caller frees;
 * NULL when the log holds no error line.
 */
char *pk_build_errors(const char *log, unsigned max_lines, const char *tree);

#endif
