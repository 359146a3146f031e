/* kmsg.c - capture stream, /dev/kmsg and printk index parsers; see kmsg.h. */
#include "analysis/kmsg.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FRAME (1u << 20) /* the guest's frames are <= 64 KiB; more is garbage */

void pk_record_free(struct pk_record *rec)
{
	if (!rec)
		return;
	g_free(rec->caller);
	g_free(rec->text);
	if (rec->dict)
		g_ptr_array_unref(rec->dict);
	g_free(rec);
}

void pk_index_entry_free(struct pk_index_entry *entry)
{
	if (!entry)
		return;
	g_free(entry->file);
	g_free(entry->func);
	g_free(entry->format);
	g_free(entry);
}

void pk_capture_free(struct pk_capture *cap)
{
	if (!cap)
		return;
	g_ptr_array_unref(cap->records);
	g_ptr_array_unref(cap->index);
	g_string_free(cap->problems, TRUE);
	g_free(cap);
}

const char *pk_level_name(int level)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warn", "notice", "info", "debug" };

	return level >= 0 && level < 8 ? names[level] : "cont";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo /dev/kmsg's escaping: the kernel writes bytes < 0x20, >= 0x7f and '\' as \xNN. */
static char *kmsg_unescape(const char *s, size_t len)
{
	GString *out = g_string_sized_new(len);

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x') {
			int hi = hexval(s[i + 2]), lo = hexval(s[i + 3]);

			if (hi >= 0 && lo >= 0 && (hi || lo)) {
				g_string_append_c(out, (char)(hi * 16 + lo));
				i += 3;
				continue;
			}
		}
		if (s[i] != '\0')
			g_string_append_c(out, s[i]);
	}
	return g_string_free(out, FALSE);
}

static bool parse_u64(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

struct pk_record *pk_record_parse(const char *buf, size_t len, char **why)
{
	const char *end = buf + len, *semi, *nl, *field, *p;
	struct pk_record *rec;
	uint64_t prio, seq, ts;
	int nfield = 0;

	semi = memchr(buf, ';', len);
	if (!semi) {
		*why = g_strdup("no ';' between prefix and text");
		return NULL;
	}
	rec = g_new0(struct pk_record, 1);
	rec->dict = g_ptr_array_new_with_free_func(g_free);
	/* prefix: prio,seq,ts_usec,flags[,key=value...] */
	for (field = p = buf; p <= semi; p++) {
		if (p != semi && *p != ',')
			continue;
		switch (nfield++) {
		case 0:
			if (!parse_u64(field, p, &prio) || prio > 1023)
				goto bad;
			rec->level = (int)(prio & 7);
			rec->facility = (int)(prio >> 3);
			break;
		case 1:
			if (!parse_u64(field, p, &seq))
				goto bad;
			rec->seq = seq;
			break;
		case 2:
			if (!parse_u64(field, p, &ts))
				goto bad;
			rec->ts_usec = ts;
			break;
		case 3:
			rec->cont = memchr(field, 'c', (size_t)(p - field)) != NULL;
			break;
		default:
			if (p - field > 7 && memcmp(field, "caller=", 7) == 0) {
				g_free(rec->caller);   /* a second caller= wins, not leaks */
				rec->caller = g_strndup(field + 7, (size_t)(p - field - 7));
			}
			break;
		}
		field = p + 1;
	}
	if (nfield < 4)
		goto bad;
	p = semi + 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	rec->text = kmsg_unescape(p, (size_t)((nl ? nl : end) - p));
	/* dictionary: continuation lines that start with a space */
	while (nl && nl + 1 < end && nl[1] == ' ') {
		const char *s = nl + 2;

		nl = memchr(s, '\n', (size_t)(end - s));
		g_ptr_array_add(rec->dict, kmsg_unescape(s, (size_t)((nl ? nl : end) - s)));
	}
	return rec;
bad:
	*why = g_strdup_printf("bad record prefix '%.*s'", (int)MIN(semi - buf, 60), buf);
	pk_record_free(rec);
	return NULL;
}

/* Undo seq_escape_str(ESCAPE_ANY | ESCAPE_NAP): \n \t \" \\ \ooo and friends. */
static char *index_unescape(const char *s, const char *end)
{
	GString *out = g_string_sized_new((gsize)(end - s));

	while (s < end) {
		char c = *s++;

		if (c != '\\' || s == end) {
			g_string_append_c(out, c);
			continue;
		}
		c = *s++;
		switch (c) {
		case 'n': g_string_append_c(out, '\n'); break;
		case 't': g_string_append_c(out, '\t'); break;
		case 'r': g_string_append_c(out, '\r'); break;
		case 'v': g_string_append_c(out, '\v'); break;
		case 'f': g_string_append_c(out, '\f'); break;
		case 'a': g_string_append_c(out, '\a'); break;
		case 'e': g_string_append_c(out, '\033'); break;
		case '0': case '1': case '2': case '3': {
			int v = c - '0', n = 1;

			while (n < 3 && s < end && *s >= '0' && *s <= '7') {
				v = v * 8 + (*s++ - '0');
				n++;
			}
			if (v)
				g_string_append_c(out, (char)v);
			break;
		}
		default: g_string_append_c(out, c); break; /* \" \\ */
		}
	}
	return g_string_free(out, FALSE);
}

/* One index line: <6> init/main.c:123 start_kernel "format\n" */
static struct pk_index_entry *index_line_parse(const char *s, const char *end)
{
	struct pk_index_entry e = { .level = -1 };
	const char *p, *colon, *sp, *q;
	char *num_end;
	long line;

	if (s == end || *s != '<' || !(p = memchr(s, '>', (size_t)(end - s))))
		return NULL;
	if (s[1] == 'c') {
		e.cont = true;
	} else if (p - s == 3 && s[1] == '-' && s[2] == '1') {
		/* "<-1>": printk() without a KERN_ level, printed at the default level */
	} else {
		if (s[1] < '0' || s[1] > '7')
			return NULL;
		e.level = s[1] - '0';
		e.cont = p - s >= 4 && s[2] == ',' && s[3] == 'c';
	}
	p++;
	if (p >= end || *p++ != ' ')
		return NULL;
	sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp)
		return NULL;
	colon = g_strrstr_len(p, sp - p, ":");
	if (!colon)
		return NULL;
	{
		g_autofree char *num = g_strndup(colon + 1, (gsize)(sp - colon - 1));

		line = strtol(num, &num_end, 10);
		if (*num == '\0' || *num_end != '\0' || line < 0 || line > 10000000)
			return NULL;
	}
	q = memchr(sp + 1, ' ', (size_t)(end - sp - 1));
	if (!q || q + 2 > end || q[1] != '"' || end[-1] != '"' || end - q < 3)
		return NULL;
	{
		struct pk_index_entry *out = g_new0(struct pk_index_entry, 1);

		*out = e;
		out->file = g_strndup(p, (gsize)(colon - p));
		out->line = (int)line;
		out->func = g_strndup(sp + 1, (gsize)(q - sp - 1));
		out->format = index_unescape(q + 2, end - 1);
		return out;
	}
}

void pk_index_parse(GPtrArray *out, const char *text, size_t len, GString *problems)
{
	const char *s = text, *end = text + len;
	unsigned lineno = 0, bad = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl ? nl : end;
		struct pk_index_entry *e;

		lineno++;
		if (eol > s && *s != '#') {
			e = index_line_parse(s, eol);
			if (e)
				g_ptr_array_add(out, e);
			else if (bad++ < 5)
				g_string_append_printf(problems, "printk index line %u unreadable: %.*s\n",
						       lineno, (int)MIN(eol - s, 80), s);
		}
		s = eol + 1;
	}
	if (bad > 5)
		g_string_append_printf(problems, "printk index: %u unreadable lines in all\n", bad);
}

/* Read "@T <n>\n" at *pos; returns the type or 0 when no whole header is there. */
static char frame_header(const char *buf, size_t len, size_t *pos, uint64_t *n1, uint64_t *n2,
			 bool *two)
{
	const char *s = buf + *pos, *end = buf + len, *nl, *sp;
	char type;

	if (end - s < 4 || s[0] != '@')
		return 0;
	nl = memchr(s, '\n', (size_t)MIN(end - s, 64));
	if (!nl || nl - s < 3)   /* "@T " at least before it ("@\n ..." made the count below negative) */
		return 0;
	type = s[1];
	if (s[2] != ' ')
		return 0;
	sp = memchr(s + 3, ' ', (size_t)(nl - s - 3));
	*two = sp != NULL;
	if (!parse_u64(s + 3, sp ? sp : nl, n1))
		return 0;
	if (sp && !parse_u64(sp + 1, nl, n2))
		return 0;
	*pos = (size_t)(nl + 1 - buf);
	return type;
}

struct pk_capture *pk_capture_parse(const char *buf, size_t len)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);
	g_autoptr(GString) index_text = g_string_new(NULL);
	const char *start;
	size_t pos;

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);

	/* Anything before the header (firmware noise) is skipped. */
	start = g_strstr_len(buf, (gssize)len, "@PKB 1\n");
	if (!start) {
		g_string_append(cap->problems, "no capture header: the guest init never ran\n");
		return cap;
	}
	pos = (size_t)(start - buf) + 7;
	while (pos < len) {
		uint64_t n1 = 0, n2 = 0;
		bool two = false;
		size_t at = pos;
		char type = frame_header(buf, len, &pos, &n1, &n2, &two);

		if (type == 'E') {
			cap->complete = two && n1 == cap->records->len && n2 == index_text->len;
			if (!cap->complete)
				g_string_append_printf(cap->problems,
						       "trailer counts %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
						       " do not match what arrived (%u/%zu)\n",
						       n1, n2, cap->records->len, index_text->len);
			break;
		}
		if (type == 'L') {
			cap->lost += (unsigned)MIN(n1, G_MAXUINT);
			continue;
		}
		if (!type || two || n1 > MAX_FRAME || n1 + 1 > len - pos) {
			g_string_append_printf(cap->problems, "capture cut or garbled at byte %zu\n", at);
			break;
		}
		if (type == 'K') {
			char *why = NULL;
			struct pk_record *rec = pk_record_parse(buf + pos, (size_t)n1, &why);

			if (rec) {
				g_ptr_array_add(cap->records, rec);
			} else {
				g_string_append_printf(cap->problems, "record at byte %zu: %s\n", at, why);
				g_free(why);
			}
		} else if (type == 'I') {
			g_string_append_len(index_text, buf + pos, (gssize)n1);
		} else if (type == 'X') {
			g_string_append_printf(cap->problems, "guest init: %.*s\n", (int)n1, buf + pos);
		}
		pos += (size_t)n1 + 1;
	}
	pk_index_parse(cap->index, index_text->str, index_text->len, cap->problems);
	return cap;
}
