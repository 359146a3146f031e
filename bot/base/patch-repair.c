/*
 * patch-repair.c - the mail damage git am undoes itself (format=flowed) and
 * the one it does not (a diff left in quoted-printable); see patch.h.
 * Apart from patch.c to keep each file to one role and a readable size.
 */
#include "base/patch-private.h"

#include <gmime/gmime.h>
#include <string.h>

/*
 * format=flowed (RFC 3676) undone as git mailinfo undoes it, so a patch
 * reads as git am would apply it: the blank a sender stuffed before a line
 * starting with one is taken away, and a line ending in a blank (a soft
 * break) is joined to the next, that blank dropped with DelSp=yes; the
 * signature line "-- " stays.  GMime has no decoder for it.
 */
char *pk_patch_unflow(const char *text, gboolean delsp)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	GString *out = g_string_sized_new(strlen(text));

	for (char **l = lines; *l; l++) {
		char *s = *l;
		size_t n = strlen(s);

		if (n && s[n - 1] == '\r')
			s[--n] = '\0';
		if (strcmp(s, "-- ") && *s == ' ')
			s++, n--;
		if (strcmp(*l, "-- ") && n && s[n - 1] == ' ') {
			g_string_append_len(out, s, (gssize)(n - (delsp ? 1 : 0)));
			continue;
		}
		g_string_append_len(out, s, (gssize)n);
		if (l[1])
			g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}

/* The escapes of quoted-printable a diff never holds by itself. */
static const char *qp_escape(const char *s)
{
	const char *e = strstr(s, "=3D");

	return e ? e : strstr(s, "=20\n");
}

/*
 * A diff still in quoted-printable though its mail does not say so (a
 * forward, an archive that lost the header): "=3D" for '=', "=20" for a
 * blank at a line end, a line ending in '=' broken by the encoder.  git am
 * applies it as it is and fails.  Its decoded reading replaces p when it
 * reads whole and p does not or holds an escape; the repair is damage, and
 * diff stays the text as sent.  Takes p; returns the patch to keep.
 */
struct pk_patch *pk_patch_leftover_qp(const char *diff, struct pk_patch *p)
{
	const char *first = qp_escape(diff);
	size_t len = strlen(diff);
	g_autofree char *plain = NULL;
	struct pk_patch *q;
	const struct pk_diff_file *f;
	const struct pk_hunk *h;
	GMimeEncoding state;

	if (!first && !(p->error && strstr(diff, "=\n")))
		return p;
	g_mime_encoding_init_decode(&state, GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
	plain = g_malloc(g_mime_encoding_outlen(&state, len) + 1);
	plain[g_mime_encoding_flush(&state, diff, len, plain)] = '\0';
	q = pk_patch_parse_diff(plain, strlen(plain));
	if (q->error || q->files->len < p->files->len || !g_utf8_validate(plain, -1, NULL)) {
		pk_patch_free(q);
		return p;
	}
	if (!first)
		first = strstr(diff, "=\n");
	f = q->files->len ? q->files->pdata[0] : NULL;
	h = f && f->hunks->len ? f->hunks->pdata[0] : NULL;
	g_ptr_array_insert(q->damage, 0, pk_patch_damage_new(pk_count_lines(diff, (size_t)(first - diff)) + 1,
			   f ? pk_diff_file_path(f) : NULL, h ? h->new_start : 0,
			   "(and the diff around it) is still quoted-printable, which the mail does not declare"));
	g_free(q->diff);
	q->diff = g_strdup(diff);
	pk_patch_free(p);
	return q;
}

