/* patch.c - unified diff parsing and applying to a text; see patch.h (mail: patch-mail.c). */
#include "base/patch.h"
#include "base/patch-private.h"
#include "base/settings.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest line a mailer wraps (see is_wrapped()). */
#define WRAP_MIN 60

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

bool pk_patch_touches(const struct pk_patch *patch, const char *prefix)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if ((f->new_path && g_str_has_prefix(f->new_path, prefix)) ||
		    (f->old_path && g_str_has_prefix(f->old_path, prefix)))
			return true;
	}
	return false;
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

int pk_count_lines(const char *s, size_t n)
{
	int lines = 0;

	for (const char *nl = s; (nl = memchr(nl, '\n', n - (size_t)(nl - s))); nl++)
		lines++;
	return lines;
}
