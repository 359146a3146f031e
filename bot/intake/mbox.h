/*
 * mbox.h - an mbox read one mail at a time, from a descriptor, with memory
 * bounded by the largest mail (plus one read chunk), however large the
 * file: a list archive as mbox is a gigabyte and more.
 *
 * A mail starts at a line "From " (mboxrd quotes every body line that
 * would start so) and ends where the next one starts, or at the end of
 * the input.  The bytes before the first such line, if any, come out as a
 * mail of their own, so the mails handed out put end to end are exactly
 * the input.  Whether a mail was followed by a "From " line is said:
 * the last one of a file that is still being written may be cut short,
 * and only the caller knows whether the writer is done.
 *
 * A mail longer than max_mail is not kept: it is read past (its size is
 * counted) and handed out without its bytes, so one huge mail neither
 * eats memory nor stops what follows.
 *
 * The descriptor is borrowed: the reader reads it sequentially with
 * read(2) (a pipe works) from where it stands, which the caller says is
 * byte `offset` of the file.  Free with pk_mbox_reader_free() (NULL is fine).
 */
#ifndef PK_MBOX_H
#define PK_MBOX_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

struct pk_mbox_reader;

/* One mail as the reader hands it out. */
struct pk_mbox_mail {
	const char *raw;   /* its bytes, with its "From " line; borrowed until the next call.
			      NULL when it was longer than max_mail */
	size_t len;        /* bytes of raw (0 when raw is NULL) */
	gint64 offset;     /* where it starts in the file */
	gint64 size;       /* its length in bytes, also when raw is NULL */
	bool followed;     /* a "From " line follows it (false: the end of the input came) */
};

struct pk_mbox_reader *pk_mbox_reader_new(int fd, gint64 offset, size_t max_mail);
void pk_mbox_reader_free(struct pk_mbox_reader *r);
typedef struct pk_mbox_reader pk_mbox_reader;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_mbox_reader, pk_mbox_reader_free)

/*
 * The next mail into *out: 1, or 0 at the end of the input (nothing in
 * *out), or -1 with err set when read(2) fails.  The end is seen once:
 * a reader does not wait for a file to grow, a new one reads what came.
 */
int pk_mbox_next(struct pk_mbox_reader *r, struct pk_mbox_mail *out, GError **err);

#endif
