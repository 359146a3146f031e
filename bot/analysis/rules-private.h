/*
 * rules-private.h - what rules.c and rules-re.c share: a regular
 * expression of RE2's syntax (the one log monitors such as
 * node-problem-detector write their rules in) as an automaton, and the
 * question whether it matches some text a kernel format can print.
 *
 * A pattern is parsed into a Thompson automaton over bytes.  A kernel
 * format ("%s: Killed process %d (%s) total-vm:%lukB\n") becomes an
 * automaton too, each conversion the language of what it can print
 * (%d an optional sign and digits, %s any text but a newline...), and
 * the two are run together: the rule matches the format when some text
 * both accept exists.  A concrete text (a boot record) is the automaton
 * of exactly that text, so records and formats are matched by one engine
 * and one set of rules about anchors and word boundaries.
 */
#ifndef PK_RULES_PRIVATE_H
#define PK_RULES_PRIVATE_H

#include <glib.h>
#include <stdbool.h>

/* An automaton (rules-re.c); free with pk_re_free(), which accepts NULL. */
struct pk_re;

/* How a rule's automaton is placed on a text. */
enum pk_re_anchor {
	PK_RE_ANCHOR_NONE = 0,
	PK_RE_ANCHOR_START = 1 << 0,  /* the match begins where the text does */
	PK_RE_ANCHOR_END = 1 << 1,    /* the match ends where the text does */
};

/*
 * Parse pattern (RE2 syntax, see rules.h for what is refused) into a
 * rule automaton placed as anchor says; without an anchor a match may
 * begin and end anywhere, as RE2's search does.  On a syntax error -1
 * and err says what is wrong at which byte offset (PK_ERROR_INPUT).
 */
int pk_re_compile(struct pk_re **out, const char *pattern, gsize len, unsigned anchor, GError **err);

/*
 * The automaton of every text a kernel format (as the printk index holds
 * it, unescaped) can print as one record: the trailing newline ends it, a
 * format without one may be followed by pr_cont() text.
 */
struct pk_re *pk_re_format(const char *format);
/* The automaton of exactly text (len bytes). */
struct pk_re *pk_re_text(const char *text, gsize len);

void pk_re_free(struct pk_re *re);
typedef struct pk_re pk_re;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_re, pk_re_free)

/*
 * Work space for pk_re_match(), reused from one call to the next
 * (new with pk_re_scratch_new(), free with pk_re_scratch_free()).
 */
struct pk_re_scratch;
struct pk_re_scratch *pk_re_scratch_new(void);
void pk_re_scratch_free(struct pk_re_scratch *s);

/* How a rule meets a subject. */
enum pk_re_match {
	PK_RE_NONE,        /* no text both accept */
	PK_RE_ARGS_ONLY,   /* only texts where the match holds no letter or digit of
	                      the subject's own text: what a conversion prints decides */
	PK_RE_OWN,         /* some text where the match holds a letter or digit of the
	                      subject's own text (every byte of a pk_re_text() is) */
};

/*
 * Whether rule (pk_re_compile()) matches some text that subject
 * (pk_re_format() or pk_re_text()) accepts, and how: a format such as
 * "%s\n" prints anything, so a rule "matches" it through the argument
 * alone, which says nothing of the format.  A search that would visit
 * more than a few million joint states stops and answers PK_RE_OWN: a
 * rule said to match is the cautious error for a monitor (it is not
 * reported as broken), and no real rule comes near it.
 */
enum pk_re_match pk_re_match(const struct pk_re *rule, const struct pk_re *subject, struct pk_re_scratch *s);

/*
 * The top-level pieces of pattern separated by "\n" (a newline escape
 * outside any group or class, as node-problem-detector joins consecutive
 * lines), each a new string; one piece for most patterns.  The pattern
 * must have compiled.
 */
char **pk_re_split_lines(const char *pattern);

/*
 * The words of pattern's literal text (runs of letters, digits and '_'
 * of three bytes or more, outside classes and escapes), lower-cased, for
 * finding the message nearest to a rule that matches none.
 */
GPtrArray *pk_re_words(const char *pattern);

#endif
