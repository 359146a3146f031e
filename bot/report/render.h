/*
 * render.h - a review model (review.h's JSON) rendered through a template
 * of templates/.  Rendering is pure (the template file is read from the
 * source tree or the installed data dir); for a template whose name ends
 * in .html every string inserted is HTML-escaped first.
 */
#ifndef PK_RENDER_H
#define PK_RENDER_H

#include <glib.h>
#include <json-glib/json-glib.h>

/*
 * Render model (a JSON object, borrowed) through templates/<name>
 * ("review.txt" for the plain-text review, "review.html" for a page with a
 * side-by-side console diff).  Returns a new string, or NULL
 * with err set when the template is missing or does not parse.
 */
char *pk_review_render(JsonNode *model, const char *name, GError **err);

/* Same, from the model serialised as JSON text (what the store keeps). */
char *pk_review_render_json(const char *model_json, const char *name, GError **err);

/*
 * What an HTML rendering adds to the model (all borrowed, each may be
 * NULL).  Before a .html template sees the model, every member whose
 * name ends in "_html" is removed from its copy (no stored model
 * brings markup), then these are added, the only members not escaped:
 * for each finding and each console and index change where_html (its
 * file:line, a link to the source line when source_url is set, see
 * html.h), for each change old_side_html and new_side_html (the sides
 * with their changed words marked); and at the top, the pairs of raw.
 */
struct pk_review_html {
	const char *source_url;        /* [site] source_url (html.h's pattern), or NULL */
	/*
	 * name, markup, name, markup..., NULL: top-level members the caller
	 * built from escaped pieces (a site page's patches); a name that
	 * does not end in "_html" is ignored.
	 */
	const char *const *raw;
};

/* pk_review_render() of a .html template with html's additions (NULL: none). */
char *pk_review_render_html(JsonNode *model, const char *name, const struct pk_review_html *html,
			    GError **err);

/*
 * A template parsed once, for a caller that renders many models (the
 * site).  Loading: 0 and *out (free with pk_review_tmpl_free()), or -1
 * with err.  Rendering is pk_review_render_html() without the parse.
 */
struct pk_review_tmpl;
int pk_review_tmpl_load(struct pk_review_tmpl **out, const char *name, GError **err);
char *pk_review_tmpl_render(struct pk_review_tmpl *t, JsonNode *model, const struct pk_review_html *html,
			    GError **err);
void pk_review_tmpl_free(struct pk_review_tmpl *t);
typedef struct pk_review_tmpl pk_review_tmpl;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_review_tmpl, pk_review_tmpl_free)

#endif
