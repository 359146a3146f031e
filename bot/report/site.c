/*
 * site.c - the static site of every stored review; see site.h.
 *
 * One run: read what the store lists (two queries), group the patches
 * into series, then for each page hash what it is made from and render
 * it only when that hash is not the one .printkbot-site kept for it.
 * Pages are rendered through templates/site-*.html by review.h, so every
 * string is escaped there; the markup made here is the escaped pieces of
 * html.h and a failed review's note.
 */
#include "report/site.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "base/util.h"
#include "base/verdict.h"
#include "report/html.h"
#include "report/reply.h"
#include "report/review.h"

#define STATE_FILE ".printkbot-site"
#define STATE_HEAD "printkbot-site 1"
#define LOCK_FILE ".printkbot-site.lock"
#define INDEX_ROWS 100            /* series on index.html without JavaScript */
#define FILE_ROWS 500             /* a file page's rows, unless opts say */
#define SUBSYSTEMS_MAX 2000       /* directories offered to the file filter */

/* A series: the patches of one job, stored series or patch. */
struct series {
	char *page;                 /* "series/j42.html" */
	char *hash;                 /* of its inputs, once series_write() made it */
	GPtrArray *patches;         /* struct pk_store_site_patch*, borrowed; by number, then id */
	gint64 time;                /* the newest patch date */
};

static void series_free(struct series *s)
{
	g_free(s->page);
	g_free(s->hash);
	g_ptr_array_unref(s->patches);
	g_free(s);
}

/* A file a stored change names. */
struct file {
	char *path, *page;
	GArray *patches;            /* gint64 patch ids, ascending */
	guint index;                /* in data.js's files */
};

static void file_free(struct file *f)
{
	g_free(f->path);
	g_free(f->page);
	g_array_unref(f->patches);
	g_free(f);
}

/* One run. */
struct site {
	const struct pk_site_opts *opts;
	struct pk_store *store;
	GHashTable *old_state;      /* page -> hash, as the last run left them */
	GHashTable *new_state;      /* page -> hash of this run */
	char *inputs;               /* the hash of what every page depends on */
	struct pk_review_html html;
	pk_review_tmpl *t_index, *t_series, *t_patch, *t_file, *t_files;
	GPtrArray *patches;         /* struct pk_store_site_patch* */
	GPtrArray *series;          /* struct series*, newest first */
	GHashTable *page_of;        /* patch id (gint64*) -> its struct series* (borrowed) */
	GHashTable *patch_of;       /* patch id (gint64*) -> struct pk_store_site_patch* (borrowed) */
	GPtrArray *files;           /* struct file*, by path */
	GHashTable *files_of;       /* patch id (gint64*) -> GPtrArray of struct file* (borrowed) */
	GHashTable *versions;       /* before build id (gint64*) -> its kernel's version, "" unknown */
	struct pk_site_stats stats;
	int dirfd;                  /* opts->dir: every page is opened below it, never through a link */
};

char *pk_site_series_page(gint64 job_id, gint64 patch_id)
{
	if (job_id)
		return g_strdup_printf("series/j%" G_GINT64_FORMAT ".html", job_id);
	return g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", patch_id);
}

static char *series_page_of(const struct pk_store_site_patch *p)
{
	if (!p->job_id && p->series_id)
		return g_strdup_printf("series/s%" G_GINT64_FORMAT ".html", p->series_id);
	return pk_site_series_page(p->job_id, p->patch_id);
}

char *pk_site_series_url(const char *site_url, gint64 job_id, gint64 patch_id)
{
	g_autofree char *page = NULL;

	if (!site_url)
		return NULL;
	page = pk_site_series_page(job_id, patch_id);
	return g_strconcat(site_url, g_str_has_suffix(site_url, "/") ? "" : "/", page, NULL);
}

/* A component of a file's path that can be a name on disk and in a URL as it is. */
static bool plain_component(const char *c, size_t n)
{
	if (!n || n > 100 || c[0] == '.' || c[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(c[i]) && !strchr("._,+-", c[i]))
			return false;
	return true;
}

char *pk_site_file_page(const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path ? path : "", "/", -1);
	guint n = g_strv_length(parts);
	bool plain = n > 0 && n <= 32;

	for (guint i = 0; plain && i < n; i++)
		plain = plain_component(parts[i], strlen(parts[i])) &&
			/* "_" is where the other pages go */
			!(i == 0 && !strcmp(parts[i], "_"));
	if (plain)
		return g_strconcat("files/", path, ".html", NULL);
	{
		g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, path ? path : "", -1);
		return g_strconcat("files/_/", sum, ".html", NULL);
	}
}

/* "../" once per directory of page: the way back to the site's root. */
static char *root_of(const char *page)
{
	GString *r = g_string_new(NULL);

	for (const char *p = page; *p; p++)
		if (*p == '/')
			g_string_append(r, "../");
	return g_string_free(r, FALSE);
}

static char *date_text(gint64 t)
{
	g_autoptr(GDateTime) d = t ? g_date_time_new_from_unix_utc(t) : NULL;

	return d ? g_date_time_format(d, "%Y-%m-%d") : g_strdup("");
}

/* ---- the files, below the site's directory -------------------------------- */

/*
 * The directory of page (a path relative to the site, made by this file
 * from store ids and safe path components) opened below s->dirfd one
 * component at a time, each made when missing (with make) and never
 * through a symbolic link: a link or anything but a directory where one
 * of them goes is an error naming it, so that nothing outside DIR is
 * ever written or removed.  *out_name points at the file's name in page.
 * The fd (caller closes), or -1 with err; without make, a missing
 * directory is -1 with errno ENOENT and err unset.
 */
static int page_dir(struct site *s, const char *page, bool make, const char **out_name, GError **err)
{
	g_auto(GStrv) parts = g_strsplit(page, "/", -1);
	guint n = g_strv_length(parts);
	const char *slash = strrchr(page, '/');
	size_t end = 0;   /* page up to the component being opened */
	int fd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", s->opts->dir, g_strerror(errno));
	for (guint i = 0; i + 1 < n; i++) {
		int next, e;

		end += (i ? 1 : 0) + strlen(parts[i]);
		if (make && mkdirat(fd, parts[i], 0755) < 0 && errno != EEXIST)
			next = -1;
		else
			next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		close(fd);
		if (next < 0) {
			errno = e;
			if (!make && e == ENOENT)
				return -1;
			if (e == ELOOP || e == ENOTDIR)
				return pk_error(err, PK_ERROR_FAILED, "%s/%.*s is a symbolic link or not a directory: "
						"the site is written only into directories of its own", s->opts->dir,
						(int)end, page);
			return pk_error(err, PK_ERROR_FAILED, "cannot make %s/%.*s: %s", s->opts->dir, (int)end, page,
					g_strerror(e));
		}
		fd = next;
	}
	*out_name = slash ? slash + 1 : page;
	return fd;
}

/*
 * name in the directory dirfd, read whole when it is a regular file (not
 * through a link) of at most cap bytes: 1 read, 0 not such a file.
 */
static int read_at(int dirfd, const char *name, size_t cap, char **out, size_t *out_len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	g_autoptr(GString) text = NULL;
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (guint64)st.st_size > cap) {
		close(fd);
		return 0;
	}
	text = g_string_sized_new((gsize)st.st_size);
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || text->len + (size_t)n > cap) {
			close(fd);
			return 0;
		}
		g_string_append_len(text, buf, n);
	}
	close(fd);
	*out_len = text->len;
	*out = g_string_free(g_steal_pointer(&text), FALSE);
	return 1;
}

/*
 * name in dirfd replaced by data: written to a new file beside it, then
 * renamed over it (a link of that name is replaced, never followed), so
 * a reader sees the old page or the new one.  No fsync
 * (g_file_set_contents() syncs every file: minutes for a site of 100,000
 * pages): a page a crash loses is made again by the next run, since this
 * run's state is written last.  page names it in errors.
 */
static int replace_at(int dirfd, const char *name, const char *page, const char *data, size_t len, GError **err)
{
	g_autofree char *tmp = NULL;
	size_t done = 0;
	int fd = -1, e;

	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		g_free(tmp);
		tmp = g_strdup_printf("%s.tmp-%08x", name, g_random_int());
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot write %s: %s", page, g_strerror(errno));
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			close(fd);
			unlinkat(dirfd, tmp, 0);
			return pk_error(err, PK_ERROR_FAILED, "cannot write %s: %s", page, g_strerror(e));
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		return pk_error(err, PK_ERROR_FAILED, "cannot write %s: %s", page, g_strerror(e));
	}
	return 0;
}

/* ---- the state: what each page was made from ----------------------------- */

static GHashTable *state_read(struct site *s)
{
	GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	size_t len;

	if (read_at(s->dirfd, STATE_FILE, G_MAXINT, &text, &len) <= 0)
		return h;
	lines = g_strsplit(text, "\n", -1);
	if (!lines[0] || strcmp(lines[0], STATE_HEAD))
		return h;   /* another format: every page is made again */
	for (char **l = lines + 1; *l; l++) {
		char *tab = strchr(*l, '\t');

		if (tab)
			g_hash_table_replace(h, g_strndup(*l, (gsize)(tab - *l)), g_strdup(tab + 1));
	}
	return h;
}

static int state_write(struct site *s, GError **err)
{
	g_autoptr(GString) out = g_string_new(STATE_HEAD "\n");
	g_autoptr(GList) pages = g_list_sort(g_hash_table_get_keys(s->new_state), (GCompareFunc)strcmp);

	for (GList *p = pages; p; p = p->next)
		g_string_append_printf(out, "%s\t%s\n", (char *)p->data,
				       (char *)g_hash_table_lookup(s->new_state, p->data));
	return replace_at(s->dirfd, STATE_FILE, STATE_FILE, out->str, out->len, err);
}

/* ---- writing a page ------------------------------------------------------- */

/*
 * Write page (relative to the site) unless it holds these bytes already:
 * a temporary file renamed over it, so a reader never sees half a page.
 * *out_written says whether it was written.
 */
static int write_page(struct site *s, const char *page, const char *data, size_t len, bool *out_written,
		      GError **err)
{
	g_autofree char *old = NULL;
	const char *name;
	size_t old_len = 0;
	int dirfd, rc = 0;

	*out_written = false;
	if ((dirfd = page_dir(s, page, true, &name, err)) < 0)
		return -1;
	if (read_at(dirfd, name, len, &old, &old_len) <= 0 || old_len != len || memcmp(old, data, len)) {
		rc = replace_at(dirfd, name, page, data, len, err);
		*out_written = rc == 0;
	}
	close(dirfd);
	return rc;
}

/* Whether page must be made: forced, never made, made from other inputs, or gone from disk. */
static bool page_stale(struct site *s, const char *page, const char *hash)
{
	const char *had = g_hash_table_lookup(s->old_state, page);
	const char *name;
	struct stat st;
	int dirfd;
	bool regular;

	if (s->opts->full || !had || strcmp(had, hash))
		return true;
	if ((dirfd = page_dir(s, page, false, &name, NULL)) < 0)
		return true;
	regular = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	close(dirfd);
	return !regular;
}

/* Hash parts: each string then a separator no string of a page's inputs holds. */
static void hash_str(GChecksum *h, const char *v)
{
	if (v)
		g_checksum_update(h, (const guchar *)v, (gssize)strlen(v));
	g_checksum_update(h, (const guchar *)"\x1f", 1);
}

static void hash_int(GChecksum *h, gint64 v)
{
	char buf[32];

	g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, v);
	hash_str(h, buf);
}

/* ---- the store's rows, grouped -------------------------------------------- */

static gint64 *id_key(gint64 id)
{
	return g_memdup2(&id, sizeof id);
}

static int patch_order(gconstpointer a, gconstpointer b)
{
	const struct pk_store_site_patch *x = *(void *const *)a, *y = *(void *const *)b;

	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return x->patch_id < y->patch_id ? -1 : x->patch_id > y->patch_id;
}

/* Newest first; undated last; then the page name, so the order is the same every run. */
static int series_order(gconstpointer a, gconstpointer b)
{
	const struct series *x = *(void *const *)a, *y = *(void *const *)b;

	if (x->time != y->time)
		return x->time > y->time ? -1 : 1;
	return strcmp(x->page, y->page);
}

static int group(struct site *s, GError **err)
{
	g_autoptr(GHashTable) by_page = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) pairs = NULL;
	struct file *f = NULL;

	if (pk_store_site_patches(s->store, &s->patches, err) < 0 ||
	    pk_store_site_files(s->store, &pairs, err) < 0)
		return -1;
	s->series = g_ptr_array_new_with_free_func((GDestroyNotify)series_free);
	s->page_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	s->patch_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (guint i = 0; i < s->patches->len; i++) {
		struct pk_store_site_patch *p = s->patches->pdata[i];
		g_autofree char *page = series_page_of(p);
		struct series *se = g_hash_table_lookup(by_page, page);

		if (!se) {
			se = g_new0(struct series, 1);
			se->page = g_steal_pointer(&page);
			se->patches = g_ptr_array_new();
			g_ptr_array_add(s->series, se);
			g_hash_table_insert(by_page, se->page, se);
		}
		g_ptr_array_add(se->patches, p);
		se->time = MAX(se->time, p->time);
		g_hash_table_insert(s->page_of, id_key(p->patch_id), se);
		g_hash_table_insert(s->patch_of, id_key(p->patch_id), p);
	}
	for (guint i = 0; i < s->series->len; i++)
		g_ptr_array_sort(((struct series *)s->series->pdata[i])->patches, patch_order);
	g_ptr_array_sort(s->series, series_order);

	s->files = g_ptr_array_new_with_free_func((GDestroyNotify)file_free);
	s->files_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	for (guint i = 0; i < pairs->len; i++) {
		const struct pk_store_site_file *pf = pairs->pdata[i];
		GPtrArray *of;

		if (!f || strcmp(f->path, pf->file)) {
			f = g_new0(struct file, 1);
			f->path = g_strdup(pf->file);
			f->page = pk_site_file_page(pf->file);
			f->patches = g_array_new(FALSE, FALSE, sizeof(gint64));
			f->index = s->files->len;
			g_ptr_array_add(s->files, f);
		}
		g_array_append_val(f->patches, pf->patch_id);
		if (!(of = g_hash_table_lookup(s->files_of, &pf->patch_id))) {
			of = g_ptr_array_new();
			g_hash_table_insert(s->files_of, id_key(pf->patch_id), of);
		}
		g_ptr_array_add(of, f);
	}
	return 0;
}

/* ---- what every page depends on -------------------------------------------- */

static const char *const site_templates[] = {
	"site-index.html", "site-series.html", "site-patch.html", "site-file.html", "site-files.html",
	"review-body.html",
};

static int inputs_hash(struct site *s, GError **err)
{
	g_autoptr(GChecksum) h = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree char *dir = pk_data_dir();
	const struct pk_site_config *c = s->opts->config;

	hash_str(h, STATE_HEAD);
	hash_str(h, PK_VERSION);
	hash_int(h, s->opts->file_rows);
	for (size_t i = 0; i < G_N_ELEMENTS(site_templates); i++) {
		g_autofree char *path = g_build_filename(dir, "templates", site_templates[i], NULL);
		g_autofree char *text = NULL;
		g_autoptr(GError) e = NULL;

		if (!g_file_get_contents(path, &text, NULL, &e))
			return pk_error(err, PK_ERROR_FAILED, "template %s: %s", site_templates[i], e->message);
		hash_str(h, text);
	}
	hash_str(h, c ? c->url : NULL);
	hash_str(h, c ? c->source_url : NULL);
	if (c && c->archives) {
		g_autoptr(GList) names = g_list_sort(g_hash_table_get_keys(c->archives), (GCompareFunc)strcmp);

		for (GList *n = names; n; n = n->next) {
			hash_str(h, n->data);
			hash_str(h, g_hash_table_lookup(c->archives, n->data));
		}
	}
	s->inputs = g_strdup(g_checksum_get_string(h));
	return 0;
}

/* ---- what a review compared, whole: the boot logs, the .config ------------------- */

/* The texts a patch's section links, as the kernel test robot and KernelCI link theirs. */
enum { TEXT_BOOT_BEFORE, TEXT_BOOT_AFTER, TEXT_CONFIG, TEXTS };

/* The boot or build text which of p is, 0: none. */
static gint64 text_id(const struct pk_store_site_patch *p, int which)
{
	return which == TEXT_BOOT_BEFORE ? p->before_boot : which == TEXT_BOOT_AFTER ? p->after_boot
	       : p->after_build;
}

/* The page text which of p would be, NULL when p has none (nothing booted or built). */
static char *text_page(const struct pk_store_site_patch *p, int which)
{
	gint64 id = text_id(p, which);

	if (id <= 0)
		return NULL;
	return g_strdup_printf("%s/%" G_GINT64_FORMAT ".txt", which == TEXT_CONFIG ? "config" : "boot", id);
}

/* The page text which of p when this run has it (texts_write()), else NULL. */
static char *text_link(struct site *s, const struct pk_store_site_patch *p, int which)
{
	g_autofree char *page = text_page(p, which);

	return page && g_hash_table_contains(s->new_state, page) ? g_steal_pointer(&page) : NULL;
}

/*
 * The texts of p as pages of their own, each written once: a boot's
 * console and a build's .config never change.  A build from before
 * builds kept their .config (store schema 12) has none to link.
 */
static int texts_write(struct site *s, const struct pk_store_site_patch *p, GError **err)
{
	for (int which = 0; which < TEXTS; which++) {
		g_autofree char *page = text_page(p, which), *text = NULL;
		bool written;
		int rc = 1;

		if (!page || g_hash_table_contains(s->new_state, page))
			continue;
		if (page_stale(s, page, "stored")) {
			if (which == TEXT_CONFIG)
				rc = pk_store_build_config(s->store, text_id(p, which), &text, err);
			else
				rc = pk_store_boot_console(s->store, text_id(p, which), &text, err) < 0 ? -1 : 1;
			if (rc < 0 || (rc > 0 && write_page(s, page, text, strlen(text), &written, err) < 0))
				return -1;
			if (rc > 0)
				s->stats.other_written += written;
		}
		if (rc > 0)
			g_hash_table_replace(s->new_state, g_steal_pointer(&page), g_strdup("stored"));
	}
	return 0;
}

/*
 * The version of the kernel p was tested on, as its .config's head says
 * it ("# Linux/x86 6.12.118 Kernel Configuration"): "6.12.118"; NULL
 * when its base build kept no .config (the index shows the commit then).
 */
static const char *base_version(struct site *s, const struct pk_store_site_patch *p)
{
	g_autofree char *config = NULL;
	const char *v;
	char *version = NULL;

	if (p->before_build <= 0)
		return NULL;
	if ((v = g_hash_table_lookup(s->versions, &p->before_build)))
		return *v ? v : NULL;
	if (pk_store_build_config(s->store, p->before_build, &config, NULL) > 0) {
		g_auto(GStrv) lines = g_strsplit(config, "\n", 5);

		for (char **l = lines; *l && !version; l++) {
			static const char tail[] = " Kernel Configuration";
			const char *arch = strstr(*l, "# Linux/");
			const char *sp = arch == *l ? strchr(arch + 2, ' ') : NULL;

			if (sp && g_str_has_suffix(sp, tail) && strlen(sp + 1) > strlen(tail))
				version = g_strndup(sp + 1, strlen(sp + 1) - strlen(tail));
		}
	}
	g_hash_table_insert(s->versions, g_memdup2(&p->before_build, sizeof p->before_build),
			    version ? version : g_strdup(""));
	return version;
}

/* The inputs of one patch on a page: its row, its review, the files it names. */
static void hash_patch(struct site *s, GChecksum *h, const struct pk_store_site_patch *p)
{
	GPtrArray *files = g_hash_table_lookup(s->files_of, &p->patch_id);

	hash_int(h, p->patch_id);
	hash_int(h, p->review_id);
	hash_int(h, p->reviews);
	hash_int(h, p->time);
	hash_int(h, p->number);
	hash_str(h, p->subject);
	hash_str(h, p->author);
	hash_str(h, p->verdict);
	hash_str(h, p->source);
	hash_str(h, p->message_id);
	hash_str(h, p->commit);
	hash_str(h, p->base_commit);
	for (int which = 0; which < TEXTS; which++) {
		g_autofree char *page = text_link(s, p, which);

		hash_str(h, page);
	}
	for (guint i = 0; files && i < files->len; i++)
		hash_str(h, ((struct file *)files->pdata[i])->path);
}

/* ---- a series page ----------------------------------------------------------- */

static void add_str(JsonBuilder *b, const char *name, const char *value)
{
	json_builder_set_member_name(b, name);
	if (value)
		json_builder_add_string_value(b, value);
	else
		json_builder_add_null_value(b);
}

static void add_bool(JsonBuilder *b, const char *name, gboolean value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_boolean_value(b, value);
}

static const char *archive_of(struct site *s, const struct pk_store_site_patch *p)
{
	const struct pk_site_config *c = s->opts->config;

	return c && c->archives && p->source ? g_hash_table_lookup(c->archives, p->source) : NULL;
}

/* The review of p as its section of the series page (site-patch.html around review-body.html). */
static char *patch_section(struct site *s, const struct pk_store_site_patch *p, GError **err)
{
	g_autofree char *model_json = NULL, *date = date_text(p->time), *anchor = NULL, *older = NULL;
	g_autofree char *archive = pk_reply_archive_link(archive_of(s, p), p->message_id);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) why = NULL;
	GPtrArray *files = g_hash_table_lookup(s->files_of, &p->patch_id);
	JsonObject *o;
	JsonArray *fa, *ta;
	char *html;

	anchor = g_strdup_printf("p%" G_GINT64_FORMAT, p->patch_id);
	if (pk_store_review_get(s->store, p->review_id, &model_json, NULL, err) < 0)
		return NULL;
	if (!json_parser_load_from_data(parser, model_json, -1, &why) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser)))
		goto failed;
	o = json_node_get_object(json_parser_get_root(parser));
	json_object_set_string_member(o, "site_anchor", anchor);
	json_object_set_string_member(o, "site_root", "../");
	json_object_set_string_member(o, "site_date", *date ? date : NULL);
	json_object_set_string_member(o, "site_author", p->author);
	json_object_set_string_member(o, "site_source", p->source);
	json_object_set_string_member(o, "site_archive", pk_html_url_ok(archive) ? archive : NULL);
	json_object_set_string_member(o, "site_message_id", p->message_id);
	json_object_set_string_member(o, "site_commit", p->commit);
	ta = json_array_new();
	for (int which = 0; which < TEXTS; which++) {
		static const char *const name[TEXTS] = { "the boot log before", "the boot log after",
							 "the .config" };
		g_autofree char *page = text_link(s, p, which);
		JsonObject *to;

		if (!page)
			continue;
		to = json_object_new();
		json_object_set_string_member(to, "name", name[which]);
		json_object_set_string_member(to, "page", page);
		json_array_add_object_element(ta, to);
	}
	json_object_set_boolean_member(o, "site_has_texts", json_array_get_length(ta) > 0);
	json_object_set_array_member(o, "site_texts", ta);
	/* the subject as stored for the patch: an older model may lack it */
	if (!json_object_has_member(o, "subject"))
		json_object_set_string_member(o, "subject", p->subject ? p->subject : "");
	if (p->reviews > 1)
		older = g_strdup_printf("The patch was reviewed %" G_GINT64_FORMAT " times; this is the newest "
					"review (%" G_GINT64_FORMAT "): printkbot history --message-id or --commit "
					"lists them.", p->reviews, p->review_id);
	json_object_set_string_member(o, "site_older", older);
	fa = json_array_new();
	for (guint i = 0; files && i < files->len; i++) {
		const struct file *f = files->pdata[i];
		JsonObject *fo = json_object_new();

		json_object_set_string_member(fo, "file", f->path);
		json_object_set_string_member(fo, "page", f->page);
		json_array_add_object_element(fa, fo);
	}
	json_object_set_boolean_member(o, "site_has_files", json_array_get_length(fa) > 0);
	json_object_set_array_member(o, "site_files", fa);
	if ((html = pk_review_tmpl_render(s->t_patch, json_parser_get_root(parser), &s->html, &why)))
		return html;
failed:
	/* a review that does not render is said on its page; the rest of the site goes on */
	s->stats.failed++;
	{
		g_autofree char *subject = pk_html_escape(p->subject);
		g_autofree char *msg = pk_html_escape(why ? why->message : "not a review model");

		return g_strdup_printf("<section class=\"patch\" id=\"%s\">\n<h2>%s</h2>\n<p class=\"note\">"
				       "Review %" G_GINT64_FORMAT " could not be shown: %s</p>\n</section>\n",
				       anchor, subject, p->review_id, msg);
	}
}

static char *series_title(const struct series *se)
{
	const struct pk_store_site_patch *first = se->patches->pdata[0];
	const char *subject = first->subject ? first->subject : "(no subject)";

	if (se->patches->len == 1)
		return g_strdup(subject);
	return g_strdup_printf("%s (%u patches)", subject, se->patches->len);
}

static int series_write(struct site *s, struct series *se, GError **err)
{
	g_autoptr(GChecksum) h = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GString) sections = g_string_new(NULL);
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *title = series_title(se), *page = NULL;
	const char *raw[] = { "patches_html", NULL, NULL };
	const struct pk_review_html html = { s->html.source_url, raw };
	bool written;

	hash_str(h, s->inputs);
	for (guint i = 0; i < se->patches->len; i++) {
		if (texts_write(s, se->patches->pdata[i], err) < 0)
			return -1;
		hash_patch(s, h, se->patches->pdata[i]);
	}
	se->hash = g_strdup(g_checksum_get_string(h));
	g_hash_table_replace(s->new_state, g_strdup(se->page), g_strdup(se->hash));
	if (!page_stale(s, se->page, se->hash))
		return 0;
	s->stats.series_rendered++;
	json_builder_begin_object(b);
	add_str(b, "title", title);
	add_str(b, "root", "../");
	add_str(b, "tool", "printkbot " PK_VERSION);
	json_builder_set_member_name(b, "patches");
	json_builder_begin_array(b);
	for (guint i = 0; i < se->patches->len; i++) {
		const struct pk_store_site_patch *p = se->patches->pdata[i];
		g_autofree char *section = patch_section(s, p, err);
		g_autofree char *anchor = g_strdup_printf("p%" G_GINT64_FORMAT, p->patch_id);
		g_autofree char *date = date_text(p->time);
		g_autofree char *position = p->total > 1 ? g_strdup_printf("%d/%d", p->number, p->total)
							 : g_strdup_printf("%u", i + 1);
		enum pk_verdict v;

		if (!section)
			return -1;
		g_string_append(sections, section);
		json_builder_begin_object(b);
		add_str(b, "anchor", anchor);
		add_str(b, "position", position);
		add_str(b, "subject", p->subject ? p->subject : "(no subject)");
		add_str(b, "author", p->author);
		add_str(b, "date", date);
		add_str(b, "verdict", p->verdict);
		add_str(b, "class", pk_verdict_parse(p->verdict, &v) && pk_verdict_is_bad(v) ? "bad" : "");
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	model = json_builder_get_root(b);
	raw[1] = sections->str;
	g_autofree char *text = pk_review_tmpl_render(s->t_series, model, &html, err);
	if (!text || write_page(s, se->page, text, strlen(text), &written, err) < 0)
		return -1;
	s->stats.series_written += written;
	return 0;
}

/* ---- a file page --------------------------------------------------------------- */

static char *row_where(const struct pk_history_row *r)
{
	if (r->func)
		return g_strdup_printf("%s:%d %s()", r->file, r->line, r->func);
	return g_strdup_printf("%s:%d", r->file, r->line);
}

static int file_write(struct site *s, const struct file *f, GError **err)
{
	g_autoptr(GChecksum) h = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(JsonBuilder) b = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *root = root_of(f->page), *text = NULL, *count = NULL, *shown = NULL;
	struct pk_history_filter filter = { .file = f->path };
	unsigned limit = s->opts->file_rows ? s->opts->file_rows : FILE_ROWS;
	bool written;

	hash_str(h, s->inputs);
	hash_str(h, f->path);
	/* each patch and its series' page and hash: a patch's rows change with its review */
	for (guint i = 0; i < f->patches->len; i++) {
		gint64 id = g_array_index(f->patches, gint64, i);
		const struct series *se = g_hash_table_lookup(s->page_of, &id);

		hash_int(h, id);
		hash_str(h, se ? se->page : NULL);
		hash_str(h, se ? se->hash : NULL);
	}
	g_hash_table_replace(s->new_state, g_strdup(f->page), g_strdup(g_checksum_get_string(h)));
	if (!page_stale(s, f->page, g_checksum_get_string(h)))
		return 0;
	s->stats.files_rendered++;
	filter.limit = limit + 1;
	if (pk_store_history(s->store, &rows, &filter, err) < 0)
		return -1;
	b = json_builder_new();
	json_builder_begin_object(b);
	add_str(b, "file", f->path);
	add_str(b, "root", root);
	add_str(b, "tool", "printkbot " PK_VERSION);
	count = g_strdup_printf("%u patch%s", f->patches->len, f->patches->len == 1 ? "" : "es");
	shown = g_strdup_printf("%u", limit);
	add_str(b, "count", count);
	add_str(b, "shown", shown);
	add_bool(b, "more", rows->len > limit);
	json_builder_set_member_name(b, "history");
	json_builder_begin_array(b);
	for (guint i = 0; i < rows->len && i < limit; i++) {
		const struct pk_history_row *r = rows->pdata[i];
		const struct series *se = g_hash_table_lookup(s->page_of, &r->patch_id);
		const char *page = se ? se->page : NULL;
		g_autofree char *date = date_text(r->time), *where = row_where(r), *link = NULL;
		/* the patch's base, for the source link */
		const struct pk_store_site_patch *p = g_hash_table_lookup(s->patch_of, &r->patch_id);
		link = page ? g_strdup_printf("%s#p%" G_GINT64_FORMAT, page, r->patch_id) : g_strdup("index.html");
		json_builder_begin_object(b);
		add_str(b, "date", date);
		add_str(b, "page", link);
		add_str(b, "subject", r->subject ? r->subject : "(no subject)");
		add_str(b, "verdict", r->verdict);
		add_str(b, "stage", r->stage);
		add_str(b, "kind", r->kind);
		add_str(b, "where", where);
		add_str(b, "file", r->file);
		json_builder_set_member_name(b, "line");
		json_builder_add_int_value(b, r->line);
		add_str(b, "base_commit", p ? p->base_commit : NULL);
		add_str(b, "old_side", r->old_text);
		add_str(b, "new_side", r->new_text);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	model = json_builder_get_root(b);
	if (!(text = pk_review_tmpl_render(s->t_file, model, &s->html, err)) ||
	    write_page(s, f->page, text, strlen(text), &written, err) < 0)
		return -1;
	s->stats.files_written += written;
	return 0;
}

/* ---- the index, its data, the list of files, the static files --------------------- */

/* The verdicts of a series' patches, each once, in patch order: "console-changed, no-churn". */
static char *series_verdicts(const struct series *se, bool *out_bad)
{
	g_autoptr(GString) v = g_string_new(NULL);

	*out_bad = false;
	for (guint i = 0; i < se->patches->len; i++) {
		const struct pk_store_site_patch *p = se->patches->pdata[i];
		g_autofree char *word = g_strdup_printf(", %s,", p->verdict ? p->verdict : "?");
		g_autofree char *have = g_strdup_printf(", %s,", v->str);
		enum pk_verdict verdict;

		if (pk_verdict_parse(p->verdict, &verdict) && pk_verdict_is_bad(verdict))
			*out_bad = true;
		if (!strstr(have, word))
			g_string_append_printf(v, "%s%s", v->len ? ", " : "", p->verdict ? p->verdict : "?");
	}
	return g_string_free(g_steal_pointer(&v), FALSE);
}

/* The base a series went on, as the index shows it: its kernel's version, else its commit. */
static char *base_shown(struct site *s, const struct pk_store_site_patch *p)
{
	const char *version = base_version(s, p);

	if (version)
		return g_strdup(version);
	return p->base_commit ? g_strndup(p->base_commit, 12) : g_strdup("");
}

/*
 * A source as the index shows it: a file `printkbot test` read is named
 * by its path on the machine that ran it, which says nothing to a reader
 * of the site and too much about that machine: its file name.  New.
 */
static char *source_shown(const char *source)
{
	if (!source)
		return g_strdup("");
	return g_path_is_absolute(source) ? g_path_get_basename(source) : g_strdup(source);
}

/*
 * data.js: window.PK_SITE = {"files": [[path, page]...], "series":
 * [[page, date, source, author, subject, verdicts, base, [file
 * indexes], bad, patches]...]}, newest first, for site.js.  JSON is
 * JavaScript; a < and the two line separators JavaScript once refused
 * are written as \u escapes, so nothing in it reads as markup either.
 */
static char *data_js(struct site *s)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *json = NULL;
	GString *out;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "files");
	json_builder_begin_array(b);
	for (guint i = 0; i < s->files->len; i++) {
		const struct file *f = s->files->pdata[i];

		json_builder_begin_array(b);
		json_builder_add_string_value(b, f->path);
		json_builder_add_string_value(b, f->page);
		json_builder_end_array(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "series");
	json_builder_begin_array(b);
	for (guint i = 0; i < s->series->len; i++) {
		const struct series *se = s->series->pdata[i];
		const struct pk_store_site_patch *first = se->patches->pdata[0];
		g_autofree char *date = date_text(se->time), *base = base_shown(s, first);
		g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
		g_autofree char *source = source_shown(first->source);
		bool bad;
		g_autofree char *verdicts = series_verdicts(se, &bad);

		json_builder_begin_array(b);
		json_builder_add_string_value(b, se->page);
		json_builder_add_string_value(b, date);
		json_builder_add_string_value(b, source);
		json_builder_add_string_value(b, first->author ? first->author : "");
		json_builder_add_string_value(b, first->subject ? first->subject : "(no subject)");
		json_builder_add_string_value(b, verdicts);
		json_builder_add_string_value(b, base);
		json_builder_begin_array(b);
		for (guint k = 0; k < se->patches->len; k++) {
			const struct pk_store_site_patch *p = se->patches->pdata[k];
			GPtrArray *files = g_hash_table_lookup(s->files_of, &p->patch_id);

			for (guint j = 0; files && j < files->len; j++) {
				const struct file *f = files->pdata[j];

				if (g_hash_table_add(seen, GUINT_TO_POINTER(f->index + 1)))
					json_builder_add_int_value(b, f->index);
			}
		}
		json_builder_end_array(b);
		json_builder_add_int_value(b, bad);
		json_builder_add_int_value(b, se->patches->len);
		json_builder_end_array(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	json_generator_set_root(gen, root);
	json = json_generator_to_data(gen, NULL);
	out = g_string_sized_new(strlen(json) + 64);
	g_string_append(out, "// written by printkbot report --site: every series, for site.js\nwindow.PK_SITE = ");
	for (const char *p = json; *p; p++) {
		if (*p == '<')
			g_string_append(out, "\\u003c");
		else if (!strncmp(p, "\xe2\x80\xa8", 3) || !strncmp(p, "\xe2\x80\xa9", 3)) {
			g_string_append(out, p[2] == '\xa8' ? "\\u2028" : "\\u2029");
			p += 2;
		} else
			g_string_append_c(out, *p);
	}
	g_string_append(out, ";\n");
	return g_string_free(out, FALSE);
}

static gint str_order(gconstpointer a, gconstpointer b, gpointer data)
{
	return strcmp(a, b);
}

static int index_write(struct site *s, GError **err)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GTree) verdicts = g_tree_new_full(str_order, NULL, NULL, NULL);
	g_autoptr(GTree) dirs = g_tree_new_full(str_order, NULL, g_free, NULL);
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *text = NULL, *generated = g_date_time_format(now, "%Y-%m-%d"), *n_series = NULL,
			*n_patches = NULL, *shown = NULL;
	bool written;

	for (guint i = 0; i < s->patches->len; i++) {
		const struct pk_store_site_patch *p = s->patches->pdata[i];

		if (p->verdict)
			g_tree_insert(verdicts, p->verdict, p->verdict);
	}
	for (guint i = 0; i < s->files->len && (guint)g_tree_nnodes(dirs) < SUBSYSTEMS_MAX; i++) {
		const struct file *f = s->files->pdata[i];
		const char *slash = strchr(f->path, '/');

		/* drivers/tty/ and kernel/: the first two directories, or one */
		if (slash && strchr(slash + 1, '/'))
			slash = strchr(slash + 1, '/');
		if (slash)
			g_tree_insert(dirs, g_strndup(f->path, (gsize)(slash - f->path + 1)), NULL);
	}
	n_series = g_strdup_printf("%u", s->series->len);
	n_patches = g_strdup_printf("%u", s->patches->len);
	shown = g_strdup_printf("%u", MIN(s->series->len, INDEX_ROWS));
	json_builder_begin_object(b);
	add_str(b, "tool", "printkbot " PK_VERSION);
	add_str(b, "generated", generated);
	add_str(b, "series_count", n_series);
	add_str(b, "patch_count", n_patches);
	add_str(b, "shown", shown);
	json_builder_set_member_name(b, "verdicts");
	json_builder_begin_array(b);
	json_builder_add_string_value(b, "");   /* a list of strings, never empty: it is a strv */
	for (GTreeNode *n = g_tree_node_first(verdicts); n; n = g_tree_node_next(n))
		json_builder_add_string_value(b, g_tree_node_key(n));
	json_builder_end_array(b);
	json_builder_set_member_name(b, "subsystems");
	json_builder_begin_array(b);
	json_builder_add_string_value(b, "");
	for (GTreeNode *n = g_tree_node_first(dirs); n; n = g_tree_node_next(n))
		json_builder_add_string_value(b, g_tree_node_key(n));
	json_builder_end_array(b);
	json_builder_set_member_name(b, "rows");
	json_builder_begin_array(b);
	for (guint i = 0; i < s->series->len && i < INDEX_ROWS; i++) {
		const struct series *se = s->series->pdata[i];
		const struct pk_store_site_patch *first = se->patches->pdata[0];
		g_autofree char *date = date_text(se->time), *base = base_shown(s, first);
		g_autofree char *title = series_title(se);
		g_autofree char *source = source_shown(first->source);
		bool bad;
		g_autofree char *v = series_verdicts(se, &bad);

		json_builder_begin_object(b);
		add_str(b, "page", se->page);
		add_str(b, "date", date);
		add_str(b, "source", source);
		add_str(b, "author", first->author ? first->author : "");
		add_str(b, "subject", title);
		add_str(b, "verdicts", v);
		add_str(b, "base", base);
		add_str(b, "class", bad ? "bad" : "");
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	model = json_builder_get_root(b);
	if (!(text = pk_review_tmpl_render(s->t_index, model, NULL, err)) ||
	    write_page(s, "index.html", text, strlen(text), &written, err) < 0)
		return -1;
	s->stats.other_written += written;
	g_clear_pointer(&text, g_free);
	text = data_js(s);
	if (write_page(s, "data.js", text, strlen(text), &written, err) < 0)
		return -1;
	s->stats.other_written += written;
	return 0;
}

static int files_list_write(struct site *s, GError **err)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL, *count = g_strdup_printf("%u", s->files->len);
	bool written;

	json_builder_begin_object(b);
	add_str(b, "tool", "printkbot " PK_VERSION);
	add_str(b, "count", count);
	json_builder_set_member_name(b, "files");
	json_builder_begin_array(b);
	for (guint i = 0; i < s->files->len; i++) {
		const struct file *f = s->files->pdata[i];
		g_autofree char *n = g_strdup_printf("%u patch%s", f->patches->len, f->patches->len == 1 ? "" : "es");

		json_builder_begin_object(b);
		add_str(b, "file", f->path);
		add_str(b, "page", f->page);
		add_str(b, "patches", n);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	model = json_builder_get_root(b);
	if (!(text = pk_review_tmpl_render(s->t_files, model, NULL, err)) ||
	    write_page(s, "files.html", text, strlen(text), &written, err) < 0)
		return -1;
	s->stats.other_written += written;
	return 0;
}

/* site.js and site.css, copied from templates/. */
static int static_write(struct site *s, GError **err)
{
	static const char *const names[] = { "site.js", "site.css" };
	g_autofree char *dir = pk_data_dir();

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *path = g_build_filename(dir, "templates", names[i], NULL);
		g_autofree char *text = NULL;
		g_autoptr(GError) e = NULL;
		gsize len;
		bool written;

		if (!g_file_get_contents(path, &text, &len, &e))
			return pk_error(err, PK_ERROR_FAILED, "%s: %s", names[i], e->message);
		if (write_page(s, names[i], text, len, &written, err) < 0)
			return -1;
		s->stats.other_written += written;
	}
	return 0;
}

/* Pages the last run made and this one did not: removed (only names the site makes). */
static void remove_stale(struct site *s)
{
	GHashTableIter it;
	gpointer page;

	g_hash_table_iter_init(&it, s->old_state);
	while (g_hash_table_iter_next(&it, &page, NULL)) {
		const char *name;
		int dirfd;

		if (g_hash_table_contains(s->new_state, page) || strstr(page, "..") ||
		    !(g_str_has_prefix(page, "series/") || g_str_has_prefix(page, "files/")))
			continue;
		/* below a directory of the site's own only: a link is removed itself, never followed */
		if ((dirfd = page_dir(s, page, false, &name, NULL)) < 0)
			continue;
		if (unlinkat(dirfd, name, 0) == 0)
			s->stats.removed++;
		close(dirfd);
	}
}

/* ---- the run ------------------------------------------------------------------------ */

static void site_clear(struct site *s)
{
	g_clear_pointer(&s->old_state, g_hash_table_unref);
	g_clear_pointer(&s->new_state, g_hash_table_unref);
	g_clear_pointer(&s->inputs, g_free);
	g_clear_pointer(&s->t_index, pk_review_tmpl_free);
	g_clear_pointer(&s->t_series, pk_review_tmpl_free);
	g_clear_pointer(&s->t_patch, pk_review_tmpl_free);
	g_clear_pointer(&s->t_file, pk_review_tmpl_free);
	g_clear_pointer(&s->t_files, pk_review_tmpl_free);
	g_clear_pointer(&s->page_of, g_hash_table_unref);
	g_clear_pointer(&s->patch_of, g_hash_table_unref);
	g_clear_pointer(&s->files_of, g_hash_table_unref);
	g_clear_pointer(&s->versions, g_hash_table_unref);
	g_clear_pointer(&s->series, g_ptr_array_unref);
	g_clear_pointer(&s->files, g_ptr_array_unref);
	g_clear_pointer(&s->patches, g_ptr_array_unref);
}

/*
 * DIR opened (made when missing: DIR itself is the user's to name, a
 * link to a directory included) and locked for this run: another run on
 * it is waited for.  *out_dirfd is DIR, *out_fd the lock.
 */
static int site_lock(const char *dir, int *out_dirfd, int *out_fd, GError **err)
{
	int fd, dirfd;

	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot make %s: %s", dir, g_strerror(errno));
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot open %s: %s", dir, g_strerror(errno));
	if ((fd = openat(dirfd, LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		int e = errno;

		close(dirfd);
		return pk_error(err, PK_ERROR_FAILED, "cannot open %s/%s: %s", dir, LOCK_FILE, g_strerror(e));
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;

			close(fd);
			close(dirfd);
			return pk_error(err, PK_ERROR_FAILED, "cannot lock %s/%s: %s", dir, LOCK_FILE, g_strerror(e));
		}
	}
	*out_dirfd = dirfd;
	*out_fd = fd;
	return 0;
}

static int site_run(struct site *s, GError **err)
{
	if (pk_review_tmpl_load(&s->t_index, "site-index.html", err) < 0 ||
	    pk_review_tmpl_load(&s->t_series, "site-series.html", err) < 0 ||
	    pk_review_tmpl_load(&s->t_patch, "site-patch.html", err) < 0 ||
	    pk_review_tmpl_load(&s->t_file, "site-file.html", err) < 0 ||
	    pk_review_tmpl_load(&s->t_files, "site-files.html", err) < 0 ||
	    inputs_hash(s, err) < 0 || group(s, err) < 0)
		return -1;
	s->stats.series = s->series->len;
	s->stats.files = s->files->len;
	/* series first: a file page's hash holds those of the series pages it links to */
	for (guint i = 0; i < s->series->len; i++) {
		if (series_write(s, s->series->pdata[i], err) < 0)
			return -1;
		if (i % 1000 == 999)
			pk_progress("site: %u of %u series", i + 1, s->series->len);
	}
	for (guint i = 0; i < s->files->len; i++) {
		if (file_write(s, s->files->pdata[i], err) < 0)
			return -1;
		if (i % 100 == 99)
			pk_progress("site: %u of %u files", i + 1, s->files->len);
	}
	if (index_write(s, err) < 0 || files_list_write(s, err) < 0 || static_write(s, err) < 0)
		return -1;
	remove_stale(s);
	return state_write(s, err);
}

int pk_site_write(struct pk_store *store, const struct pk_site_opts *opts, struct pk_site_stats *out,
		  GError **err)
{
	struct site s = { .opts = opts, .store = store, .dirfd = -1 };
	int fd = -1, rc;

	if (site_lock(opts->dir, &s.dirfd, &fd, err) < 0)
		return -1;
	s.html.source_url = opts->config ? opts->config->source_url : NULL;
	s.old_state = state_read(&s);
	s.new_state = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	s.versions = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	rc = site_run(&s, err);
	if (rc == 0)
		*out = s.stats;
	site_clear(&s);
	close(fd);
	close(s.dirfd);
	return rc;
}

void pk_site_config_clear(struct pk_site_config *site)
{
	g_free(site->url);
	g_free(site->source_url);
	if (site->archives)
		g_hash_table_unref(site->archives);
	memset(site, 0, sizeof *site);
}
