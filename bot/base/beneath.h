/*
 * beneath.h - reading files in a directory that someone less trusted can
 * write: a build dir, a throwaway layer, a site's output dir.
 *
 * The bot runs as root outside the sandbox, and the sandbox user writes
 * the build dir.  Whatever the bot opens there by name could have been
 * replaced by a symlink to a host file (read or written as root), a FIFO
 * (an open that never returns, with the lab's lock held), /dev/zero or a
 * 16 GB file (the bot's memory).  So every read of such a file goes
 * through here: each directory of the path opened from the one above it
 * with O_NOFOLLOW|O_DIRECTORY, the file with O_NOFOLLOW|O_NONBLOCK, a
 * regular file with one link only (fstat(), after the open), at most a
 * cap of bytes.  A symlink anywhere on the path, a FIFO, a device, a
 * directory, a hard link or a file over the cap is an error that names
 * the path and what it was; a file (or a directory on its path) that is
 * not there is "absent", which the callers treat as they did before.
 *
 * The bot writes nothing through here: its own files live outside such
 * directories (lab/state.h).
 */
#ifndef PK_BENEATH_H
#define PK_BENEATH_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * Open dir, which the caller trusts as a path (it made it, and its parent
 * is the caller's), as a directory fd (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|
 * O_CLOEXEC).  The fd, or -1 with err (ENOENT included).
 */
int pk_beneath_open_dir(const char *dir, GError **err);

/*
 * Open rel (a relative path of '/'-separated names, none of them "" or
 * "..") beneath dirfd for reading, as described above, and fstat() it
 * into *out_st (may be NULL).  The fd (>= 0, O_CLOEXEC; the caller closes
 * it); -1 with err for a refused one; -2 when it is absent (ENOENT, or
 * ENOTDIR on the way: err untouched).
 */
int pk_beneath_open(int dirfd, const char *rel, struct stat *out_st, GError **err);

/*
 * Read rel beneath dirfd whole, refusing more than cap bytes (0: 16 MiB).
 * 1 with *out (NUL-terminated, caller frees) and *out_len (may be NULL);
 * 0 when it is absent (out untouched); -1 with err.
 */
int pk_beneath_read(char **out, size_t *out_len, int dirfd, const char *rel, size_t cap, GError **err);

/* pk_beneath_read() of rel beneath the directory dir (opened with pk_beneath_open_dir()). */
int pk_beneath_read_at(char **out, size_t *out_len, const char *dir, const char *rel, size_t cap,
		       GError **err);

/*
 * Copy rel beneath dir, opened as above, to dest (a path of the caller's
 * own, replaced; never through a link), refusing more than cap bytes
 * (0: no cap).  1 when copied, 0 when rel is absent (dest untouched), -1
 * with err (dest removed).
 */
int pk_beneath_copy(const char *dir, const char *rel, const char *dest, guint64 cap, GError **err);

/*
 * Whether rel beneath dir is there as a regular file (not followed
 * through any link), and its stat in *out_st (may be NULL): 1, 0 when it
 * is absent, -1 with err when it is something else or cannot be looked at.
 */
int pk_beneath_regular(const char *dir, const char *rel, struct stat *out_st, GError **err);

/*
 * What pk_beneath_walk() does with each regular file (name in dirfd, rel
 * the path of dirfd from the walk's top): 0 to go on, 1 to stop the walk,
 * -1 with err set.  st is the file's lstat.
 */
typedef int (*pk_beneath_file_fn)(int dirfd, const char *rel, const char *name, const struct stat *st,
				  void *ctx, GError **err);
/* Whether pk_beneath_walk() goes into the directory rel (its path from the walk's top). */
typedef bool (*pk_beneath_enter_fn)(const char *rel, void *ctx);

/*
 * Call on_file for each regular file under the directory dirfd, whose
 * path from where the caller stands is rel ("" for the top itself: a
 * subdirectory's rel is then its name alone), depth first, never through
 * a symlink; enter (NULL: into every one) chooses the subdirectories.
 * Entries that vanish while listed (a make at work) are passed over.
 * Returns 0, or on_file's 1 or -1 (the walk then stops).  Takes dirfd.
 */
int pk_beneath_walk(int dirfd, const char *rel, pk_beneath_file_fn on_file, pk_beneath_enter_fn enter, void *ctx,
		    GError **err);

#endif
