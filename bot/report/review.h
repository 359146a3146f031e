/*
 * review.h - the report stage: a review is a JSON model (the data of one
 * tested patch: verdict, static findings, console and index changes, base,
 * config, how to reproduce) rendered through a template of templates/
 * (render.h).
 *
 * The model is the single source of a review: `test` builds it, the store
 * keeps it, and `report ID` renders the stored model again, so a re-render
 * is byte-identical to the first one.
 */
#ifndef PK_REVIEW_H
#define PK_REVIEW_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "base/patch.h"
#include "pipeline/test.h"
#include "report/render.h"

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
