/*
 * rules-re.c - RE2-syntax patterns and kernel formats as automata, and
 * whether a pattern matches some text a format prints (rules-private.h).
 *
 * Why an engine of our own: a rule such as "Killed process \d+ (.+)
 * total-vm:\d+kB" never matches the index format "%s: Killed process %d
 * (%s) total-vm:%lukB" as a string (\d+ is not "%d"), and filling the
 * conversions with sample values guesses wrong as soon as a rule names a
 * value ("task docker:\w+ blocked" against "task %s:%d blocked").  Both
 * are regular languages, so the exact question, "is there a text both
 * accept?", is a walk over pairs of states.  GRegex (PCRE) cannot answer
 * it, and its syntax is not RE2's anyway.
 *
 * Semantics are RE2's, over bytes: '.' is any byte but a newline (any
 * byte with (?s)); ^ and $ are the text's ends (lines with (?m)); \b and
 * \B look at ASCII word bytes.  Refused with a clear error, as RE2
 * refuses them or as they have no meaning here: backreferences,
 * lookaround, \p Unicode classes, \Z, repetitions above 1000.  A
 * non-ASCII character in a class is taken as its bytes, each on its own:
 * a rule can only match more with it, never less.
 */
#include "analysis/rules-private.h"
#include "base/util.h"

#include <string.h>

#define RE_MAX_STATES 200000      /* one pattern's automaton: \w{1000}{1000} must not eat the memory */
#define RE_MAX_REPEAT 1000       /* RE2's own limit on {n,m} */
#define RE_MAX_DEPTH 200         /* nested groups */
#define RE_MAX_VISITED (4u << 20) /* joint states of one search (rules-private.h) */
#define RE_MAX_SUBJECT 100000    /* bytes of a format or text: its states must fit 19 bits of a key */

/* ---- byte sets ---- */

typedef struct {
	guint8 b[32];
} byteset;

static void set_add(byteset *s, unsigned c)
{
	s->b[c >> 3] |= (guint8)(1u << (c & 7));
}

static bool set_has(const byteset *s, unsigned c)
{
	return s->b[c >> 3] & (1u << (c & 7));
}

static void set_range(byteset *s, unsigned lo, unsigned hi)
{
	for (unsigned c = lo; c <= hi; c++)
		set_add(s, c);
}

static void set_or(byteset *s, const byteset *o)
{
	for (int i = 0; i < 32; i++)
		s->b[i] |= o->b[i];
}

static void set_invert(byteset *s)
{
	for (int i = 0; i < 32; i++)
		s->b[i] = (guint8)~s->b[i];
}

static bool sets_meet(const byteset *a, const byteset *b, const byteset *c)
{
	for (int i = 0; i < 32; i++)
		if (a->b[i] & b->b[i] & c->b[i])
			return true;
	return false;
}

/* The other case of every ASCII letter in s. */
static void set_fold(byteset *s)
{
	for (unsigned c = 'a'; c <= 'z'; c++) {
		unsigned u = c - 'a' + 'A';

		if (set_has(s, c) || set_has(s, u)) {
			set_add(s, c);
			set_add(s, u);
		}
	}
}

static bool is_word(unsigned c)
{
	return g_ascii_isalnum((int)c) || c == '_';
}

/* ---- the parse tree ---- */

enum node_kind { N_EMPTY, N_SET, N_CAT, N_ALT, N_REP, N_ASSERT };

/* What a byte of an automaton is, besides the bytes it takes. */
enum {
	ST_OWN = 2,       /* a subject's: the format's own text, not what a conversion prints */
	ST_LITERAL = 4,   /* a rule's: a character it names (a set of one byte, or two with (?i)) */
};

/*
 * How many letters or digits a rule names must fall on a format's own
 * text for the rule to match the format (fewer when the rule names
 * fewer): "(.+)" or "%s" swallowing the other's text proves nothing, and
 * one or two letters meeting by chance ("at", "in") neither.
 */
#define RE_OWN_NEEDED 3

/* Zero-width assertions. */
enum re_assert {
	A_TEXT_START,   /* \A, ^ */
	A_LINE_START,   /* ^ with (?m) */
	A_TEXT_END,     /* \z, $ */
	A_LINE_END,     /* $ with (?m) */
	A_WORD,         /* \b */
	A_NOT_WORD,     /* \B */
};

struct node {
	enum node_kind kind;
	byteset set;            /* N_SET */
	guint8 flags;           /* N_SET: ST_OWN (below) */
	GPtrArray *kids;        /* N_CAT, N_ALT: struct node*, owned; N_REP: the one repeated */
	int min, max;           /* N_REP: max -1 for no bound */
	enum re_assert assert;  /* N_ASSERT */
};

static void node_free(gpointer p)
{
	struct node *n = p;

	if (!n)
		return;
	if (n->kids)
		g_ptr_array_unref(n->kids);
	g_free(n);
}
typedef struct node node;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(node, node_free)

static struct node *node_new(enum node_kind kind)
{
	struct node *n = g_new0(struct node, 1);

	n->kind = kind;
	if (kind == N_CAT || kind == N_ALT || kind == N_REP)
		n->kids = g_ptr_array_new_with_free_func(node_free);
	return n;
}

static struct node *node_set(const byteset *s)
{
	struct node *n = node_new(N_SET);

	n->set = *s;
	return n;
}

static struct node *node_byte(unsigned c)
{
	byteset s = { { 0 } };

	set_add(&s, c);
	return node_set(&s);
}

static struct node *node_rep(struct node *kid, int min, int max)
{
	struct node *n = node_new(N_REP);

	g_ptr_array_add(n->kids, kid);
	n->min = min;
	n->max = max;
	return n;
}

static struct node *node_oneof(const char *chars)
{
	byteset s = { { 0 } };

	for (; *chars; chars++)
		set_add(&s, (unsigned char)*chars);
	return node_set(&s);
}

static struct node *node_lit(const char *s)
{
	struct node *n = node_new(N_CAT);

	for (; *s; s++)
		g_ptr_array_add(n->kids, node_byte((unsigned char)*s));
	return n;
}

/* ---- the parser ---- */

enum { F_FOLD = 1, F_DOTNL = 2, F_MULTILINE = 4 };

struct parser {
	const char *start, *p, *end;
	unsigned flags;
	unsigned depth;
	GError **err;
	bool failed;
};

static struct node *fail_at(struct parser *ps, const char *at, const char *what)
{
	if (!ps->failed)
		pk_error(ps->err, PK_ERROR_INPUT, "%s at offset %td", what, at - ps->start);
	ps->failed = true;
	return NULL;
}

static void class_word(byteset *s)
{
	set_range(s, '0', '9');
	set_range(s, 'A', 'Z');
	set_range(s, 'a', 'z');
	set_add(s, '_');
}

/* \d \s \w and their capitals into s; false when c is none of them. */
static bool perl_class(byteset *s, char c)
{
	byteset t = { { 0 } };

	switch (g_ascii_tolower(c)) {
	case 'd': set_range(&t, '0', '9'); break;
	case 's': set_add(&t, ' '); set_range(&t, '\t', '\n'); set_range(&t, '\f', '\r'); break;
	case 'w': class_word(&t); break;
	default: return false;
	}
	if (g_ascii_isupper(c))
		set_invert(&t);
	set_or(s, &t);
	return true;
}

/* UTF-8 of code point cp into out (up to 4 bytes): how many. */
static int utf8_encode(guint32 cp, guint8 *out)
{
	return g_unichar_to_utf8(cp, (char *)out);
}

/*
 * One escaped character (ps->p just after the backslash) that stands for
 * bytes: \n \t \x41 \x{263a} \101 \. ...; into out (up to 4 bytes), how
 * many, or -1 on error (set).  0 when it is no such escape (a class or an
 * assertion): the caller looks at it.
 */
static int escape_bytes(struct parser *ps, guint8 *out)
{
	const char *at = ps->p - 1;
	char c;

	if (ps->p >= ps->end)
		return fail_at(ps, at, "trailing backslash at end of expression"), -1;
	c = *ps->p;
	switch (c) {
	case 'n': ps->p++; out[0] = '\n'; return 1;
	case 't': ps->p++; out[0] = '\t'; return 1;
	case 'r': ps->p++; out[0] = '\r'; return 1;
	case 'f': ps->p++; out[0] = '\f'; return 1;
	case 'v': ps->p++; out[0] = '\v'; return 1;
	case 'a': ps->p++; out[0] = '\a'; return 1;
	case 'x': {
		guint32 cp = 0;

		ps->p++;
		if (ps->p < ps->end && *ps->p == '{') {
			const char *q = ++ps->p;

			while (ps->p < ps->end && g_ascii_isxdigit(*ps->p) && ps->p - q < 8)
				cp = cp * 16 + (guint32)g_ascii_xdigit_value(*ps->p++);
			if (ps->p == q || ps->p >= ps->end || *ps->p != '}' || cp > 0x10ffff)
				return fail_at(ps, at, "invalid escape sequence \\x{...}"), -1;
			ps->p++;
		} else {
			for (int i = 0; i < 2; i++) {
				if (ps->p >= ps->end || !g_ascii_isxdigit(*ps->p))
					return fail_at(ps, at, "invalid escape sequence \\x: two hex digits expected"), -1;
				cp = cp * 16 + (guint32)g_ascii_xdigit_value(*ps->p++);
			}
		}
		if (cp < 0x80) {
			out[0] = (guint8)cp;
			return 1;
		}
		return utf8_encode(cp, out);
	}
	case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
		guint32 v = 0;
		int n = 0;

		/* RE2: \1..\7 alone would be a backreference, which it does not have */
		if (c != '0' && (ps->p + 1 >= ps->end || ps->p[1] < '0' || ps->p[1] > '7'))
			return fail_at(ps, at, "backreferences are not RE2 syntax"), -1;
		while (n < 3 && ps->p < ps->end && *ps->p >= '0' && *ps->p <= '7')
			v = v * 8 + (guint32)(*ps->p++ - '0'), n++;
		if (v < 0x80) {
			out[0] = (guint8)v;
			return 1;
		}
		return utf8_encode(v, out);
	}
	case '8': case '9':
		return fail_at(ps, at, "backreferences are not RE2 syntax"), -1;
	case 'p': case 'P':
		return fail_at(ps, at, "Unicode classes (\\p, \\P) are not supported"), -1;
	default:
		if (c > 0 && c < 0x7f && !g_ascii_isalnum(c)) {
			ps->p++;
			out[0] = (guint8)c;
			return 1;
		}
		return 0;
	}
}

static const struct {
	const char *name;
	const char *ranges;   /* pairs lo hi */
} posix_classes[] = {
	{ "alnum", "09AZaz" }, { "alpha", "AZaz" }, { "ascii", "\x01\x7f" }, { "blank", "\t\t  " },
	{ "cntrl", "\x01\x1f\x7f\x7f" }, { "digit", "09" }, { "graph", "!~" }, { "lower", "az" },
	{ "print", " ~" }, { "punct", "!/:@[`{~" }, { "space", "\t\r  " }, { "upper", "AZ" },
	{ "word", "09AZaz__" }, { "xdigit", "09AFaf" },
};

/* "[:alpha:]" at ps->p: into s, true; false (nothing read) when it is not one. */
static bool posix_class(struct parser *ps, byteset *s)
{
	const char *q = ps->p + 2, *close;
	bool neg = false;

	if (ps->end - ps->p < 4 || ps->p[0] != '[' || ps->p[1] != ':')
		return false;
	if (*q == '^')
		neg = true, q++;
	close = g_strstr_len(q, ps->end - q, ":]");
	if (!close)
		return false;
	for (size_t i = 0; i < G_N_ELEMENTS(posix_classes); i++) {
		byteset t = { { 0 } };

		if (strlen(posix_classes[i].name) != (size_t)(close - q) ||
		    strncmp(posix_classes[i].name, q, (size_t)(close - q)))
			continue;
		for (const char *r = posix_classes[i].ranges; *r; r += 2)
			set_range(&t, (unsigned char)r[0], (unsigned char)r[1]);
		if (!strcmp(posix_classes[i].name, "ascii"))
			set_add(&t, 0);
		if (neg)
			set_invert(&t);
		set_or(s, &t);
		ps->p = close + 2;
		return true;
	}
	fail_at(ps, ps->p, "invalid character class range: unknown [:name:]");
	return true;
}

/* One class member's byte (a literal or an escape), or -1; *cls set when it was \d, \w... */
static int class_byte(struct parser *ps, byteset *s, bool *cls)
{
	guint8 b[4];
	int n;

	*cls = false;
	if (*ps->p != '\\')
		return (unsigned char)*ps->p++;
	ps->p++;
	if (ps->p < ps->end && perl_class(s, *ps->p)) {
		ps->p++;
		*cls = true;
		return 0;
	}
	if ((n = escape_bytes(ps, b)) < 0)
		return -1;
	if (n == 0)
		return fail_at(ps, ps->p - 1, "invalid escape sequence in a class"), -1;
	/* a multi-byte character is its bytes, each on its own (see the head of the file) */
	for (int i = 0; i + 1 < n; i++)
		set_add(s, b[i]);
	return b[n - 1];
}

/* A bracketed class, ps->p just after '['. */
static struct node *parse_class(struct parser *ps)
{
	const char *at = ps->p - 1;
	byteset s = { { 0 } };
	bool neg = false, first = true;

	if (ps->p < ps->end && *ps->p == '^')
		neg = true, ps->p++;
	for (;;) {
		bool cls;
		int lo, hi;

		if (ps->p >= ps->end)
			return fail_at(ps, at, "missing closing ]");
		if (*ps->p == ']' && !first)
			break;
		first = false;
		if (posix_class(ps, &s)) {
			if (ps->failed)
				return NULL;
			continue;
		}
		if ((lo = class_byte(ps, &s, &cls)) < 0)
			return NULL;
		if (cls)
			continue;
		if (ps->end - ps->p >= 2 && ps->p[0] == '-' && ps->p[1] != ']') {
			const char *r = ps->p - 1;

			ps->p++;
			if ((hi = class_byte(ps, &s, &cls)) < 0)
				return NULL;
			if (cls || hi < lo)
				return fail_at(ps, r, "invalid character class range");
			set_range(&s, (unsigned)lo, (unsigned)hi);
		} else {
			set_add(&s, (unsigned)lo);
		}
	}
	ps->p++;
	if (ps->flags & F_FOLD)
		set_fold(&s);
	if (neg)
		set_invert(&s);
	return node_set(&s);
}

static struct node *parse_alt(struct parser *ps);

/* "(?i)", "(?i:", "(?P<name>", "(?:" ..., ps->p just after "(?". */
static struct node *parse_group_ext(struct parser *ps, const char *at, bool *flags_only)
{
	unsigned flags = ps->flags;
	bool neg = false;

	*flags_only = false;
	if (ps->p < ps->end && (*ps->p == 'P' || *ps->p == '<')) {
		const char *name;

		if (*ps->p == 'P')
			ps->p++;
		if (ps->p < ps->end && (*ps->p == '=' || *ps->p == '!'))
			return fail_at(ps, at, "lookaround is not RE2 syntax");
		if (ps->p >= ps->end || *ps->p != '<')
			return fail_at(ps, at, "invalid named capture group");
		name = ++ps->p;
		while (ps->p < ps->end && (g_ascii_isalnum(*ps->p) || *ps->p == '_'))
			ps->p++;
		if (ps->p == name || ps->p >= ps->end || *ps->p != '>')
			return fail_at(ps, at, "invalid named capture group");
		ps->p++;
		return node_new(N_EMPTY);   /* the group's body follows as a plain group */
	}
	if (ps->p < ps->end && (*ps->p == '=' || *ps->p == '!'))
		return fail_at(ps, at, "lookaround is not RE2 syntax");
	for (; ps->p < ps->end; ps->p++) {
		unsigned bit;

		switch (*ps->p) {
		case 'i': bit = F_FOLD; break;
		case 's': bit = F_DOTNL; break;
		case 'm': bit = F_MULTILINE; break;
		case 'U': bit = 0; break;    /* ungreedy: what matches is the same */
		case '-':
			if (neg)
				return fail_at(ps, at, "invalid or unsupported Perl syntax");
			neg = true;
			continue;
		case ')':
			ps->p++;
			ps->flags = flags;
			*flags_only = true;
			return node_new(N_EMPTY);
		case ':':
			ps->p++;
			ps->flags = flags;
			return node_new(N_EMPTY);
		default:
			return fail_at(ps, at, "invalid or unsupported Perl syntax");
		}
		flags = neg ? flags & ~bit : flags | bit;
	}
	return fail_at(ps, at, "missing closing )");
}

/* A group, ps->p just after '('. */
static struct node *parse_group(struct parser *ps)
{
	const char *at = ps->p - 1;
	unsigned saved = ps->flags;
	g_autoptr(node) body = NULL;

	if (ps->p < ps->end && *ps->p == '?') {
		bool flags_only;
		g_autoptr(node) head = NULL;

		ps->p++;
		if (!(head = parse_group_ext(ps, at, &flags_only)))
			return NULL;
		if (flags_only)
			return g_steal_pointer(&head);   /* (?i): for the rest of the enclosing group */
	}
	if (++ps->depth > RE_MAX_DEPTH)
		return fail_at(ps, at, "expression nests too deeply");
	body = parse_alt(ps);
	ps->depth--;
	if (!body)
		return NULL;
	if (ps->p >= ps->end || *ps->p != ')')
		return fail_at(ps, at, "missing closing )");
	ps->p++;
	ps->flags = saved;
	return g_steal_pointer(&body);
}

static struct node *node_assert(enum re_assert a)
{
	struct node *n = node_new(N_ASSERT);

	n->assert = a;
	return n;
}

/* One atom: a character, class, group, assertion; NULL on error. */
static struct node *parse_atom(struct parser *ps)
{
	char c = *ps->p++;
	byteset s = { { 0 } };

	switch (c) {
	case '(':
		return parse_group(ps);
	case ')':
		return fail_at(ps, ps->p - 1, "unexpected )");
	case '[':
		return parse_class(ps);
	case '.':
		set_range(&s, 0, 255);
		if (!(ps->flags & F_DOTNL))
			s.b['\n' >> 3] &= (guint8)~(1u << ('\n' & 7));
		return node_set(&s);
	case '^':
		return node_assert(ps->flags & F_MULTILINE ? A_LINE_START : A_TEXT_START);
	case '$':
		return node_assert(ps->flags & F_MULTILINE ? A_LINE_END : A_TEXT_END);
	case '*': case '+': case '?':
		return fail_at(ps, ps->p - 1, "missing argument to repetition operator");
	case '\\': {
		guint8 b[4];
		int n;

		if (ps->p < ps->end) {
			switch (*ps->p) {
			case 'b': ps->p++; return node_assert(A_WORD);
			case 'B': ps->p++; return node_assert(A_NOT_WORD);
			case 'A': ps->p++; return node_assert(A_TEXT_START);
			case 'z': ps->p++; return node_assert(A_TEXT_END);
			case 'C': ps->p++; set_range(&s, 0, 255); return node_set(&s);
			case 'Z': return fail_at(ps, ps->p - 1, "\\Z is not RE2 syntax (\\z is)");
			case 'Q': {
				const char *q = ++ps->p, *e = g_strstr_len(q, ps->end - q, "\\E");
				struct node *cat = node_new(N_CAT);

				for (const char *r = q; r < (e ? e : ps->end); r++) {
					struct node *b1 = node_byte((unsigned char)*r);

					if (ps->flags & F_FOLD)
						set_fold(&b1->set);
					g_ptr_array_add(cat->kids, b1);
				}
				ps->p = e ? e + 2 : ps->end;
				return cat;
			}
			}
			if (perl_class(&s, *ps->p)) {
				ps->p++;
				return node_set(&s);
			}
		}
		if ((n = escape_bytes(ps, b)) < 0)
			return NULL;
		if (n == 0)
			return fail_at(ps, ps->p - 1, "invalid escape sequence");
		if (n == 1) {
			set_add(&s, b[0]);
			if (ps->flags & F_FOLD)
				set_fold(&s);
			return node_set(&s);
		}
		{
			struct node *cat = node_new(N_CAT);

			for (int i = 0; i < n; i++)
				g_ptr_array_add(cat->kids, node_byte(b[i]));
			return cat;
		}
	}
	default:
		set_add(&s, (unsigned char)c);
		if (ps->flags & F_FOLD)
			set_fold(&s);
		return node_set(&s);
	}
}

/* "{n}", "{n,}", "{n,m}" at ps->p: true with the bounds; false when it is a literal '{'. */
static bool parse_braces(struct parser *ps, int *min, int *max)
{
	const char *q = ps->p + 1;
	long lo = 0, hi;

	if (q >= ps->end || !g_ascii_isdigit(*q))
		return false;
	for (; q < ps->end && g_ascii_isdigit(*q); q++)
		lo = MIN(lo * 10 + (*q - '0'), 100000);
	hi = lo;
	if (q < ps->end && *q == ',') {
		q++;
		if (q < ps->end && g_ascii_isdigit(*q)) {
			for (hi = 0; q < ps->end && g_ascii_isdigit(*q); q++)
				hi = MIN(hi * 10 + (*q - '0'), 100000);
		} else {
			hi = -1;
		}
	}
	if (q >= ps->end || *q != '}')
		return false;
	*min = (int)lo;
	*max = (int)hi;
	ps->p = q + 1;
	return true;
}

/* A concatenation of atoms and their repetitions, up to '|', ')' or the end. */
static struct node *parse_cat(struct parser *ps)
{
	g_autoptr(node) cat = node_new(N_CAT);

	while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
		struct node *atom;
		const char *q = ps->p;
		int min, max;

		if (*ps->p == '{' && parse_braces(ps, &min, &max))
			return fail_at(ps, q, "missing argument to repetition operator");
		if (!(atom = parse_atom(ps)))
			return NULL;
		q = ps->p;
		if (q < ps->end && (*q == '*' || *q == '+' || *q == '?' || (*q == '{' && parse_braces(ps, &min, &max)))) {
			if (atom->kind == N_EMPTY || atom->kind == N_ASSERT) {
				node_free(atom);
				return fail_at(ps, q, "missing argument to repetition operator");
			}
			if (*q == '{') {
				if (min > RE_MAX_REPEAT || max > RE_MAX_REPEAT || (max >= 0 && max < min)) {
					node_free(atom);
					return fail_at(ps, q, "bad repetition operator (at most {1000})");
				}
			} else {
				min = *q == '+' ? 1 : 0;
				max = *q == '?' ? 1 : -1;
				ps->p++;
			}
			if (ps->p < ps->end && *ps->p == '?')
				ps->p++;   /* lazy: what matches is the same */
			atom = node_rep(atom, min, max);
			q = ps->p;
			if (q < ps->end && (*q == '*' || *q == '+' || *q == '?' || (*q == '{' && parse_braces(ps, &min, &max)))) {
				node_free(atom);
				return fail_at(ps, q, "bad repetition operator");
			}
		}
		g_ptr_array_add(cat->kids, atom);
	}
	return g_steal_pointer(&cat);
}

static struct node *parse_alt(struct parser *ps)
{
	g_autoptr(node) alt = node_new(N_ALT);

	for (;;) {
		struct node *cat = parse_cat(ps);

		if (!cat)
			return NULL;
		g_ptr_array_add(alt->kids, cat);
		if (ps->p >= ps->end || *ps->p != '|')
			break;
		ps->p++;
	}
	return g_steal_pointer(&alt);
}

/* ---- the automaton ---- */

enum re_op { OP_BYTE, OP_SPLIT, OP_ASSERT, OP_MATCH };

struct re_state {
	guint8 op;
	guint8 assert;     /* enum re_assert, OP_ASSERT */
	guint8 flags;      /* OP_BYTE: ST_OWN, ST_LITERAL */
	int out, out1;     /* next states (out1: OP_SPLIT's second) */
	guint set;         /* OP_BYTE: index into sets */
};

struct pk_re {
	GArray *states;    /* struct re_state */
	GArray *sets;      /* byteset */
	int start;
	unsigned own_needed;   /* a rule's: RE_OWN_NEEDED, or the letters and digits it names when fewer */
};

struct builder {
	struct pk_re *re;
	bool too_big;
};

static int state_add(struct builder *b, enum re_op op, int out, int out1)
{
	struct re_state s = { (guint8)op, 0, 0, out, out1, 0 };

	if (b->re->states->len >= RE_MAX_STATES) {
		b->too_big = true;
		return 0;
	}
	g_array_append_val(b->re->states, s);
	return (int)b->re->states->len - 1;
}

static struct re_state *state_at(struct builder *b, int i)
{
	return &g_array_index(b->re->states, struct re_state, i);
}

/* The states of n, leading to next: its first state (built back to front). */
static int build(struct builder *b, const struct node *n, int next)
{
	int s, last;

	if (b->too_big)
		return 0;
	switch (n->kind) {
	case N_EMPTY:
		return next;
	case N_SET:
		s = state_add(b, OP_BYTE, next, -1);
		if (!b->too_big) {
			unsigned bytes = 0;

			for (int i = 0; i < 32; i++)
				bytes += (unsigned)__builtin_popcount(n->set.b[i]);
			g_array_append_val(b->re->sets, n->set);
			state_at(b, s)->set = b->re->sets->len - 1;
			state_at(b, s)->flags = n->flags | (bytes <= 2 ? ST_LITERAL : 0);
		}
		return s;
	case N_ASSERT:
		s = state_add(b, OP_ASSERT, next, -1);
		if (!b->too_big)
			state_at(b, s)->assert = (guint8)n->assert;
		return s;
	case N_CAT:
		for (guint i = n->kids->len; i-- > 0;)
			next = build(b, n->kids->pdata[i], next);
		return next;
	case N_ALT:
		last = build(b, n->kids->pdata[n->kids->len - 1], next);
		for (guint i = n->kids->len - 1; i-- > 0;) {
			int first = build(b, n->kids->pdata[i], next);

			last = state_add(b, OP_SPLIT, first, last);
		}
		return last;
	case N_REP: {
		const struct node *kid = n->kids->pdata[0];

		if (n->max < 0) {
			/* the loop: a split that enters the body (which comes back to it) or leaves */
			s = state_add(b, OP_SPLIT, -1, next);
			if (b->too_big)
				return 0;
			{
				int body = build(b, kid, s);

				if (b->too_big)
					return 0;
				state_at(b, s)->out = body;
			}
			next = s;
		} else {
			for (int i = n->min; i < n->max && !b->too_big; i++) {
				int body = build(b, kid, next);

				next = state_add(b, OP_SPLIT, body, next);
			}
		}
		for (int i = 0; i < n->min && !b->too_big; i++)
			next = build(b, kid, next);
		return next;
	}
	}
	return next;
}

static struct pk_re *re_new(void)
{
	struct pk_re *re = g_new0(struct pk_re, 1);

	re->states = g_array_new(FALSE, FALSE, sizeof(struct re_state));
	re->sets = g_array_new(FALSE, FALSE, sizeof(byteset));
	return re;
}

void pk_re_free(struct pk_re *re)
{
	if (!re)
		return;
	g_array_unref(re->states);
	g_array_unref(re->sets);
	g_free(re);
}

/* n as an automaton ending in a match state; NULL when it grew too big. */
static struct pk_re *re_build(const struct node *n)
{
	struct builder b = { re_new(), false };
	int match = state_add(&b, OP_MATCH, -1, -1);

	b.re->start = build(&b, n, match);
	if (b.too_big) {
		pk_re_free(b.re);
		return NULL;
	}
	return b.re;
}

/* Any run of bytes, newlines included: how a search skips what comes before and after a match. */
static struct node *node_anything(void)
{
	byteset all;

	memset(&all, 0xff, sizeof(all));
	return node_rep(node_set(&all), 0, -1);
}

int pk_re_compile(struct pk_re **out, const char *pattern, gsize len, unsigned anchor, GError **err)
{
	struct parser ps = { pattern, pattern, pattern + len, 0, 0, err, false };
	g_autoptr(node) body = parse_alt(&ps);
	g_autoptr(node) whole = NULL;
	struct pk_re *re;

	if (!body)
		return -1;
	if (ps.p < ps.end) {
		fail_at(&ps, ps.p, "unexpected )");
		return -1;
	}
	whole = node_new(N_CAT);
	if (!(anchor & PK_RE_ANCHOR_START))
		g_ptr_array_add(whole->kids, node_anything());
	g_ptr_array_add(whole->kids, g_steal_pointer(&body));
	if (!(anchor & PK_RE_ANCHOR_END))
		g_ptr_array_add(whole->kids, node_anything());
	if (!(re = re_build(whole)))
		return pk_error(err, PK_ERROR_INPUT, "the expression is too large (over %d states)", RE_MAX_STATES);
	for (guint i = 0; i < re->states->len && re->own_needed < RE_OWN_NEEDED; i++) {
		const struct re_state *st = &g_array_index(re->states, struct re_state, i);
		const byteset *set = &g_array_index(re->sets, byteset, st->set);

		if (st->op != OP_BYTE || !(st->flags & ST_LITERAL))
			continue;
		for (unsigned c = 0; c < 256; c++)
			if (set_has(set, c) && is_word(c) && c != '_') {
				re->own_needed++;
				break;
			}
	}
	*out = re;
	return 0;
}

/* ---- kernel formats ---- */

static struct node *hole_digits(const char *extra, unsigned lo, unsigned hi)
{
	byteset s = { { 0 } };

	set_range(&s, lo, hi);
	for (; extra && *extra; extra++)
		set_add(&s, (unsigned char)*extra);
	return node_rep(node_set(&s), 1, -1);
}

static struct node *hole_text(void)
{
	byteset s;

	memset(&s, 0xff, sizeof(s));
	s.b['\n' >> 3] &= (guint8)~(1u << ('\n' & 7));
	return node_rep(node_set(&s), 0, -1);
}

static struct node *hole_hex(void)
{
	return hole_digits("abcdefABCDEF", '0', '9');
}

static struct node *alt_of(struct node *a, struct node *b)
{
	struct node *n = node_new(N_ALT);

	g_ptr_array_add(n->kids, a);
	g_ptr_array_add(n->kids, b);
	return n;
}

static struct node *cat_of(struct node *a, struct node *b)
{
	struct node *n = node_new(N_CAT);

	g_ptr_array_add(n->kids, a);
	g_ptr_array_add(n->kids, b);
	return n;
}

/* What a %p extension prints, by its first letter (vsprintf.c's pointer(); attribute.c alike). */
static struct node *hole_pointer(char ext)
{
	switch (ext) {
	case '\0': case 'K': {
		struct node *ptrval = node_new(N_CAT);
		byteset u = { { 0 } };

		set_add(&u, '_');
		g_ptr_array_add(ptrval->kids, node_lit("("));
		g_ptr_array_add(ptrval->kids, node_rep(node_set(&u), 0, -1));
		g_ptr_array_add(ptrval->kids, node_lit("ptrval"));
		g_ptr_array_add(ptrval->kids, node_rep(node_set(&u), 0, -1));
		g_ptr_array_add(ptrval->kids, node_lit(")"));
		return alt_of(alt_of(hole_hex(), ptrval), alt_of(node_lit("(null)"), node_lit("(efault)")));
	}
	case 'x':
		return hole_hex();
	case 'a':
		return cat_of(node_rep(node_lit("0x"), 0, 1), hole_hex());
	case 'R': case 'r':
		return cat_of(cat_of(node_lit("["), hole_text()), node_lit("]"));
	case 'b': {
		byteset s = { { 0 } };

		set_range(&s, '0', '9');
		set_range(&s, 'a', 'f');
		set_range(&s, 'A', 'F');
		set_add(&s, ',');
		set_add(&s, '-');
		return node_rep(node_set(&s), 0, -1);
	}
	case 'e':
		return cat_of(node_rep(node_lit("-"), 0, 1), hole_digits("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", '0', '9'));
	default:
		return hole_text();   /* %pS %ps %pOF %pV %pI4 %pM %pU ... */
	}
}

/*
 * One conversion (p just after the '%') into cat; where the format goes
 * on.  Flags, width, precision and length are read as vsprintf does; a
 * width pads with spaces on one side (zeros are digits anyway).
 */
static const char *format_conversion(struct node *cat, const char *p)
{
	bool minus = false, hash = false, width = false;
	struct node *core;
	byteset sp = { { 0 } };

	for (; *p && strchr("-+ #0", *p); p++) {
		minus |= *p == '-';
		hash |= *p == '#';
	}
	if (*p == '*')
		width = (p++, true);
	for (; g_ascii_isdigit(*p); p++)
		width = true;
	if (*p == '.')
		for (p++; *p == '*' || g_ascii_isdigit(*p); p++)
			;
	for (; *p && strchr("hlLqjzZt", *p); p++)
		;
	switch (*p) {
	case '\0':
		g_ptr_array_add(cat->kids, node_byte('%'));
		return p;
	case '%':
		g_ptr_array_add(cat->kids, node_byte('%'));
		return p + 1;
	case 'n':
		return p + 1;
	case 'd': case 'i':
		core = cat_of(node_rep(node_oneof("-+ "), 0, 1), hole_digits(NULL, '0', '9'));
		break;
	case 'u':
		core = hole_digits(NULL, '0', '9');
		break;
	case 'x': case 'X':
		core = hash ? cat_of(node_rep(alt_of(node_lit("0x"), node_lit("0X")), 0, 1), hole_hex()) : hole_hex();
		break;
	case 'o':
		core = hole_digits(NULL, '0', '7');
		break;
	case 'c': {
		byteset all;

		memset(&all, 0xff, sizeof(all));
		core = node_set(&all);
		break;
	}
	case 'p': {
		const char *e = p + 1;

		while (g_ascii_isalnum(*e))
			e++;
		g_ptr_array_add(cat->kids, hole_pointer(p[1] && g_ascii_isalnum(p[1]) ? p[1] : '\0'));
		return e;
	}
	default:
		core = hole_text();   /* %s, and anything unknown prints some text */
		break;
	}
	set_add(&sp, ' ');
	if (width && !minus)
		g_ptr_array_add(cat->kids, node_rep(node_set(&sp), 0, -1));
	g_ptr_array_add(cat->kids, core);
	if (width && minus)
		g_ptr_array_add(cat->kids, node_rep(node_set(&sp), 0, -1));
	return p + 1;
}

struct pk_re *pk_re_format(const char *format)
{
	g_autoptr(node) cat = node_new(N_CAT);
	size_t len = strnlen(format, RE_MAX_SUBJECT);
	bool closed = len && format[len - 1] == '\n';
	const char *p = format, *end = format + len - (closed ? 1 : 0);
	struct pk_re *re;

	while (p < end) {
		if (*p != '%') {
			struct node *own = node_byte((unsigned char)*p++);

			own->flags = ST_OWN;
			g_ptr_array_add(cat->kids, own);
			continue;
		}
		p = format_conversion(cat, p + 1);
	}
	if (!closed)
		g_ptr_array_add(cat->kids, hole_text());   /* pr_cont() text may follow */
	re = re_build(cat);
	/* a format cannot reach the limit (its states are a few per byte), but never return NULL */
	return re ? re : pk_re_text("", 0);
}

struct pk_re *pk_re_text(const char *text, gsize len)
{
	struct pk_re *re = re_new();
	struct re_state match = { OP_MATCH, 0, 0, -1, -1, 0 };

	len = MIN(len, RE_MAX_SUBJECT);
	/* a chain built front to back: state i reads byte i and goes to i + 1 */
	for (gsize i = 0; i < len; i++) {
		struct re_state s = { OP_BYTE, 0, ST_OWN, (int)i + 1, -1, (guint)i };
		byteset b = { { 0 } };

		set_add(&b, (unsigned char)text[i]);
		g_array_append_val(re->sets, b);
		g_array_append_val(re->states, s);
	}
	g_array_append_val(re->states, match);
	re->start = 0;
	return re;
}

/* ---- the joint walk ---- */

/* What came before (2 bits) and which next byte classes the assertions passed allow (4 bits). */
enum { PREV_START, PREV_WORD, PREV_OTHER, PREV_NL };
enum { NEXT_WORD = 1, NEXT_OTHER = 2, NEXT_NL = 4, NEXT_END = 8, NEXT_ANY = 15 };

struct pk_re_scratch {
	guint64 *keys;
	guint32 *gens;
	gsize cap, count;
	guint32 gen;
	GArray *stack;     /* guint64 keys to visit */
	byteset classes[3];   /* word, other, newline bytes */
};

struct pk_re_scratch *pk_re_scratch_new(void)
{
	struct pk_re_scratch *s = g_new0(struct pk_re_scratch, 1);

	s->cap = 1024;
	s->keys = g_new0(guint64, s->cap);
	s->gens = g_new0(guint32, s->cap);
	s->stack = g_array_new(FALSE, FALSE, sizeof(guint64));
	for (unsigned c = 0; c < 256; c++)
		set_add(&s->classes[c == '\n' ? 2 : is_word(c) ? 0 : 1], c);
	return s;
}

void pk_re_scratch_free(struct pk_re_scratch *s)
{
	if (!s)
		return;
	g_free(s->keys);
	g_free(s->gens);
	g_array_unref(s->stack);
	g_free(s);
}

static gsize key_slot(guint64 key, gsize cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (gsize)key & (cap - 1);
}

/* A set of keys, emptied in O(1) by moving to the next generation. */
static bool seen_add(struct pk_re_scratch *s, guint64 key)
{
	gsize i;

	if ((s->count + 1) * 2 > s->cap) {
		gsize cap = s->cap * 2;
		guint64 *keys = g_new0(guint64, cap);
		guint32 *gens = g_new0(guint32, cap);

		for (gsize j = 0; j < s->cap; j++) {
			if (s->gens[j] != s->gen)
				continue;
			for (i = key_slot(s->keys[j], cap); gens[i] == s->gen; i = (i + 1) & (cap - 1))
				;
			keys[i] = s->keys[j];
			gens[i] = s->gen;
		}
		g_free(s->keys);
		g_free(s->gens);
		s->keys = keys;
		s->gens = gens;
		s->cap = cap;
	}
	for (i = key_slot(key, s->cap); s->gens[i] == s->gen; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return false;
	s->keys[i] = key;
	s->gens[i] = s->gen;
	s->count++;
	return true;
}

/*
 * Where a match stands, besides the two automata's states (packed in 18
 * bits of a key): how many of the rule's named letters fell on the
 * subject's own text so far (up to RE_OWN_NEEDED); what the rule's last
 * byte was (LAST_*); whether the run of own text it ends holds a letter
 * or digit (anchor); about the run of named characters that fell on what
 * a conversion prints, if the last byte was one of them: whether own
 * text came right before it (before_any) and held a letter (before_alnum),
 * whether it holds a space between two other characters (SPACE_*: a
 * space at its edges, " SMP" from a %s, keeps it one token); what own text must come next once such a run
 * ended (PENDING_*); what came before; and which next bytes the
 * assertions passed allow.
 */
enum { LAST_NONE, LAST_OWN, LAST_BORROWED, LAST_WILD };
enum { PENDING_NONE, PENDING_ANY, PENDING_ALNUM };
enum { SPACE_NO_WORD, SPACE_WORD, SPACE_AFTER_WORD, SPACE_INSIDE };

struct joint {
	unsigned own, last, anchor, before_any, before_alnum, space, pending, prev, next;
};

static guint64 joint_key(int r, int f, const struct joint *j)
{
	return ((guint64)(guint32)r << 37) | ((guint64)(guint32)f << 18) | (j->own << 16) | (j->last << 14) |
	       (j->anchor << 13) | (j->before_any << 12) | (j->before_alnum << 11) | (j->space << 9) |
	       (j->pending << 6) | (j->prev << 4) | j->next;
}

static void joint_of(guint64 key, int *r, int *f, struct joint *j)
{
	*r = (int)(key >> 37);
	*f = (int)((key >> 18) & 0x7ffff);
	j->own = (key >> 16) & 3;
	j->last = (key >> 14) & 3;
	j->anchor = (key >> 13) & 1;
	j->before_any = (key >> 12) & 1;
	j->before_alnum = (key >> 11) & 1;
	j->space = (key >> 9) & 3;
	j->pending = (key >> 6) & 3;
	j->prev = (key >> 4) & 3;
	j->next = key & 15;
}

static void push(struct pk_re_scratch *s, int r, int f, const struct joint *j)
{
	guint64 key = joint_key(r, f, j);

	if (j->next && seen_add(s, key))
		g_array_append_val(s->stack, key);
}

/* The classes an assertion allows next, given what came before; 0 when it cannot hold. */
static unsigned assert_next(enum re_assert a, unsigned prev, unsigned next)
{
	switch (a) {
	case A_TEXT_START: return prev == PREV_START ? next : 0;
	case A_LINE_START: return prev == PREV_START || prev == PREV_NL ? next : 0;
	case A_TEXT_END: return next & NEXT_END;
	case A_LINE_END: return next & (NEXT_END | NEXT_NL);
	case A_WORD: return next & (prev == PREV_WORD ? NEXT_OTHER | NEXT_NL | NEXT_END : NEXT_WORD);
	case A_NOT_WORD: return next & (prev == PREV_WORD ? NEXT_WORD : NEXT_OTHER | NEXT_NL | NEXT_END);
	}
	return 0;
}

/*
 * The rule's next byte, of kind last (LAST_OWN: a character it names, on
 * the subject's own text; LAST_BORROWED: one it names, on what a
 * conversion prints; alnum: a letter or digit), after j: false when the
 * match cannot go on so.  A run of named characters that a conversion
 * prints must be one token (no space: "docker" of "task docker:\\w+"
 * from "task %s:%d", "0000" from "%04lx") with own text right before or
 * after it, or stand between own text with letters on both sides
 * ("kernel %s at" printing "NULL pointer dereference"); anything looser
 * lets a %s print the whole rule.  At the match's end (last LAST_NONE)
 * nothing may be pending.
 */
static bool joint_step(struct joint *n, const struct joint *j, unsigned last, bool alnum, bool space)
{
	*n = *j;
	if (j->last == LAST_BORROWED && last != LAST_BORROWED) {
		if (j->space != SPACE_INSIDE)
			n->pending = j->before_any ? PENDING_NONE : PENDING_ANY;
		else if (j->before_alnum)
			n->pending = PENDING_ALNUM;
		else
			return false;
	}
	if (last == LAST_NONE)
		return n->pending == PENDING_NONE;
	if (last == LAST_OWN) {
		n->anchor = (j->last == LAST_OWN && j->anchor) || alnum;
		if (n->pending == PENDING_ANY || alnum)
			n->pending = PENDING_NONE;
	} else if (last == LAST_BORROWED) {
		if (j->last != LAST_BORROWED) {
			if (n->pending != PENDING_NONE)
				return false;   /* a run right after a run: no own text between */
			n->before_any = j->last == LAST_OWN;
			n->before_alnum = j->last == LAST_OWN && j->anchor;
			n->space = SPACE_NO_WORD;
		}
		if (space)
			n->space = n->space == SPACE_WORD ? SPACE_AFTER_WORD : n->space;
		else
			n->space = n->space == SPACE_NO_WORD ? SPACE_WORD :
				   n->space == SPACE_AFTER_WORD ? SPACE_INSIDE : n->space;
		n->anchor = 0;
	} else {
		if (n->pending != PENDING_NONE)
			return false;
		n->anchor = 0;
	}
	n->last = last;
	return true;
}

/*
 * A depth-first walk of the pairs of states both automata can be in
 * after the same text, from both starts: the rule's epsilon moves and
 * assertions first, then the subject's, then a byte both take, by its
 * class (word, other, newline) since the assertions only see that.  A
 * pair where both match, with the text's end allowed, answers; the walk
 * goes on past a match where too few of the rule's named letters fell on
 * the subject's own text, for one where enough did.
 */
enum pk_re_match pk_re_match(const struct pk_re *rule, const struct pk_re *subject, struct pk_re_scratch *s)
{
	static const unsigned class_next[3] = { NEXT_WORD, NEXT_OTHER, NEXT_NL };
	static const unsigned class_prev[3] = { PREV_WORD, PREV_OTHER, PREV_NL };
	enum pk_re_match found = PK_RE_NONE;
	struct joint start = { 0, LAST_NONE, 0, 0, 0, 0, PENDING_NONE, PREV_START, NEXT_ANY };

	s->gen++;
	if (s->gen == 0) {   /* wrapped: old stamps could pass for new ones */
		memset(s->gens, 0, s->cap * sizeof(*s->gens));
		s->gen = 1;
	}
	s->count = 0;
	g_array_set_size(s->stack, 0);
	push(s, rule->start, subject->start, &start);
	while (s->stack->len) {
		guint64 key = g_array_index(s->stack, guint64, s->stack->len - 1);
		const struct re_state *rs, *fs;
		struct joint j, n;
		int r, f;

		joint_of(key, &r, &f, &j);
		rs = &g_array_index(rule->states, struct re_state, r);
		fs = &g_array_index(subject->states, struct re_state, f);
		g_array_set_size(s->stack, s->stack->len - 1);
		if (s->count > RE_MAX_VISITED)
			return PK_RE_OWN;
		n = j;
		switch (rs->op) {
		case OP_SPLIT:
			push(s, rs->out, f, &j);
			push(s, rs->out1, f, &j);
			continue;
		case OP_ASSERT:
			n.next = assert_next(rs->assert, j.prev, j.next);
			push(s, rs->out, f, &n);
			continue;
		}
		if (fs->op == OP_SPLIT) {
			push(s, r, fs->out, &j);
			push(s, r, fs->out1, &j);
			continue;
		}
		if (rs->op == OP_MATCH) {
			if (fs->op == OP_MATCH && (j.next & NEXT_END)) {
				if (rule->own_needed && j.own >= rule->own_needed && joint_step(&n, &j, LAST_NONE, false, false))
					return PK_RE_OWN;
				found = PK_RE_ARGS_ONLY;
			}
			continue;
		}
		if (fs->op != OP_BYTE)
			continue;
		for (int c = 0; c < 3; c++) {
			const byteset *rset = &g_array_index(rule->sets, byteset, rs->set);
			const byteset *fset = &g_array_index(subject->sets, byteset, fs->set);
			bool literal = rs->flags & ST_LITERAL, own = fs->flags & ST_OWN;
			/* '_' is a word byte but names nothing: "pr_" is no word of a message */
			bool alnum = c == 0 && !set_has(rset, '_');
			unsigned last = !literal ? LAST_WILD : own ? LAST_OWN : LAST_BORROWED;

			if (!(j.next & class_next[c]) || !sets_meet(rset, fset, &s->classes[c]) ||
			    !joint_step(&n, &j, last, alnum, set_has(rset, ' ') || set_has(rset, '\t')))
				continue;
			if (last == LAST_OWN && alnum)
				n.own = MIN(j.own + 1, (unsigned)RE_OWN_NEEDED);
			n.prev = class_prev[c];
			n.next = NEXT_ANY;
			push(s, rs->out, fs->out, &n);
		}
	}
	return found;
}

/* ---- lines and words of a pattern ---- */

char **pk_re_split_lines(const char *pattern)
{
	g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func(g_free);
	const char *p = pattern, *from = pattern;
	int depth = 0;
	bool in_class = false;

	for (; *p; p++) {
		if (*p == '\\' && p[1] == 'Q') {
			const char *e = strstr(p + 2, "\\E");

			if (!e)
				break;
			p = e + 1;
			continue;
		}
		if (*p == '\\' && p[1]) {
			if (!in_class && depth == 0 && p[1] == 'n') {
				g_ptr_array_add(parts, g_strndup(from, (gsize)(p - from)));
				from = p + 2;
			}
			p++;
			continue;
		}
		if (in_class) {
			in_class = *p != ']';
			continue;
		}
		if (*p == '[') {
			in_class = true;
			if (p[1] == '^')
				p++;
			if (p[1] == ']')
				p++;   /* a ']' first in a class is itself */
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (*p == '|' && depth == 0) {
			/* "a\nb|c" is two alternatives, not two lines */
			g_ptr_array_set_size(parts, 0);
			return g_strdupv((char *[]){ (char *)pattern, NULL });
		} else if (*p == '\n' && depth == 0) {
			g_ptr_array_add(parts, g_strndup(from, (gsize)(p - from)));
			from = p + 1;
		}
	}
	g_ptr_array_add(parts, g_strdup(from));
	g_ptr_array_add(parts, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&parts), FALSE);
}

GPtrArray *pk_re_words(const char *pattern)
{
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);
	const char *p = pattern;

	while (*p) {
		const char *w;

		if (*p == '\\') {
			p += p[1] ? 2 : 1;
			if (p[-1] == 'x' || p[-1] == 'p' || p[-1] == 'P') {
				if (*p == '{')
					while (*p && *p++ != '}')
						;
			}
			continue;
		}
		if (*p == '[') {
			for (p++; *p && *p != ']'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
			continue;
		}
		if (*p == '{' || *p == '(' ) {
			/* a repetition's bounds, a group's (?P<name>: no text of the rule's */
			if (*p == '{') {
				while (*p && *p != '}')
					p++;
				continue;
			}
			if (p[1] == '?') {
				while (*p && *p != ':' && *p != ')' && *p != '>')
					p++;
				continue;
			}
		}
		if (!g_ascii_isalnum(*p) && *p != '_') {
			p++;
			continue;
		}
		for (w = p; g_ascii_isalnum(*p) || *p == '_'; p++)
			;
		if (p - w >= 3)
			g_ptr_array_add(words, g_ascii_strdown(w, p - w));
	}
	return words;
}
