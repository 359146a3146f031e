/* mailcmd.c - #printkbot command lines and who may give them; see mailcmd.h. */
#include "intake/mailcmd.h"

#include <string.h>

#define COMMAND_LINE_MAX 200
#define COMMAND_ARG_MAX 100

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
	out->line = g_strdup(copy);
	words = g_strsplit_set(copy + strlen(PK_MAILCMD_TAG), " \t", -1);
	for (char **p = words; *p; p++)
		if (**p && n < G_N_ELEMENTS(w))
			w[n++] = *p;
	if (!n) {
		out->kind = PK_MAILCMD_UNKNOWN;
		return;
	}
	if (!g_ascii_strcasecmp(w[0], "help")) {
		out->kind = PK_MAILCMD_HELP;
		out->extra = n > 1;
	} else if (!g_ascii_strcasecmp(w[0], "test") && (n < 2 || arg_ok(w[1]))) {
		out->kind = PK_MAILCMD_TEST;
		out->arg = n > 1 ? g_strdup(w[1]) : NULL;
		out->extra = n > 2;
	} else {
		out->kind = PK_MAILCMD_UNKNOWN;
		/* a word for the reply to quote: printable, short */
		out->word = g_strndup(w[0], 40);
		for (char *p = out->word; *p; p++)
			if (!g_ascii_isgraph(*p))
				*p = '?';
	}
}

void pk_mailcmd_parse(struct pk_mailcmd *out, const char *body)
{
	struct pk_mailcmd c = { PK_MAILCMD_NONE };
	const char *p = body;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		g_autofree char *line = g_strndup(p, len);
		const char *s = line;

		p = nl ? nl + 1 : NULL;
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		/* the signature and a diff end what a person wrote to the bot */
		if (!strcmp(line, "-- ") || g_str_has_prefix(line, "diff --git "))
			break;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '>' || g_ascii_strncasecmp(s, PK_MAILCMD_TAG, strlen(PK_MAILCMD_TAG)))
			continue;
		if (s[strlen(PK_MAILCMD_TAG)] && !g_ascii_isspace(s[strlen(PK_MAILCMD_TAG)]))
			continue;   /* "#printkbotfoo": another tag */
		parse_line(&c, s);
		break;
	}
	*out = c;
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
