/*
 * cgroup.h - a pids cgroup of its own for one child process tree: the
 * cap on how many processes (and threads) one sandboxed build may have.
 *
 * RLIMIT_NPROC counts every process of a uid, and every sandbox runs as
 * the one sandbox user: one patch's fork bomb took all of that uid's
 * processes, and the builds and boots of every other worker of the
 * machine failed with it.  A pids cgroup counts only its own members, so
 * each sandbox gets its own cap.
 *
 * Either cgroup hierarchy works: v2 (the unified /sys/fs/cgroup with the
 * pids controller) or v1's pids hierarchy.  The cgroups live under
 * printkbot/ in it, one per child, named <pid>-<n> of the bot process,
 * removed when the child is reaped; what a bot that died left (empty by
 * then: its children died with it) is removed by the next one.  Root
 * only; elsewhere pk_cgroup_make() says why not and the caller falls back
 * to RLIMIT_NPROC.
 */
#ifndef PK_CGROUP_H
#define PK_CGROUP_H

#include <glib.h>

/*
 * Make a new pids cgroup capped at max_pids tasks: its directory (caller
 * frees, and removes it with pk_cgroup_remove() once the child is
 * reaped), or NULL with err saying why none can be made here.  The child
 * joins it by writing to <dir>/cgroup.procs before exec (proc.h's
 * cgroup option).
 */
char *pk_cgroup_make(unsigned max_pids, GError **err);

/* Remove a cgroup pk_cgroup_make() made (its members gone); a failure is only said. */
void pk_cgroup_remove(const char *dir);

#endif
