/* mbox.c - an mbox read one mail at a time, memory bounded; see mbox.h. */
#define _GNU_SOURCE   /* memmem */
#include "intake/mbox.h"
#include "base/util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Bytes asked of read(2) at once: large enough for few calls, small beside a mail cap. */
#define MBOX_CHUNK (1u << 20)
/* "\nFrom ": the separator is a line that starts "From ". */
#define SEP "\nFrom "
#define SEP_LEN 6

struct pk_mbox_reader {
	int fd;
	GByteArray *buf;     /* the bytes of the input from buf_off on */
	gint64 buf_off;      /* where buf->data[0] is in the file */
	size_t start;        /* where the next mail starts in buf */
	size_t scanned;      /* buf[start..scanned) holds no separator */
	size_t max_mail;
	bool eof;
};

struct pk_mbox_reader *pk_mbox_reader_new(int fd, gint64 offset, size_t max_mail)
{
	struct pk_mbox_reader *r = g_new0(struct pk_mbox_reader, 1);

	r->fd = fd;
	r->buf = g_byte_array_new();
	r->buf_off = offset;
	r->max_mail = max_mail ? max_mail : G_MAXSIZE;
	return r;
}

void pk_mbox_reader_free(struct pk_mbox_reader *r)
{
	if (!r)
		return;
	g_byte_array_unref(r->buf);
	g_free(r);
}

/*
 * Where the next mail after the one at start begins (the "F" of its "From "
 * line), or 0 when buf holds none yet.  Remembers how far it looked, so a
 * mail that comes in many chunks is searched once.
 */
static size_t find_separator(struct pk_mbox_reader *r)
{
	const guint8 *d = r->buf->data;
	size_t from = MAX(r->scanned, r->start);
	const guint8 *hit;

	if (r->buf->len < from + SEP_LEN)
		return 0;
	hit = memmem(d + from, r->buf->len - from, SEP, SEP_LEN);
	if (!hit) {
		/* a separator cut by the end of buf starts in its last SEP_LEN - 1 bytes */
		r->scanned = r->buf->len - (SEP_LEN - 1);
		return 0;
	}
	r->scanned = (size_t)(hit - d) + 1;
	return r->scanned;
}

/* Drop what was handed out and append up to MBOX_CHUNK bytes; sets eof at the end. */
static int read_more(struct pk_mbox_reader *r, GError **err)
{
	size_t had;
	ssize_t n;

	if (r->start) {
		/* once per chunk at most, and only the mail in progress moves */
		memmove(r->buf->data, r->buf->data + r->start, r->buf->len - r->start);
		g_byte_array_set_size(r->buf, r->buf->len - r->start);
		r->buf_off += (gint64)r->start;
		r->scanned = r->scanned > r->start ? r->scanned - r->start : 0;
		r->start = 0;
	}
	had = r->buf->len;
	g_byte_array_set_size(r->buf, had + MBOX_CHUNK);
	do
		n = read(r->fd, r->buf->data + had, MBOX_CHUNK);
	while (n < 0 && errno == EINTR);
	g_byte_array_set_size(r->buf, had + (size_t)MAX(n, 0));
	if (n < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot read the mbox at byte %" G_GINT64_FORMAT ": %s",
				r->buf_off + (gint64)had, g_strerror(errno));
	r->eof = n == 0;
	return 0;
}

/*
 * The mail at start is longer than max_mail: read past it, keeping only
 * the bytes a separator may start in, and hand it out without its bytes.
 */
static int skip_long(struct pk_mbox_reader *r, struct pk_mbox_mail *out, GError **err)
{
	gint64 offset = r->buf_off + (gint64)r->start;
	size_t end;

	for (;;) {
		if ((end = find_separator(r)) || r->eof)
			break;
		/* buf[start..scanned) holds no separator: it need not be kept */
		r->start = MAX(r->start, r->scanned);
		if (read_more(r, err) < 0)
			return -1;
	}
	if (!end)
		end = r->buf->len;
	*out = (struct pk_mbox_mail){ NULL, 0, offset, r->buf_off + (gint64)end - offset,
				      end < r->buf->len };
	r->start = end;
	return 1;
}

int pk_mbox_next(struct pk_mbox_reader *r, struct pk_mbox_mail *out, GError **err)
{
	size_t end;

	for (;;) {
		if ((end = find_separator(r)))
			break;
		if (r->eof) {
			if (r->start == r->buf->len)
				return 0;
			end = r->buf->len;
			break;
		}
		if (r->buf->len - r->start > r->max_mail)
			return skip_long(r, out, err);
		if (read_more(r, err) < 0)
			return -1;
	}
	if (end - r->start > r->max_mail) {
		/* it ended in the chunk that took it over the limit */
		*out = (struct pk_mbox_mail){ NULL, 0, r->buf_off + (gint64)r->start,
					      (gint64)(end - r->start), end < r->buf->len };
	} else {
		*out = (struct pk_mbox_mail){ (const char *)r->buf->data + r->start, end - r->start,
					      r->buf_off + (gint64)r->start, (gint64)(end - r->start),
					      end < r->buf->len };
	}
	r->start = end;
	return 1;
}
