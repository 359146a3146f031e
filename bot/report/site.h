/*
 * site.h - the static site of every stored review (`printkbot report
 * --site DIR`): plain files any web server serves, or a browser opens
 * from disk.
 *
 *   index.html, data.js, site.js, site.css   every series, newest first,
 *                                            filtered in the browser
 *   series/<key>.html                        a series: each patch's review
 *   files.html, files/<path>.html            each file's history
 *
 * A series is the patches one daemon job tested (key "j<job id>"), else
 * those of one stored series ("s<id>"), else one patch ("p<patch id>"):
 * page names come from store ids and from file paths cut to safe
 * components (pk_site_file_page()), never from anything else a patch
 * says.  Every string on a page is HTML-escaped (review.h), and a link
 * from the store or the config is made only when it is http(s).
 *
 * Incremental: DIR/.printkbot-site keeps, for every page written, a
 * hash of what it was made from (the store's rows, the templates, the
 * config, printkbot's version).  A page whose inputs did not change is
 * not rendered again, one whose bytes come out the same is not written
 * again, and a page is replaced atomically (a temporary file, renamed).
 * Pages no longer made (a series gone from the store) are removed.
 * Every file is opened below DIR's directory fd, never through a link
 * planted in DIR: a page that is a link is replaced, a subdirectory that
 * is one is an error (DIR itself may be a link: the user names it).
 */
#ifndef PK_SITE_H
#define PK_SITE_H

#include <glib.h>
#include <stdbool.h>

#include "store/store.h"

/*
 * [site]: the static site of every review (`report --site`, made by
 * what follows).  Both keys are http(s) URLs or NULL.
 */
struct pk_site_config {
	char *url;                /* where readers reach the site; a reply's patch link: is its
	                             series' page there; NULL: the source's archive, as before */
	char *source_url;         /* a kernel source line's address, {path} {line} {commit}
	                             {base} replaced (report/html.h), or NULL: no source links */
	GHashTable *archives;     /* pk_config_site() only: [source NAME] -> its archive = */
};
void pk_site_config_clear(struct pk_site_config *site);

struct pk_site_opts {
	const char *dir;                        /* where the site goes, made when missing */
	const struct pk_site_config *config;    /* [site] and the sources' archives, or NULL */
	bool full;                              /* render every page, as if DIR were empty */
	unsigned file_rows;                     /* a file page's rows at most (0: 500) */
};

/* What a run did. */
struct pk_site_stats {
	unsigned series, series_rendered, series_written;
	unsigned files, files_rendered, files_written;
	unsigned other_written;                 /* index.html, data.js, files.html, site.js, site.css */
	unsigned removed;
	unsigned failed;                        /* reviews that did not render (said on their page) */
};

/*
 * Write or bring up to date the site of store in opts->dir.  0 and
 * *out filled, or -1 with err (the store, a template, the disk); pages
 * written before a failure stay, and the next run finishes them.  Two
 * runs on one DIR do not overlap (a lock beside the pages).
 */
int pk_site_write(struct pk_store *store, const struct pk_site_opts *opts, struct pk_site_stats *out,
		  GError **err);

/*
 * The page of a series, relative to the site: "series/j42.html" for the
 * patches job job_id tested, "series/p7.html" for patch patch_id alone
 * (job_id 0).  Caller frees.
 */
char *pk_site_series_page(gint64 job_id, gint64 patch_id);

/*
 * The page of a file's history, relative to the site:
 * "files/<path>.html" when every component of path is a plain name
 * (letters, digits and . _ , + -, not starting with . or -, at most
 * 100 bytes, at most 32 of them), else "files/_/<sha256 of path>.html".
 * Never a path out of files/.  Caller frees.
 */
char *pk_site_file_page(const char *path);

/*
 * The address of a series page on the site at site_url ([site] url):
 * site_url, a / when it has none, then pk_site_series_page().  NULL
 * when site_url is NULL.  Caller frees.
 */
char *pk_site_series_url(const char *site_url, gint64 job_id, gint64 patch_id);

#endif
