/* patch.c - unified diff and patch mail parsing; see patch.h. */
#include "base/patch.h"
#include "base/patch-private.h"
#include "base/settings.h"
#include "base/util.h"

#include <gmime/gmime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest line a mailer wraps (see is_wrapped()). */
#define WRAP_MIN 60

/* GMime 3 declares no g_autoptr() cleanups of its own. */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeStream, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeParser, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeMessage, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeFilter, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimePartIter, g_mime_part_iter_free)

static void diff_line_free(gpointer p)
{
	struct pk_diff_line *l = p;

	if (!l)
		return;
	g_free(l->text);
	g_free(l);
}

static void hunk_free(gpointer p)
{
	struct pk_hunk *h = p;

	if (!h)
		return;
	g_ptr_array_unref(h->lines);
	g_free(h->section);
	g_free(h);
}

static void diff_file_free(gpointer p)
{
	struct pk_diff_file *f = p;

	if (!f)
		return;
	g_free(f->old_path);
	g_free(f->new_path);
	g_ptr_array_unref(f->hunks);
	g_free(f);
}

static void damage_free(gpointer p)
{
	struct pk_patch_damage *d = p;

	if (!d)
		return;
	g_free(d->path);
	g_free(d->what);
	g_free(d);
}

void pk_patch_free(struct pk_patch *p)
{
	if (!p)
		return;
	g_free(p->subject);
	g_free(p->message_id);
	g_free(p->author);
	g_free(p->author_name);
	g_free(p->author_email);
	g_free(p->date);
	g_free(p->description);
	g_free(p->diff);
	g_free(p->error);
	g_free(p->over_limit);
	if (p->files)
		g_ptr_array_unref(p->files);
	if (p->damage)
		g_ptr_array_unref(p->damage);
	g_free(p);
}

void pk_patch_free_void(gpointer p)
{
	pk_patch_free(p);
}

char *pk_patch_damage_describe(const struct pk_patch *p, const struct pk_patch_damage *d)
{
	if (p->diff_line > 0)
		return g_strdup_printf("line %d %s", p->diff_line + d->line - 1, d->what);
	return g_strdup_printf("line %d of its diff %s", d->line, d->what);
}

char *pk_patch_over_limits(const struct pk_patch *patch, const struct pk_policy *policy)
{
	guint64 lines = 0;

	if (patch->over_limit)
		return g_strdup(patch->over_limit);
	if (policy->max_files && patch->files->len > policy->max_files)
		return g_strdup_printf("the patch touches %u files, more than the limit of %u ([policy] max_files)",
				       patch->files->len, policy->max_files);
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		for (guint h = 0; h < f->hunks->len; h++)
			lines += ((const struct pk_hunk *)f->hunks->pdata[h])->lines->len;
	}
	if (policy->max_lines && lines > policy->max_lines)
		return g_strdup_printf("the diff has %" G_GUINT64_FORMAT " lines, more than the limit of %u "
				       "([policy] max_lines)", lines, policy->max_lines);
	return NULL;
}

const char *pk_diff_file_path(const struct pk_diff_file *f)
{
	return f->new_path ? f->new_path : f->old_path;
}

static struct pk_patch *patch_new(void)
{
	struct pk_patch *p = g_new0(struct pk_patch, 1);

	p->files = g_ptr_array_new_with_free_func(diff_file_free);
	p->damage = g_ptr_array_new_with_free_func(damage_free);
	return p;
}

/* Keep the first problem only: later ones are usually its consequences. */
static void set_error(struct pk_patch *p, int lineno, const char *what)
{
	if (!p->error)
		p->error = g_strdup_printf("line %d: %s", lineno, what);
}

/* "a/foo.c\t2020-..." -> "foo.c"; "/dev/null" -> NULL. */
static char *header_path(const char *s, gboolean strip_prefix)
{
	const char *end = s + strcspn(s, "\t");

	while (end > s && end[-1] == ' ')
		end--;
	if ((size_t)(end - s) == 9 && !strncmp(s, "/dev/null", 9))
		return NULL;
	if (strip_prefix && end - s > 2 && s[1] == '/')
		s += 2;
	return g_strndup(s, end - s);
}

/* Parse "-a[,b] +c[,d]"; a missing count means 1, as diff(1) writes it. */
static gboolean parse_range(const char **sp, char sign, int *start, int *count)
{
	const char *s = *sp;
	char *end;

	if (*s != sign)
		return FALSE;
	*start = (int)strtol(s + 1, &end, 10);
	if (end == s + 1)
		return FALSE;
	*count = 1;
	if (*end == ',') {
		s = end + 1;
		*count = (int)strtol(s, &end, 10);
		if (end == s)
			return FALSE;
	}
	*sp = end;
	return TRUE;
}

static struct pk_hunk *parse_hunk_header(const char *line)
{
	struct pk_hunk h = { 0 };
	const char *s = line + 3;

	if (!parse_range(&s, '-', &h.old_start, &h.old_count) || *s++ != ' ' ||
	    !parse_range(&s, '+', &h.new_start, &h.new_count) || strncmp(s, " @@", 3))
		return NULL;
	s += 3;
	if (*s == ' ')
		s++;
	struct pk_hunk *out = g_memdup2(&h, sizeof(h));
	out->section = *s ? g_strdup(s) : NULL;
	out->lines = g_ptr_array_new_with_free_func(diff_line_free);
	return out;
}

struct diff_parser {
	struct pk_patch *patch;
	struct pk_diff_file *file;   /* the file being read, owned by patch */
	struct pk_hunk *hunk;        /* the hunk being read, or NULL */
	int old_left, new_left, old_no, new_no;
	char *pending_old;           /* a "--- " path waiting for its "+++ " */
	gboolean old_pending_set;
	int fits_until;              /* lines before this index fill the open hunk
					once wrapped lines are joined (0: not checked) */
	int tab_lines;               /* hunk lines indented as an expanded tab is */
	int tab_first, tab_file_line;   /* the first one's input and file lines */
	const struct pk_diff_file *tab_file;
};

static struct pk_diff_file *file_start(struct diff_parser *dp)
{
	struct pk_diff_file *f = g_new0(struct pk_diff_file, 1);

	f->hunks = g_ptr_array_new_with_free_func(hunk_free);
	g_ptr_array_add(dp->patch->files, f);
	dp->file = f;
	return f;
}

/*
 * Whether a hunk line's text is indented as a tab the mailer expanded:
 * after the kind character a tab reaches column 8 with 7 blanks, and no
 * code is indented by 7 (or 15, ...) blanks.
 */
static gboolean expanded_tab(const char *text)
{
	size_t n = strspn(text, " ");

	return n % 8 == 7 && text[n] && text[n] != '\t';
}

/* One line inside a hunk; returns FALSE when it is not hunk content. */
static gboolean hunk_line(struct diff_parser *dp, const char *line, int lineno)
{
	char kind = *line ? *line : ' ';   /* mailers eat a context line's space */
	struct pk_diff_line *l;

	if (kind == '\\')
		return TRUE;   /* "\ No newline at end of file" */
	if (kind != ' ' && kind != '-' && kind != '+')
		return FALSE;
	if ((kind != '+' && dp->old_left <= 0) || (kind != '-' && dp->new_left <= 0))
		return FALSE;
	l = g_new0(struct pk_diff_line, 1);
	l->kind = kind;
	l->text = g_strdup(*line ? line + 1 : "");
	if (kind != '+') {
		l->old_no = dp->old_no++;
		dp->old_left--;
	}
	if (kind != '-') {
		l->new_no = dp->new_no++;
		dp->new_left--;
	}
	g_ptr_array_add(dp->hunk->lines, l);
	if (expanded_tab(l->text) && !dp->tab_lines++) {
		dp->tab_first = lineno;
		dp->tab_file = dp->file;
		dp->tab_file_line = kind == '-' ? l->old_no : l->new_no;
	}
	if (dp->old_left <= 0 && dp->new_left <= 0)
		dp->hunk = NULL;
	return TRUE;
}

/* Lines that start something new, never the rest of a wrapped line. */
static gboolean is_boundary(const char *line)
{
	return g_str_has_prefix(line, "@@ ") || g_str_has_prefix(line, "diff --git ") ||
	       g_str_has_prefix(line, "Index: ");
}

/* Whether a line can be a line of a hunk ("" is a context line whose space a mailer ate). */
static gboolean is_hunk_kind(char c)
{
	return c == '\0' || c == ' ' || c == '-' || c == '+' || c == '\\';
}

/*
 * Whether line i can be the rest of line i - 1, wrapped by a mailer: it
 * cannot start a diff line, and line i - 1 with its first word is longer
 * than any mailer lets a line be (they wrap at 66 to 80 columns).  The
 * length keeps prose after a hunk cut short from being taken for it.
 */
static gboolean is_wrapped(char **lines, int i)
{
	const char *line = lines[i];

	return i > 0 && !is_hunk_kind(*line) && !is_boundary(line) &&
	       strlen(lines[i - 1]) + 1 + strcspn(line, " \t") > WRAP_MIN;
}

/*
 * Where the lines from index i fill a hunk that still needs old_left and
 * new_left lines, those that cannot start a diff line being the rest of a
 * wrapped one: the index after its last line, or -1 when they do not fill
 * it exactly (a boundary, the end or a line that is neither comes first,
 * or a count overflows).
 */
static int hunk_fits(char **lines, int i, int old_left, int new_left)
{
	for (; lines[i] && (old_left > 0 || new_left > 0); i++) {
		char kind = *lines[i];

		if (is_boundary(lines[i]))
			return -1;
		if (kind == '\\')
			continue;
		if (!is_hunk_kind(kind)) {
			if (!is_wrapped(lines, i))
				return -1;
			continue;
		}
		old_left -= kind != '+';
		new_left -= kind != '-';
		if (old_left < 0 || new_left < 0)
			return -1;
	}
	return old_left <= 0 && new_left <= 0 ? i : -1;
}

struct pk_patch_damage *pk_patch_damage_new(int lineno, const char *path, int file_line, const char *what)
{
	struct pk_patch_damage *d = g_new0(struct pk_patch_damage, 1);

	d->line = lineno;
	d->path = g_strdup(path);
	d->file_line = file_line;
	d->what = g_strdup(what);
	return d;
}

static void add_damage(struct diff_parser *dp, int lineno, int file_line, const char *what)
{
	const char *path = dp->file ? pk_diff_file_path(dp->file) : NULL;

	g_ptr_array_add(dp->patch->damage, pk_patch_damage_new(lineno, path, file_line, what));
}

/*
 * Line i is inside a hunk but cannot start a diff line: the mailer wrapped
 * the line above it (or the hunk header's function text), breaking at a
 * blank it dropped.  It is joined back when the lines after it then fill
 * the hunk exactly, the one reading the header's counts allow; FALSE
 * leaves it unread, as a hunk cut short.
 */
static gboolean wrapped_line(struct diff_parser *dp, char **lines, int i)
{
	struct pk_hunk *h = dp->hunk;
	struct pk_diff_line *prev = h->lines->len ? h->lines->pdata[h->lines->len - 1] : NULL;
	char **tail = prev ? &prev->text : &h->section;
	char *joined;

	if (!is_wrapped(lines, i) || !*tail)
		return FALSE;
	/* checked once per hunk: the lines up to fits_until were found to fill it */
	if (i >= dp->fits_until && (dp->fits_until = hunk_fits(lines, i + 1, dp->old_left, dp->new_left)) < 0) {
		dp->fits_until = 0;
		return FALSE;
	}
	joined = g_strconcat(*tail, g_str_has_suffix(*tail, " ") ? "" : " ", lines[i], NULL);
	g_free(*tail);
	*tail = joined;
	if (!prev)
		add_damage(dp, i + 1, h->new_start, "(the end of a hunk header) was wrapped by the mailer");
	else
		add_damage(dp, i + 1, prev->kind == '-' ? prev->old_no : prev->new_no,
			   prev->kind == '+' ? "(the end of an added line) was wrapped by the mailer"
			   : prev->kind == '-' ? "(the end of a removed line) was wrapped by the mailer"
			   : "(the end of a context line) was wrapped by the mailer");
	return TRUE;
}

static void start_hunk(struct diff_parser *dp, const char *line, int lineno)
{
	struct pk_hunk *h = parse_hunk_header(line);

	if (!h) {
		set_error(dp->patch, lineno, "bad hunk header");
		return;
	}
	if (!dp->file)
		file_start(dp);
	g_ptr_array_add(dp->file->hunks, h);
	dp->old_left = h->old_count;
	dp->new_left = h->new_count;
	dp->old_no = h->old_start;
	dp->new_no = h->new_start;
	dp->fits_until = 0;
	dp->hunk = (h->old_count || h->new_count) ? h : NULL;
}

/* A line outside any hunk: file headers, hunk headers, or prose to skip. */
static void header_line(struct diff_parser *dp, const char *line, const char *next,
			int lineno)
{
	if (g_str_has_prefix(line, "diff --git ")) {
		file_start(dp);
		return;
	}
	if (g_str_has_prefix(line, "--- ") && next && g_str_has_prefix(next, "+++ ")) {
		/* a "diff --git" header already opened the file; plain diffs did not */
		if (!dp->file || dp->file->hunks->len || dp->file->old_path || dp->file->new_path)
			file_start(dp);
		g_free(dp->file->old_path);
		dp->file->old_path = header_path(line + 4, TRUE);
		return;
	}
	if (g_str_has_prefix(line, "+++ ") && dp->file && !dp->file->new_path &&
	    !dp->file->hunks->len) {
		dp->file->new_path = header_path(line + 4, TRUE);
		return;
	}
	if (g_str_has_prefix(line, "@@ ") && dp->file)
		start_hunk(dp, line, lineno);
}

/*
 * The lines of text (up to its NUL), split in place ('\n' made '\0') into
 * a NULL-terminated array as g_strsplit() gives, but in one allocation:
 * a string per line was most of the parser's allocations (and of
 * fuzz-scan's time under ASan).  Free the array only; text holds the lines.
 */
static char **split_lines_in_place(char *text)
{
	gsize n = 1, i = 0;
	char **lines;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	lines = g_new(char *, n + 1);
	for (char *p = text;; p++) {
		lines[i++] = p;
		if (!(p = strchr(p, '\n')))
			break;
		*p = '\0';
	}
	lines[i] = NULL;
	return lines;
}

struct pk_patch *pk_patch_parse_diff(const char *buf, size_t len)
{
	struct diff_parser dp = { .patch = patch_new() };
	g_autofree char *copy = g_strndup(buf, len);

	dp.patch->diff_line = 1;
	dp.patch->diff = g_strndup(buf, len);
	g_autofree char **lines = split_lines_in_place(copy);

	/* CRLF ends read as LF, before anything looks ahead (wrapped_line() does) */
	for (int i = 0; lines[i]; i++) {
		size_t n = strlen(lines[i]);

		if (n && lines[i][n - 1] == '\r')
			lines[i][n - 1] = '\0';
	}
	for (int i = 0; lines[i]; i++) {
		char *line = lines[i];

		if (dp.hunk && (hunk_line(&dp, line, i + 1) || wrapped_line(&dp, lines, i)))
			continue;
		if (dp.hunk) {
			set_error(dp.patch, i + 1, "hunk ends before its header says");
			dp.hunk = NULL;
		}
		/* the final empty string after a trailing newline is not a line */
		if (!lines[i + 1] && !*line)
			break;
		header_line(&dp, line, lines[i + 1], i + 1);
	}
	if (dp.hunk) {
		guint n = g_strv_length(lines);
		/* name the last real line, not the empty string after the final newline */
		set_error(dp.patch, n > 1 && !*lines[n - 1] ? n - 1 : n, "input ends inside a hunk");
	}
	/* a few such lines and no tab anywhere: the mailer expanded every tab */
	if (dp.tab_lines >= 3 && !memchr(buf, '\t', len))
		g_ptr_array_add(dp.patch->damage, pk_patch_damage_new(dp.tab_first, pk_diff_file_path(dp.tab_file),
			dp.tab_file_line, "had its tabs turned into blanks by the mailer, as every line of the diff did"));
	return dp.patch;
}

/* Whether the hunk's pre-image (context and removed lines) is at old[at]. */
static gboolean hunk_matches_at(char **old, guint n_old, const struct pk_hunk *h, guint at)
{
	for (guint i = 0; i < h->lines->len; i++) {
		const struct pk_diff_line *l = h->lines->pdata[i];

		if (l->kind == '+')
			continue;
		if (at >= n_old || strcmp(old[at], l->text))
			return FALSE;
		at++;
	}
	return TRUE;
}

/* Where the hunk's pre-image starts: want, else the nearest line >= from. */
static int hunk_find(char **old, guint n_old, const struct pk_hunk *h, guint from, guint want)
{
	want = CLAMP(want, from, n_old);
	for (guint d = 0; want + d <= n_old || want >= from + d; d++) {
		if (want + d <= n_old && hunk_matches_at(old, n_old, h, want + d))
			return (int)(want + d);
		if (d && want >= from + d && hunk_matches_at(old, n_old, h, want - d))
			return (int)(want - d);
	}
	return -1;
}

char *pk_diff_file_apply(const struct pk_diff_file *f, const char *old_text)
{
	g_auto(GStrv) old = g_strsplit(old_text, "\n", -1);
	guint n_old = g_strv_length(old), at = 0;
	g_autoptr(GString) out = g_string_new(NULL);

	if (n_old && !*old[n_old - 1])
		n_old--;   /* the empty string after the final newline is not a line */
	for (guint i = 0; i < f->hunks->len; i++) {
		const struct pk_hunk *h = f->hunks->pdata[i];
		/* "-5,0" inserts after line 5; "-5,3" starts at line 5 */
		int want = h->old_count ? h->old_start - 1 : h->old_start;
		int start = hunk_find(old, n_old, h, at, (guint)MAX(want, 0));

		if (start < 0)
			return NULL;
		for (; at < (guint)start; at++)
			g_string_append_printf(out, "%s\n", old[at]);
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];

			if (l->kind != '-')
				g_string_append_printf(out, "%s\n", l->kind == ' ' ? old[at] : l->text);
			if (l->kind != '+')
				at++;
		}
	}
	for (; at < n_old; at++)
		g_string_append_printf(out, "%s\n", old[at]);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* Whether text holds a unified diff: a file header line pair or git's. */
static const char *find_diff(const char *text)
{
	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
		if (g_str_has_prefix(s, "diff --git ") || g_str_has_prefix(s, "Index: "))
			return s;
		if (g_str_has_prefix(s, "--- ")) {
			const char *nl = strchr(s, '\n');
			if (nl && g_str_has_prefix(nl + 1, "+++ "))
				return s;
		}
	}
	return NULL;
}

/* The bytes of a stream from its start, as a NUL-terminated string. */
static char *stream_text(GMimeStream *src, size_t *out_len)
{
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *bytes;

	if (g_mime_stream_reset(src) < 0 || g_mime_stream_write_to_stream(src, mem) < 0)
		return NULL;
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	*out_len = bytes->len;
	return g_strndup((const char *)bytes->data, bytes->len);
}

/*
 * mboxrd quoting undone: a writer puts one more '>' before every line that
 * matches ^>*From, so readers take one away.  It is undone on the part's
 * encoded bytes, where the writer added it, before any decoding.
 */
static char *mboxrd_unquote(char *raw, size_t *len)
{
	static GRegex *re;
	static gsize once;
	char *out;

	if (g_once_init_enter(&once)) {
		re = g_regex_new("^>(>*From )", G_REGEX_MULTILINE | G_REGEX_RAW | pk_regex_optimize(),
				 0, NULL);
		g_once_init_leave(&once, 1);
	}
	if (!strstr(raw, ">From "))
		return raw;
	out = g_regex_replace(re, raw, (gssize)*len, 0, "\\1", 0, NULL);
	if (!out)
		return raw;
	g_free(raw);
	*len = strlen(out);
	return out;
}

/* Whether a charset name means UTF-8 or its ASCII subset. */
static gboolean charset_is_utf8(const char *charset)
{
	const char *canon = g_mime_charset_canon_name(charset);

	return !g_ascii_strcasecmp(canon, "utf-8") || !g_ascii_strcasecmp(canon, "us-ascii") ||
	       !g_ascii_strcasecmp(canon, "ascii");
}

/*
 * The content of a MIME part as UTF-8 text: mboxrd quoting undone (for a
 * part read from an mbox), the transfer encoding decoded, and the charset
 * converted, through one GMime filter stream, and format=flowed undone
 * (unflow()).  NULL for a part that cannot
 * hold a diff, which is most of a mailing list, without decoding it.
 */
static char *part_text(GMimePart *part, gboolean mboxrd)
{
	GMimeDataWrapper *content = g_mime_part_get_content(part);
	GMimeContentEncoding enc;
	const char *charset, *flowed;
	char *text;
	g_autoptr(GMimeStream) out = NULL, filtered = NULL;
	g_autofree char *raw = NULL;
	size_t len = 0;
	GByteArray *bytes;

	if (!content || !(raw = stream_text(g_mime_data_wrapper_get_stream(content), &len)))
		return NULL;
	enc = g_mime_data_wrapper_get_encoding(content);
	/*
	 * A diff's "--- " or "diff --git" starts a line that no encoding but
	 * base64 changes (quoted-printable may wrap it, not alter its start).
	 */
	if (enc != GMIME_CONTENT_ENCODING_BASE64 && enc != GMIME_CONTENT_ENCODING_UUENCODE &&
	    !g_str_has_prefix(raw, "--- ") && !strstr(raw, "\n--- ") && !strstr(raw, "diff --git ") &&
	    !strstr(raw, "Index: "))
		return NULL;
	if (mboxrd)
		raw = mboxrd_unquote(raw, &len);
	out = g_mime_stream_mem_new();
	filtered = g_mime_stream_filter_new(out);
	if (enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE ||
	    enc == GMIME_CONTENT_ENCODING_UUENCODE) {
		g_autoptr(GMimeFilter) dec = g_mime_filter_basic_new(enc, FALSE);
		g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered), dec);
	}
	charset = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "charset");
	if (charset && !charset_is_utf8(charset)) {
		/* NULL when iconv knows no such charset: the fallback below guesses */
		g_autoptr(GMimeFilter) conv = g_mime_filter_charset_new(charset, "UTF-8");
		if (conv)
			g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered), conv);
	}
	if (g_mime_stream_write(filtered, raw, len) < 0 || g_mime_stream_flush(filtered) < 0)
		return NULL;
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out));
	/* nothing decoded (base64 of no valid character): no diff, and no text to unflow */
	if (!bytes->len)
		return NULL;
	if (!g_utf8_validate((const char *)bytes->data, bytes->len, NULL))
		text = g_mime_utils_decode_8bit(NULL, (const char *)bytes->data, bytes->len);
	else
		text = g_strndup((const char *)bytes->data, bytes->len);
	flowed = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "format");
	if (flowed && !g_ascii_strcasecmp(flowed, "flowed")) {
		const char *delsp = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "delsp");
		char *plain = pk_patch_unflow(text, delsp && !g_ascii_strcasecmp(delsp, "yes"));
		g_free(text);
		text = plain;
	}
	return text;
}

/* Text parts and patch attachments are where a diff can be. */
static gboolean part_may_hold_diff(GMimeObject *obj)
{
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	const char *name = g_mime_part_get_filename(GMIME_PART(obj));

	if (name && (g_str_has_suffix(name, ".patch") || g_str_has_suffix(name, ".diff")))
		return TRUE;
	return !ct || g_mime_content_type_is_type(ct, "text", "*");
}

/*
 * The first part that carries a diff, decoded; NULL when none does.
 * *out_verbatim: it is the whole body with its lines as the mail has them.
 */
static char *message_diff(GMimeMessage *msg, gboolean mboxrd, gboolean *out_verbatim)
{
	GMimeObject *top = g_mime_message_get_mime_part(msg);
	g_autoptr(GMimePartIter) iter = NULL;

	if (!top)
		return NULL;
	if (GMIME_IS_PART(top)) {
		GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(top));
		const char *format = g_mime_object_get_content_type_parameter(top, "format");
		g_autofree char *text = part_may_hold_diff(top) ? part_text(GMIME_PART(top), mboxrd) : NULL;

		*out_verbatim = enc != GMIME_CONTENT_ENCODING_BASE64 &&
				enc != GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE &&
				enc != GMIME_CONTENT_ENCODING_UUENCODE &&
				!(format && !g_ascii_strcasecmp(format, "flowed"));
		return text && find_diff(text) ? g_steal_pointer(&text) : NULL;
	}
	if (!GMIME_IS_MULTIPART(top))
		return NULL;
	iter = g_mime_part_iter_new(top);
	do {
		GMimeObject *obj = g_mime_part_iter_get_current(iter);
		if (!obj || !GMIME_IS_PART(obj) || !part_may_hold_diff(obj))
			continue;
		g_autofree char *text = part_text(GMIME_PART(obj), mboxrd);
		if (text && find_diff(text))
			return g_steal_pointer(&text);
	} while (g_mime_part_iter_next(iter));
	return NULL;
}

/*
 * The commit message of a mail: the body up to the "---" line that
 * git format-patch puts before the diffstat (or up to the diff itself).
 */
static char *commit_message(const char *body, const char *diff)
{
	const char *end = diff;

	for (const char *s = body; s && s < diff; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (g_str_has_prefix(s, "---\n") || g_str_has_prefix(s, "---\r\n")) {
			end = s;
			break;
		}
	g_autofree char *msg = g_strndup(body, end - body);
	g_strstrip(msg);
	return *msg ? g_steal_pointer(&msg) : NULL;
}

/* The From: mailbox and the Date of a mail, decoded, for the commit apply makes. */
static void message_author_and_time(GMimeMessage *msg, struct pk_patch *p)
{
	InternetAddressList *from = g_mime_message_get_from(msg);
	GDateTime *date = g_mime_message_get_date(msg);

	if (from && internet_address_list_length(from) > 0) {
		InternetAddress *a = internet_address_list_get_address(from, 0);
		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *name = internet_address_get_name(a);
			p->author_name = g_strdup(name && *name ? name : NULL);
			p->author_email = g_strdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)));
		}
	}
	if (date) {
		p->time = g_date_time_to_unix(date);
		p->tz_minutes = (int)(g_date_time_get_utc_offset(date) / G_TIME_SPAN_MINUTE);
	}
}

/*
 * Headers are 8-bit in the wild (raw Latin-1 names, cut encoded words) and
 * every string of a patch is promised UTF-8 (it goes into JSON, the store
 * and mail): a bad byte becomes U+FFFD.  Found by fuzz-mail.
 */
static void make_valid_utf8(char **s)
{
	if (*s && !g_utf8_validate(*s, -1, NULL)) {
		char *valid = g_utf8_make_valid(*s, -1);
		g_free(*s);
		*s = valid;
	}
}

int pk_count_lines(const char *s, size_t n)
{
	int lines = 0;

	for (const char *nl = s; (nl = memchr(nl, '\n', n - (size_t)(nl - s))); nl++)
		lines++;
	return lines;
}

/* body_line: the line of the mail where its body starts, 0 when unknown. */
static struct pk_patch *patch_from_message(GMimeMessage *msg, gboolean mboxrd, int body_line)
{
	gboolean verbatim = FALSE;
	g_autofree char *text = message_diff(msg, mboxrd, &verbatim);
	GMimeObject *obj = GMIME_OBJECT(msg);
	const char *diff, *v;
	struct pk_patch *p;

	if (!text || !(diff = find_diff(text)))
		return NULL;
	p = pk_patch_leftover_qp(diff, pk_patch_parse_diff(diff, strlen(diff)));
	/* damage is named by the line of the mail when the body is the mail's text */
	p->diff_line = verbatim && body_line ? body_line + pk_count_lines(text, (size_t)(diff - text)) : 0;
	if ((v = g_mime_message_get_subject(msg)))
		p->subject = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "Message-Id")))
		p->message_id = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "From")))
		p->author = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "Date")))
		p->date = g_strdup(v);
	message_author_and_time(msg, p);
	p->description = commit_message(text, diff);
	make_valid_utf8(&p->subject);
	make_valid_utf8(&p->message_id);
	make_valid_utf8(&p->author);
	make_valid_utf8(&p->author_name);
	make_valid_utf8(&p->author_email);
	make_valid_utf8(&p->date);
	make_valid_utf8(&p->description);
	return p;
}

/* A mail starts with an mbox "From " line or with a header field. */
static GMimeFormat mail_format(const char *buf, size_t len)
{
	size_t i;

	if (len >= 5 && !strncmp(buf, "From ", 5))
		return GMIME_FORMAT_MBOX;
	for (i = 0; i < len && (g_ascii_isalnum(buf[i]) || buf[i] == '-'); i++)
		;
	if (i > 0 && i < len && buf[i] == ':' && !g_str_has_prefix(buf, "Index:"))
		return GMIME_FORMAT_MESSAGE;
	return (GMimeFormat)-1;
}

static void gmime_init_once(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		g_mime_init();
		g_once_init_leave(&done, 1);
	}
}

/* The line of the mail just read where its body starts, counted from its first line. */
static int body_line(GMimeParser *parser, const char *buf, size_t len, GMimeFormat format)
{
	gint64 begin = format == GMIME_FORMAT_MBOX ? g_mime_parser_get_mbox_marker_offset(parser) : 0;
	gint64 end = g_mime_parser_get_headers_end(parser);

	if (begin < 0 || end < begin || (guint64)end > len)
		return 0;
	/* GMime's end of headers is before the blank line that ends them */
	return 2 + pk_count_lines(buf + begin, (size_t)(end - begin));
}

int pk_patch_read_mails(GPtrArray **out, unsigned *out_skipped, const char *buf,
			size_t len, GError **err)
{
	g_autoptr(GPtrArray) patches = g_ptr_array_new_with_free_func(pk_patch_free_void);
	g_autoptr(GMimeStream) stream = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	GMimeFormat format = mail_format(buf, len);
	unsigned skipped = 0, read = 0;

	if ((int)format == -1) {
		struct pk_patch *p = pk_patch_parse_diff(buf, len);

		/* text without one file header (an empty file, a note) is no
		 * patch: callers say so, where a patch of no files was no-churn */
		if (p->files->len || p->error)
			g_ptr_array_add(patches, p);
		else
			pk_patch_free(p);
		goto done;
	}
	gmime_init_once();
	stream = g_mime_stream_mem_new_with_buffer(buf, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, format);
	while (!g_mime_parser_eos(parser)) {
		g_autoptr(GMimeMessage) msg = g_mime_parser_construct_message(parser, NULL);
		struct pk_patch *p;

		if (!msg)
			break;
		read++;
		if ((p = patch_from_message(msg, format == GMIME_FORMAT_MBOX, body_line(parser, buf, len, format))))
			g_ptr_array_add(patches, p);
		else
			skipped++;
		if (format == GMIME_FORMAT_MESSAGE)
			break;
	}
	if (!read)
		return pk_error(err, PK_ERROR_INPUT, "no mail could be read");
done:
	*out = g_steal_pointer(&patches);
	if (out_skipped)
		*out_skipped = skipped;
	return 0;
}
