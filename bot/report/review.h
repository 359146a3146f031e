/*
 * review.h - the report stage: a review is a JSON model (the data of one
 * tested patch: verdict, static findings, console and index changes, base,
 * config, how to reproduce) rendered through a template of templates/.
 *
 * The model is the single source of a review: `test` builds it, the store
 * keeps it, and `report ID` renders the stored model again, so a re-render
 * is byte-identical to the first one.  Rendering is pure (the template file
 * is read from the source tree or the installed data dir).  For a template
 * whose name ends in .html every string inserted is HTML-escaped first.
 */
#ifndef PK_REVIEW_H
#define PK_REVIEW_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "base/patch.h"
#include "pipeline/test.h"

/* What the model says about where and how the test ran. */
struct pk_review_info {
	const char *source;       /* the patch file or mailbox as the user named it */
	unsigned index, total;    /* position in a series or mbox (1-based), total patches */
	const char *base;         /* the base as the user named it (tag, commit) */
	const char *config_hash;  /* the lab's kernel config */
	const char *reproduce;    /* the command that tests it again, or NULL for
	                             "printkbot test <source>" */
	const char *kernel;       /* the base as a person names it (lab/describe.h), or NULL */
	const char *compiler;     /* `gcc --version`'s first line, or NULL */
};

/*
 * The review model of one tested patch (a new JSON object, caller
 * unrefs).  Prose in it is already wrapped for a 72-column mail; console
 * lines are kept whole, as the kernel printed them.
 */
JsonNode *pk_review_model(const struct pk_patch *patch, const struct pk_test_result *res,
			  const struct pk_review_info *info);

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

/* A tested patch's review as it is shown and kept. */
struct pk_review_doc {
	JsonNode *model;          /* pk_review_model() */
	char *model_json;         /* the model as JSON text: what --json prints and the store keeps */
	char *text;               /* rendered through review.txt */
};

/*
 * Make the review of res (patch NULL: res->patch, a tested commit) into
 * *out; -1 with err set when the template fails.  Clear with
 * pk_review_doc_clear().
 */
int pk_review_doc_make(struct pk_review_doc *out, const struct pk_patch *patch,
		       const struct pk_test_result *res, const struct pk_review_info *info, GError **err);
void pk_review_doc_clear(struct pk_review_doc *doc);

#endif
