/* mailcmd.c - #printkbot command lines and who may give them; see mailcmd.h. */
#include "intake/mailcmd.h"

#include <string.h>

#define COMMAND_LINE_MAX 200
#define COMMAND_ARG_MAX 100
#define COMMAND_WORD_MAX 20

static const char *const kind_names[] = {
	[PK_MAILCMD_NONE] = "",
	[PK_MAILCMD_TEST] = "test",
	[PK_MAILCMD_HELP] = "help",
	[PK_MAILCMD_UNKNOWN] = "unknown",
};

const char *pk_mailcmd_kind_name(enum pk_mailcmd_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(kind_names) ? kind_names[kind] : "";
}

bool pk_mailcmd_kind_parse(const char *name, enum pk_mailcmd_kind *out)
{
	for (unsigned i = PK_MAILCMD_NONE + 1; name && i < G_N_ELEMENTS(kind_names); i++)
		if (!strcmp(name, kind_names[i])) {
			*out = (enum pk_mailcmd_kind)i;
			return true;
		}
	return false;
}

void pk_mailcmd_clear(struct pk_mailcmd *c)
{
	g_free(c->line);
	g_free(c->arg);
	g_free(c->word);
	memset(c, 0, sizeof *c);
}

/* A base name as a command may carry it: what a tag, a Debian base or tree/branch is made of. */
static bool arg_ok(const char *s)
{
	if (!*s || strlen(s) > COMMAND_ARG_MAX || *s == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("._-/:+~^@", *p))
			return false;
	return true;
}

/* The command of one line that starts with the tag (after blanks): its words read into out. */
static void parse_line(struct pk_mailcmd *out, const char *line)
{
	g_autofree char *copy = g_strndup(line, COMMAND_LINE_MAX);
	g_auto(GStrv) words = NULL;
	const char *w[4] = { 0 };
	unsigned n = 0;

	g_strstrip(copy);
	words = g_strsplit_set(copy + strlen(PK_MAILCMD_TAG), " \t", -1);
	for (char **p = words; *p; p++)
		if (**p && n < G_N_ELEMENTS(w))
			w[n++] = *p;
	if (!n) {
		out->kind = PK_MAILCMD_UNKNOWN;
	} else if (!g_ascii_strcasecmp(w[0], "help")) {
		out->kind = PK_MAILCMD_HELP;
		out->extra = n > 1;
	} else if (!g_ascii_strcasecmp(w[0], "test") && (n < 2 || arg_ok(w[1]))) {
		out->kind = PK_MAILCMD_TEST;
		out->arg = n > 1 ? g_strdup(w[1]) : NULL;
		out->extra = n > 2;
	} else {
		out->kind = PK_MAILCMD_UNKNOWN;
		/* a word for the reply to quote: a word, short, so that the answer relays no message */
		out->word = g_strndup(w[0], COMMAND_WORD_MAX);
		for (char *p = out->word; *p; p++)
			if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_')
				*p = '?';
		out->extra = n > 1;
	}
	/* what was understood, never the rest of the line: the answer quotes it to the list */
	out->line = out->kind == PK_MAILCMD_UNKNOWN
		  ? g_strdup_printf(PK_MAILCMD_TAG "%s%s%s", out->word ? " " : "", out->word ? out->word : "",
				    out->extra ? " ..." : "")
		  : g_strdup_printf(PK_MAILCMD_TAG " %s%s%s", pk_mailcmd_kind_name(out->kind),
				    out->arg ? " " : "", out->arg ? out->arg : "");
}

/* Whether s (a line, its end of line cut) is a command's: blanks, the tag, then a blank or the end. */
static bool command_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (g_ascii_strncasecmp(s, PK_MAILCMD_TAG, strlen(PK_MAILCMD_TAG)))
		return false;
	/* "#printkbotfoo": another tag */
	return !s[strlen(PK_MAILCMD_TAG)] || g_ascii_isspace(s[strlen(PK_MAILCMD_TAG)]);
}

/* Whether s (a line) is quoted: '>' after blanks. */
static bool quoted(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '>';
}

/* Whether s (a line) is blank. */
static bool blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return !*s;
}

/* The line of body at p as a new string, its end of line cut; *next the line after it, or NULL. */
static char *line_at(const char *p, const char **next)
{
	const char *nl = strchr(p, '\n');
	size_t len = nl ? (size_t)(nl - p) : strlen(p);

	*next = nl ? nl + 1 : NULL;
	if (len && p[len - 1] == '\r')
		len--;
	return g_strndup(p, len);
}

/*
 * Whether line, after prev (the line before it, or NULL), ends an
 * attribution: "On Mon, 1 Jan 2024, Max wrote:", on one line or
 * wrapped on two.
 */
static bool attribution(const char *prev, const char *line)
{
	g_autofree char *l = g_strstrip(g_strdup(line));
	g_autofree char *pl = prev ? g_strstrip(g_strdup(prev)) : NULL;

	return g_str_has_suffix(l, "wrote:") &&
	       (g_str_has_prefix(l, "On ") || (pl && g_str_has_prefix(pl, "On ")));
}

/*
 * Whether the text from p on (the lines after an attribution) is a
 * mail carried unquoted, as a top-posted reply carries it: its first
 * line that is not blank is not quoted.  Under an inline reply's
 * attribution the quoted mail comes first ("> ..."), and then the
 * replier's own lines, which may hold a command.
 */
static bool carried_unquoted(const char *p)
{
	while (p && *p) {
		g_autofree char *line = line_at(p, &p);

		if (!blank(line))
			return !quoted(line);
	}
	return false;
}

void pk_mailcmd_parse(struct pk_mailcmd *out, const char *body)
{
	struct pk_mailcmd c = { PK_MAILCMD_NONE };
	g_autofree char *prev = NULL;
	const char *p = body;

	while (p && *p) {
		g_autofree char *line = line_at(p, &p);
		g_autofree char *trimmed = g_strstrip(g_strdup(line));

		/* the signature and a diff end what a person wrote to the bot */
		if (!strcmp(line, "-- ") || g_str_has_prefix(line, "diff --git "))
			break;
		/* so does a mail it carries unquoted below (a top-posted reply) */
		if (!strcmp(trimmed, "-----Original Message-----") ||
		    (attribution(prev, line) && carried_unquoted(p)))
			break;
		if (!quoted(line) && command_line(line)) {
			const char *s = line;

			while (*s == ' ' || *s == '\t')
				s++;
			parse_line(&c, s);
			break;
		}
		g_free(prev);
		prev = g_steal_pointer(&line);
	}
	*out = c;
}

char *pk_mailcmd_defuse(const char *text)
{
	g_autoptr(GString) out = g_string_new(NULL);
	const char *p = text;

	while (p && *p) {
		const char *start = p;
		g_autofree char *line = line_at(p, &p);

		if (command_line(line))
			g_string_append(out, "> ");
		g_string_append_len(out, start, p ? p - start : (gssize)strlen(start));
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

bool pk_mailcmd_sender_allowed(const char *const *allow, const char *addr)
{
	const char *at = addr ? strrchr(addr, '@') : NULL;

	if (!at || at == addr || !at[1])
		return false;
	for (const char *const *a = allow; a && *a; a++) {
		if (!strcmp(*a, "*"))
			return true;
		if (**a == '@' ? !g_ascii_strcasecmp(*a + 1, at + 1) : !g_ascii_strcasecmp(*a, addr))
			return true;
	}
	return false;
}

bool pk_mailcmd_addressed_to(const char *const *addrs, guint n, const char *bot)
{
	for (guint i = 0; bot && addrs && i < n; i++)
		if (addrs[i] && !g_ascii_strcasecmp(addrs[i], bot))
			return true;
	return false;
}
