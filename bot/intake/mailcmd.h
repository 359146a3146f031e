/*
 * mailcmd.h - commands by mail: a maintainer answers a patch's thread,
 * addressed to the bot, with a line such as
 *
 *     #printkbot test debian:6.1
 *
 * and the bot acts on it (daemon.h says how).  This module only reads:
 * the command line out of a mail's text, and whether a sender is one the
 * configuration lets give commands.  Pure functions over plain strings
 * (no I/O, no GMime, no SQL), so the rules are tested on their own.
 */
#ifndef PK_MAILCMD_H
#define PK_MAILCMD_H

#include <glib.h>
#include <stdbool.h>

/* What a line starts with to be a command. */
#define PK_MAILCMD_TAG "#printkbot"

/* The commands the bot knows.  Names (pk_mailcmd_kind_name()) are stable: jobs' payloads keep them. */
enum pk_mailcmd_kind {
	PK_MAILCMD_NONE,      /* no #printkbot line outside quotes */
	PK_MAILCMD_TEST,      /* "test [BASE]": test the thread's series again */
	PK_MAILCMD_HELP,      /* "help": the commands, in a reply */
	PK_MAILCMD_UNKNOWN,   /* "#printkbot <word>" of no command above (or "#printkbot" alone) */
};

/* The kind's name ("test", "help", "unknown"; "" for none). */
const char *pk_mailcmd_kind_name(enum pk_mailcmd_kind kind);
/* The kind named name: true and *out set, or false. */
bool pk_mailcmd_kind_parse(const char *name, enum pk_mailcmd_kind *out);

/* A command as read from a mail; free with pk_mailcmd_clear(). */
struct pk_mailcmd {
	enum pk_mailcmd_kind kind;
	char *line;           /* the command as understood, not as written: "#printkbot test BASE",
				 "#printkbot help", "#printkbot WORD ..." (what the answer quotes, so
				 that it relays nothing else of the line); NULL for none */
	char *arg;            /* test: its BASE, or NULL for the base the bot would choose */
	char *word;           /* unknown: the word after the tag, or NULL */
	bool extra;           /* words after what the command takes (ignored, said in the reply) */
};
void pk_mailcmd_clear(struct pk_mailcmd *c);
typedef struct pk_mailcmd pk_mailcmd_t;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(pk_mailcmd_t, pk_mailcmd_clear)

/*
 * The first command of body (a mail's text, LF or CRLF line ends; NULL
 * is no body): the first line that starts with PK_MAILCMD_TAG (blanks
 * before it allowed) followed by a blank or the line's end.  Quoted
 * lines (starting with '>', blanks before it allowed) are never
 * commands: a reply quoting a command does not give it again.  Nor is a
 * line after the signature separator ("-- ") or after the first line of a
 * diff: a patch that mentions the tag is no command.  Nor is one of a
 * mail carried unquoted under the reply, as top-posting does: after a
 * "-----Original Message-----" line, or after an attribution ("On ...
 * wrote:", on one line or two) whose next line that is not blank is not
 * quoted (under an inline reply's attribution, the quoted text comes
 * first and the replier's own lines after it are read).  A BASE is a word
 * of printable ASCII without shell or quote characters, at most 100
 * bytes; a longer or stranger one makes the command unknown.
 */
void pk_mailcmd_parse(struct pk_mailcmd *out, const char *body);

/*
 * text (LF or CRLF lines) with every line that pk_mailcmd_parse() could
 * take for a command quoted ("> " before it): what the bot writes in a
 * mail, so that a reply carrying it unquoted gives no command.  New.
 */
char *pk_mailcmd_defuse(const char *text);

/*
 * Whether the sender addr (an addr-spec) may give commands under allow
 * (the [daemon] commands_from list, NULL-terminated; NULL or empty:
 * nobody): "*" allows everyone, "name@domain" that address, "@domain"
 * every address at that domain (not its subdomains).  Case-insensitive.
 */
bool pk_mailcmd_sender_allowed(const char *const *allow, const char *addr);

/*
 * Whether addrs (n addr-specs, a mail's To and Cc) holds bot (an
 * addr-spec), case-insensitively: a command must be addressed to the
 * bot, not only sent to a list it reads.
 */
bool pk_mailcmd_addressed_to(const char *const *addrs, guint n, const char *bot);

#endif
