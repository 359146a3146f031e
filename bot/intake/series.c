/* series.c - subjects, the loop guard, series grouping; see series.h. */
#include "intake/series.h"

#include <errno.h>
#include <string.h>

/* Reply and forward prefixes as mail clients write them, in a few languages. */
static const char *const reply_prefixes[] = { "re:", "aw:", "sv:", "antw:", "fwd:", "fw:", "wg:", "r:" };

/* Length of a reply prefix at s, 0 when there is none. */
static size_t reply_prefix(const char *s)
{
	for (size_t i = 0; i < G_N_ELEMENTS(reply_prefixes); i++) {
		size_t n = strlen(reply_prefixes[i]);
		if (!g_ascii_strncasecmp(s, reply_prefixes[i], n))
			return n;
	}
	return 0;
}

/* The most a version or a total may be: a real series is far below. */
#define SUBJECT_MAX 9999

/*
 * A number of a tag word at p, sign and all: a negative one (-1/-5) is
 * no number and no series, not a word to skip.  *end after it.
 */
static bool tag_number(const char *p, gint64 *out, char **end)
{
	if (!g_ascii_isdigit(*p) && !((*p == '-' || *p == '+') && g_ascii_isdigit(p[1])))
		return false;
	errno = 0;
	*out = g_ascii_strtoll(p, end, 10);
	if (errno == ERANGE)
		*out = *out < 0 ? G_MININT64 : G_MAXINT64;
	return true;
}

/* Read the words of one [tag] into s. */
static void parse_tag(struct pk_subject *s, const char *tag)
{
	g_auto(GStrv) words = g_strsplit_set(tag, " \t", -1);

	for (int i = 0; words[i]; i++) {
		const char *w = words[i];
		char *end;
		gint64 a, b;

		if (!g_ascii_strncasecmp(w, "PATCHv", 6) && g_ascii_isdigit(w[6]))
			w += 5;   /* "PATCHv2": the version below */
		if (w != words[i] || !g_ascii_strcasecmp(w, "PATCH") || !g_ascii_strcasecmp(w, "RFC") ||
		    !g_ascii_strcasecmp(w, "RESEND"))
			s->patch = true;
		else if (!g_ascii_strcasecmp(w, "PULL") || !g_ascii_strcasecmp(w, "GIT"))
			s->pull |= !g_ascii_strcasecmp(w, "PULL");
		if ((w[0] == 'v' || w[0] == 'V') && tag_number(w + 1, &a, &end)) {
			if (*end)
				continue;   /* "v2-fixed" and the like: no version word */
			/* v0, v-1 or v1000000: no version; read as 1 it would be tested as another series */
			if (a > 0 && a <= SUBJECT_MAX)
				s->version = (int)a;
			else
				s->malformed = true;
		} else if (tag_number(w, &a, &end)) {
			if (*end != '/' || !tag_number(end + 1, &b, &end) || *end)
				continue;
			if (a >= 0 && b > 0 && a <= b && b <= SUBJECT_MAX) {
				s->number = (int)a;
				s->total = (int)b;
			} else {
				s->malformed = true;
			}
		}
	}
}

bool pk_subject_is_cover(const struct pk_subject *s)
{
	return s->patch && !s->reply && !s->pull && !s->malformed && s->number == 0 && s->total > 1;
}

void pk_subject_parse(struct pk_subject *out, const char *subject)
{
	struct pk_subject s = { .version = 1, .number = 1, .total = 1 };
	const char *p = subject ? subject : "";
	size_t n;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if ((n = reply_prefix(p))) {
			s.reply = true;
			p += n;
			continue;
		}
		if (*p == '[') {
			const char *close = strchr(p, ']');
			if (!close)
				break;
			g_autofree char *tag = g_strndup(p + 1, (gsize)(close - p - 1));
			parse_tag(&s, tag);
			p = close + 1;
			continue;
		}
		break;
	}
	{
		g_autofree char *title = g_strstrip(g_strdup(p));
		s.title = g_utf8_strdown(title, -1);
	}
	*out = s;
}

void pk_subject_clear(struct pk_subject *s)
{
	g_free(s->title);
	s->title = NULL;
}

char *pk_subject_strip_tags(const char *subject)
{
	const char *p = subject ? subject : "";

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '[' || !strchr(p, ']'))
			break;
		p = strchr(p, ']') + 1;
	}
	return g_strdup(p);
}

static bool is_bot(const char *addr, const struct pk_series_guard *g)
{
	for (const char *const *b = g ? g->bot_addrs : NULL; addr && b && *b; b++)
		if (!g_ascii_strcasecmp(addr, *b))
			return true;
	return false;
}

enum pk_series_kind pk_series_classify(struct pk_series_mail *m, const struct pk_series_guard *guard,
				       const char **out_reason)
{
	struct pk_subject s;
	enum pk_series_kind kind = PK_SERIES_SKIP;
	const char *why = NULL;

	/* the loop guard comes first: nothing else about our own mail matters */
	if (m->bot_header || is_bot(m->from_addr, guard)) {
		*out_reason = "our own mail (loop guard)";
		return PK_SERIES_SKIP;
	}
	pk_subject_parse(&s, m->subject);
	m->version = s.version;
	m->number = s.number;
	m->total = s.total;
	if (!m->message_id || !*m->message_id)
		why = "no Message-ID";
	else if (m->auto_submitted)
		why = "auto-submitted (RFC 3834)";
	else if (s.reply)
		why = "a reply";
	else if (s.pull)
		why = "a pull request";
	else if (s.malformed && s.patch)
		why = "a malformed series number or version (n/m with n over m, m 0, a sign, or m "
		      "over 9999; a version 0, signed or over 9999)";
	else if (pk_subject_is_cover(&s))
		kind = PK_SERIES_COVER;
	else if (!m->has_patch)
		why = "no patch in it";
	else if (s.number == 0)
		why = "a patch numbered 0";
	else
		kind = PK_SERIES_PATCH;
	pk_subject_clear(&s);
	*out_reason = kind == PK_SERIES_SKIP ? why : NULL;
	return kind;
}

void pk_series_free(struct pk_series *s)
{
	if (!s)
		return;
	if (s->patches)
		g_ptr_array_unref(s->patches);
	g_free(s->subject);
	g_free(s->key);
	g_free(s);
}

/* Union-find over mail indexes. */
static guint uf_find(guint *parent, guint i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

static void uf_union(guint *parent, guint a, guint b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a != b)
		parent[MAX(a, b)] = MIN(a, b);   /* the oldest mail names the set */
}

static bool same_series(const struct pk_series_mail *a, const struct pk_series_mail *b)
{
	return a->total > 1 && a->version == b->version && a->total == b->total &&
	       !g_strcmp0(a->from_addr, b->from_addr);
}

static int by_number(gconstpointer a, gconstpointer b)
{
	const struct pk_series_mail *x = *(struct pk_series_mail *const *)a;
	const struct pk_series_mail *y = *(struct pk_series_mail *const *)b;

	return x->number - y->number;
}

static struct pk_series *series_from(GPtrArray *members)
{
	struct pk_series *s = g_new0(struct pk_series, 1);
	struct pk_series_mail *first;
	struct pk_subject subj;

	s->patches = g_ptr_array_new();
	for (guint i = 0; i < members->len; i++) {
		struct pk_series_mail *m = members->pdata[i];
		bool taken = false;

		s->last_received = MAX(s->last_received, m->received);
		if (m->number == 0) {
			if (!s->cover)
				s->cover = m;
			continue;
		}
		for (guint j = 0; j < s->patches->len; j++)
			taken |= ((struct pk_series_mail *)s->patches->pdata[j])->number == m->number;
		if (!taken)
			g_ptr_array_add(s->patches, m);
	}
	g_ptr_array_sort(s->patches, by_number);
	first = s->cover ? s->cover : s->patches->len ? s->patches->pdata[0] : members->pdata[0];
	s->version = first->version;
	s->total = first->total;
	for (guint i = 0; i < s->patches->len; i++)
		if (((struct pk_series_mail *)s->patches->pdata[i])->number == (int)s->prefix + 1)
			s->prefix++;
	s->complete = s->prefix == (unsigned)s->total;
	s->subject = g_strdup(first->subject);
	pk_subject_parse(&subj, first->subject);
	s->key = g_strdup_printf("%s\n%s", first->from_addr ? first->from_addr : "", subj.title);
	pk_subject_clear(&subj);
	return s;
}

void pk_series_group(GPtrArray **out, GPtrArray *mails)
{
	g_autoptr(GHashTable) by_id = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree guint *parent = g_new(guint, mails->len + 1);
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	GPtrArray *series = g_ptr_array_new_with_free_func((GDestroyNotify)pk_series_free);
	g_autofree int *set_of = g_new(int, mails->len + 1);

	for (guint i = 0; i < mails->len; i++) {
		const struct pk_series_mail *m = mails->pdata[i];
		parent[i] = i;
		if (m->message_id && !g_hash_table_contains(by_id, m->message_id))
			g_hash_table_insert(by_id, (gpointer)m->message_id, GUINT_TO_POINTER(i + 1));
	}
	for (guint i = 0; i < mails->len; i++) {
		const struct pk_series_mail *m = mails->pdata[i];
		gpointer hit;

		if (m->in_reply_to && (hit = g_hash_table_lookup(by_id, m->in_reply_to)) &&
		    same_series(m, mails->pdata[GPOINTER_TO_UINT(hit) - 1]))
			uf_union(parent, i, GPOINTER_TO_UINT(hit) - 1);
		for (const char *const *r = m->refs; r && *r; r++)
			if ((hit = g_hash_table_lookup(by_id, *r)) &&
			    same_series(m, mails->pdata[GPOINTER_TO_UINT(hit) - 1]))
				uf_union(parent, i, GPOINTER_TO_UINT(hit) - 1);
	}
	/* sets in the order of their oldest mail */
	for (guint i = 0; i < mails->len; i++) {
		guint root = uf_find(parent, i);

		if (root == i) {
			set_of[i] = (int)sets->len;
			g_ptr_array_add(sets, g_ptr_array_new());
		}
		g_ptr_array_add(sets->pdata[set_of[root]], mails->pdata[i]);
	}
	for (guint i = 0; i < sets->len; i++)
		g_ptr_array_add(series, series_from(sets->pdata[i]));
	*out = series;
}
