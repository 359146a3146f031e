/*
 * html.h - the few HTML pieces the report stage builds in C rather than
 * in a template: text escaped for an element or an attribute, a line's
 * word-level difference from another, a link whose address is checked,
 * and a kernel source line's address from the operator's [site]
 * source_url.
 *
 * Every function here returns markup that is safe to insert as it is:
 * text from a patch, a boot log or the store only ever appears escaped,
 * and only the tags named below (del, ins, a) are made.  All return new
 * strings the caller frees.
 */
#ifndef PK_HTML_H
#define PK_HTML_H

#include <glib.h>
#include <stdbool.h>

/* text (NULL: "") escaped for an element's content or a quoted attribute: & < > " ' */
char *pk_html_escape(const char *text);

/*
 * The two sides of a changed line, each escaped, with what differs
 * between them wrapped: <del> in *out_old, <ins> in *out_new.  The unit
 * is a word (letters, digits and _), a run of spaces, or one other
 * character, so "<6>x" against "<4>x" marks the 6 and the 4 only.
 * A side that is NULL gives "" and the other side is shown whole,
 * unmarked (a line added or removed has nothing to compare with); two
 * very long sides (over PK_HTML_DIFF_MAX_WORDS words each) are marked
 * whole rather than compared.
 */
#define PK_HTML_DIFF_MAX_WORDS 600
void pk_html_word_diff(const char *old_text, const char *new_text, char **out_old, char **out_new);

/* Whether url is an absolute http:// or https:// URL with no space, quote, < or > in it. */
bool pk_html_url_ok(const char *url);

/*
 * <a href="url">text</a>, both escaped, when url passes
 * pk_html_url_ok(); else the text alone, escaped: no other scheme
 * (javascript:, data:) ever becomes a link.
 */
char *pk_html_link(const char *url, const char *text);

/*
 * The address of line of path in the kernel source, from pattern (the
 * [site] source_url): {path} is replaced by path (escaped for a URL,
 * its / kept), {line} by the line, {commit} by commit and {base} by
 * base (each escaped for a URL; "" when NULL).  NULL when pattern or
 * path is NULL, when the pattern names {commit} and commit is NULL
 * (or {base} and base is), or when the result is not an http(s) URL.
 */
char *pk_html_source_url(const char *pattern, const char *path, int line, const char *commit,
			 const char *base);

#endif
