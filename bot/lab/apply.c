/*
 * apply.c - patches become commits in the lab's tree, through libgit2.
 */
#include "lab/apply.h"
#include "base/profile.h"

#include <string.h>

#include "lab/pathkind.h"
#include "lab/repo.h"
#include "lab/repo-git.h"
#include "base/util.h"

/* Where the apply got to, so a failure can name the file and the hunk. */
struct apply_progress {
	char *file;
	unsigned hunk;            /* 1-based within file */
	char header[128];         /* "@@ -10,3 +10,4 @@" */
	GHashTable *leave_out;    /* paths whose deltas are skipped (see apply_to_tree()), or NULL */
};

static int on_delta(const git_diff_delta *delta, void *payload)
{
	struct apply_progress *p = payload;

	g_free(p->file);
	p->file = g_strdup(delta->new_file.path ? delta->new_file.path : delta->old_file.path);
	p->hunk = 0;
	p->header[0] = '\0';
	/* > 0: libgit2 skips this delta and goes on with the next */
	return p->leave_out && g_hash_table_contains(p->leave_out, p->file) ? 1 : 0;
}

static int on_hunk(const git_diff_hunk *hunk, void *payload)
{
	struct apply_progress *p = payload;
	size_t n = hunk->header_len;

	p->hunk++;
	while (n && (hunk->header[n - 1] == '\n' || hunk->header[n - 1] == '\r'))
		n--;
	/* keep only "@@ -a,b +c,d @@", not the function context after it */
	const char *end = g_strstr_len(hunk->header + 2, n > 2 ? n - 2 : 0, "@@");
	if (end)
		n = end + 2 - hunk->header;
	g_strlcpy(p->header, hunk->header, MIN(n + 1, sizeof p->header));
	return 0;
}

/* "Subject: [PATCH v2 3/7] sched: foo" -> "sched: foo" (what git am keeps). */
static char *commit_subject(const struct pk_patch *patch)
{
	const char *s = patch->subject ? patch->subject : "printkbot: patch under test";

	while (*s == '[') {
		const char *close = strchr(s, ']');
		if (!close)
			break;
		s = close + 1;
		while (*s == ' ')
			s++;
	}
	return g_strdup(*s ? s : "printkbot: patch under test");
}

/*
 * A name or address as libgit2 takes it into a signature: it refuses '<'
 * and '>' (they delimit the address), which a quoted From display name
 * may hold ("Dev <Team>" <dev@x.org>), and an empty one.  The brackets
 * become parentheses, line breaks blanks; caller frees.
 */
static char *signature_part(const char *s, const char *fallback)
{
	char *out = g_strdup(s ? s : "");

	for (char *p = out; *p; p++)
		*p = *p == '<' ? '(' : *p == '>' ? ')' : *p == '\n' || *p == '\r' ? ' ' : *p;
	if (!*g_strstrip(out)) {
		g_free(out);
		return g_strdup(fallback);
	}
	return out;
}

static int make_signature(git_signature **out, const struct pk_patch *patch)
{
	g_autofree char *name = signature_part(patch->author_name ? patch->author_name : patch->author,
					       "unknown");
	g_autofree char *email = signature_part(patch->author_email, "unknown@invalid");

	if (patch->time)
		return git_signature_new(out, name, email, patch->time, patch->tz_minutes);
	/* a plain diff has no date: a fixed one keeps the commit id reproducible */
	return git_signature_new(out, name, email, 1700000000, 0);
}

/* Commit tree on parent with the patch's author and message; id into out. */
static int commit_tree(git_oid *out, git_repository *repo, git_commit *parent, git_tree *tree,
		       const struct pk_patch *patch, GError **err)
{
	git_signature *author = NULL, *committer = NULL;
	g_autofree char *subject = commit_subject(patch);
	g_autofree char *message = patch->description
		? g_strdup_printf("%s\n\n%s\n", subject, patch->description)
		: g_strdup_printf("%s\n", subject);
	const git_commit *parents[] = { parent };
	int rc = -1;

	if (make_signature(&author, patch) < 0 ||
	    git_signature_new(&committer, "printkbot", "printkbot@localhost",
			      author->when.time, 0) < 0) {
		pk_git_fail(err, "making the commit signature");
		goto cleanup;
	}
	if (git_commit_create(out, repo, NULL, author, committer, "UTF-8", message,
			      tree, 1, parents) < 0) {
		pk_git_fail(err, "committing the applied patch");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_signature_free(author);
	git_signature_free(committer);
	return rc;
}

/* The lines of a blob in tree at path, or NULL when there is none. */
static GPtrArray *tree_file_lines(git_repository *repo, git_tree *tree, const char *path)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	GPtrArray *lines = NULL;

	if (git_tree_entry_bypath(&entry, tree, path) == 0 &&
	    git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) == 0) {
		g_autofree char *text = g_strndup(git_blob_rawcontent(blob), git_blob_rawsize(blob));
		char **split = g_strsplit(text, "\n", -1);

		lines = g_ptr_array_new_with_free_func(g_free);
		for (char **l = split; *l; l++)
			g_ptr_array_add(lines, *l);
		g_free(split);  /* the strings now belong to lines */
	}
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return lines;
}

static gboolean preimage_matches_at(GPtrArray *file, const struct pk_hunk *h, int at)
{
	int n = 0;

	for (guint i = 0; i < h->lines->len; i++) {
		const struct pk_diff_line *l = h->lines->pdata[i];
		if (l->kind == '+')
			continue;
		if (at + n >= (int)file->len || strcmp(file->pdata[at + n], l->text))
			return FALSE;
		n++;
	}
	return TRUE;
}

/* Where hunk h's pre-image starts in file (0-based), searching outward from want; -1 if nowhere. */
static int find_preimage(GPtrArray *file, const struct pk_hunk *h, int want)
{
	for (int d = 0; d <= (int)file->len; d++) {
		if (want - d >= 0 && preimage_matches_at(file, h, want - d))
			return want - d;
		if (d && want + d < (int)file->len && preimage_matches_at(file, h, want + d))
			return want + d;
	}
	return -1;
}

/* Lines of a hunk still to come after its header (old and new side counts). */
struct hunk_left {
	int old, new;
};

static void hunk_left_take(struct hunk_left *left, const char *line)
{
	if (line[0] == ' ' || line[0] == '\0')
		left->old--, left->new--;
	else if (line[0] == '-')
		left->old--;
	else if (line[0] == '+')
		left->new--;
}

/*
 * libgit2 reads only git's diff format: a file starts with "diff --git".
 * For a plain unified diff (diff -u, quilt), the header line is made from
 * the parsed paths, with the mode line a new or deleted file needs.
 */
static void add_git_header(GString *out, const struct pk_diff_file *f)
{
	const char *a = f->old_path ? f->old_path : f->new_path;
	const char *b = f->new_path ? f->new_path : f->old_path;

	g_string_append_printf(out, "diff --git a/%s b/%s\n", a, b);
	if (!f->old_path)
		g_string_append(out, "new file mode 100644\n");
	else if (!f->new_path)
		g_string_append(out, "deleted file mode 100644\n");
}

/*
 * The diff as libgit2 will apply it.  libgit2 applies a hunk only at the
 * line its header names (no offset search; pygit2 issue #1235), while a
 * mailed patch is made against another tree and nearly always lands some
 * lines away.  So each hunk is first located the way git apply does it
 * (the exact pre-image, nearest to where the header says, no fuzz) and its
 * header rewritten; libgit2 then applies and still checks every line.
 * Plain unified diffs get git's file header.  Without a repo no hunk is
 * relocated (pk_apply_diff_text).  Caller frees.
 */
static char *prepare_diff(git_repository *repo, git_tree *tree, const struct pk_patch *patch)
{
	g_auto(GStrv) raw = NULL;
	GString *out;
	gboolean git_format = strstr(patch->diff, "\ndiff --git ") || g_str_has_prefix(patch->diff, "diff --git ");
	guint file_i = 0, hunk_i = 0, header_i = 0;
	g_autoptr(GPtrArray) lines = NULL;
	struct hunk_left left = { 0 };
	int offset = 0;

	if (patch->error)
		return g_strdup(patch->diff);
	raw = g_strsplit(patch->diff, "\n", -1);
	out = g_string_sized_new(strlen(patch->diff) + 64);
	for (char **l = raw; *l; l++) {
		const struct pk_diff_file *f = file_i < patch->files->len ? patch->files->pdata[file_i] : NULL;

		if (left.old > 0 || left.new > 0) {
			hunk_left_take(&left, *l);
			goto copy;
		}
		if (!git_format && g_str_has_prefix(*l, "--- ") && l[1] && g_str_has_prefix(l[1], "+++ ") &&
		    header_i < patch->files->len)
			add_git_header(out, patch->files->pdata[header_i++]);
		if (g_str_has_prefix(*l, "@@ -") && f) {
			while (f && hunk_i >= f->hunks->len) {
				f = ++file_i < patch->files->len ? patch->files->pdata[file_i] : NULL;
				hunk_i = 0;
				g_clear_pointer(&lines, g_ptr_array_unref);
				offset = 0;
			}
			if (!f)
				goto copy;
			const struct pk_hunk *h = f->hunks->pdata[hunk_i++];
			left.old = h->old_count;
			left.new = h->new_count;
			if (hunk_i == 1 && f->old_path && repo)
				lines = tree_file_lines(repo, tree, f->old_path);
			int at = lines && h->old_count ? find_preimage(lines, h, h->old_start - 1 + offset) : -1;
			if (at >= 0 && at != h->old_start - 1) {
				const char *rest = strstr(*l + 4, " @@");
				int delta = at + 1 - h->old_start;
				offset = delta;
				g_string_append_printf(out, "@@ -%d,%d +%d,%d%s\n", at + 1, h->old_count,
						       h->new_start + delta, h->new_count, rest ? rest : " @@");
				continue;
			}
		}
copy:
		g_string_append(out, *l);
		if (l[1])
			g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}


/*
 * The policy (policy.h) judged the paths of the parsed patch (patch.h),
 * but libgit2 applies the deltas it reads itself, and those can differ: a
 * "rename to" or "copy to" path, a quoted name, a mode written
 * "0120000".  So every delta must be a change of a regular file at a
 * path the parsed patch names, or the patch is refused here: a patch the
 * policy allowed only ever changes what the policy saw.  NULL when it is;
 * else why not (caller frees).
 */
static char *delta_refusal(git_diff *diff, const struct pk_patch *patch)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		if (f->old_path)
			g_hash_table_add(seen, f->old_path);
		if (f->new_path)
			g_hash_table_add(seen, f->new_path);
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const git_diff_file *sides[] = { &d->old_file, &d->new_file };

		if (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED)
			return g_strdup_printf("%s: git reads a %s to %s, which the bot never applies", d->old_file.path,
					       d->status == GIT_DELTA_RENAMED ? "rename" : "copy", d->new_file.path);
		for (int k = 0; k < 2; k++) {
			const git_diff_file *f = sides[k];

			if (f->mode && f->mode != GIT_FILEMODE_BLOB && f->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
				return g_strdup_printf("%s: git reads mode %06o (%s), which the bot never applies", f->path,
						       f->mode, f->mode == GIT_FILEMODE_LINK ? "a symbolic link" : "not a file");
			if (f->path && !g_hash_table_contains(seen, f->path))
				return g_strdup_printf("%s: git reads this path from the diff, but the patch as checked "
						       "names no such file", f->path);
		}
	}
	return NULL;
}

/*
 * A rename or copy is never applied (delta_refusal), and libgit2 1.5 must
 * not even read a header that names one twice: its patch parser overwrites
 * the first path without freeing it (patch_parse.c, parse_header_rename),
 * a leak per hostile mail that fuzz-policy-apply found.  So those header
 * lines are refused from the text, before libgit2 parses it (no hunk line
 * starts with these words).  NULL when there is none; else why (caller frees).
 */
static char *rename_line_refusal(const char *text)
{
	static const char *const words[] = { "rename from ", "rename to ", "rename old ", "rename new ",
					     "copy from ", "copy to " };
	unsigned lineno = 1;

	for (const char *l = text; *l; lineno++) {
		const char *end = l + strcspn(l, "\n");

		for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
			if (g_str_has_prefix(l, words[i]))
				return g_strdup_printf("line %u of the diff, \"%.*s\": git reads a %s, which the bot "
						       "never applies", lineno, (int)MIN(end - l, 200), l,
						       words[i][0] == 'r' ? "rename" : "copy");
		l = *end ? end + 1 : end;
	}
	return NULL;
}

char *pk_apply_diff_text(const struct pk_patch *patch)
{
	return patch->diff ? prepare_diff(NULL, NULL, patch) : NULL;
}

char *pk_apply_refusal(const struct pk_patch *patch)
{
	g_autofree char *text = pk_apply_diff_text(patch);
	git_diff *diff = NULL;
	char *why;

	pk_git_init();
	if (text && (why = rename_line_refusal(text)))
		return why;
	/* what libgit2 cannot read it does not apply either (pk_apply_patch says so) */
	if (!text || git_diff_from_buffer(&diff, text, strlen(text)) < 0)
		return NULL;
	why = delta_refusal(diff, patch);
	git_diff_free(diff);
	return why;
}

/* The hunk as the patch wrote it (before relocation), or NULL. */
static const struct pk_hunk *original_hunk(const struct pk_patch *patch, const char *path, unsigned nth)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		if (!g_strcmp0(pk_diff_file_path(f), path) || !g_strcmp0(f->old_path, path))
			return nth >= 1 && nth <= f->hunks->len ? f->hunks->pdata[nth - 1] : NULL;
	}
	return NULL;
}

/* Why libgit2 refused the patch, naming the file and the hunk as the patch wrote it. */
static char *describe_failure(const struct apply_progress *p, const struct pk_patch *patch, git_tree *tree,
			      const char *why)
{
	const struct pk_hunk *h;
	git_tree_entry *e = NULL;

	if (!p->file)
		return g_strdup_printf("the diff does not apply: %s", why);
	/*
	 * libgit2 names the first part of the path missing from the tree it
	 * applied to ("the path 'drivers' does not exist"), and that tree may
	 * hold only the touched files (touched_tree()): say it of the base.
	 */
	if (!p->hunk && git_tree_entry_bypath(&e, tree, p->file) == GIT_ENOTFOUND)
		return g_strdup_printf("%s: does not apply: the base has no such file", p->file);
	git_tree_entry_free(e);
	if (!p->hunk)
		return g_strdup_printf("%s: does not apply: %s", p->file, why);
	if (!(h = original_hunk(patch, p->file, p->hunk)))
		return g_strdup_printf("%s: hunk %u (%s) does not apply: %s", p->file, p->hunk, p->header, why);
	return g_strdup_printf("%s: hunk %u (@@ -%d,%d +%d,%d @@) does not apply: its pre-image "
			       "is nowhere in the file",
			       p->file, p->hunk, h->old_start, h->old_count, h->new_start, h->new_count);
}

/* The full id of a blob the lab holds from an abbreviated one (a patch's index line): 0, or -1. */
static int full_blob_id(git_oid *out, git_repository *repo, const git_diff_file *f)
{
	git_odb *odb = NULL;
	int rc;

	if (git_repository_odb(&odb, repo) < 0)
		return -1;
	rc = git_odb_exists_prefix(out, odb, &f->id, f->id_abbrev ? f->id_abbrev : GIT_OID_HEXSZ);
	git_odb_free(odb);
	return rc < 0 ? -1 : 0;
}

/* A blob at path in the tip of one ref matching glob: is_published() walks these. */
struct published_probe {
	git_repository *repo;
	const char *path;
	const git_oid *blob;
	bool found;
};

static int probe_ref(const char *name, void *payload)
{
	struct published_probe *p = payload;
	git_reference *ref = NULL;
	git_object *peeled = NULL;
	git_tree_entry *entry = NULL;

	/* never stop the walk: a callback's non-zero return is a libgit2 error, left set for the next call */
	if (p->found)
		return 0;
	if (git_reference_lookup(&ref, p->repo, name) == 0 &&
	    git_reference_peel(&peeled, ref, GIT_OBJECT_TREE) == 0 &&
	    git_tree_entry_bypath(&entry, (git_tree *)peeled, p->path) == 0)
		p->found = git_oid_equal(git_tree_entry_id(entry), p->blob);
	git_tree_entry_free(entry);
	git_object_free(peeled);
	git_reference_free(ref);
	return 0;
}

/*
 * Whether blob is path's content in the tip of a tree the lab was given:
 * a base (its tag or branch) or a fetched [tree].  The lab's object store
 * also holds every patched file the bot itself wrote (refs/printkbot/run/
 * and unreferenced trees); a 3-way apply from one of those would merge a
 * patch onto changes of another series part the lab happened to test
 * before, so the verdict would depend on what the lab saw last (13/13 of
 * a series built without 10-12/13).  Tips only: walking history for a
 * blob costs seconds on a kernel tree.
 */
static bool is_published(git_repository *repo, const char *path, const git_oid *blob)
{
	static const char *const prefixes[] = { PK_REPO_PUBLISHED_PREFIXES };
	struct published_probe p = { repo, path, blob, false };

	for (size_t i = 0; i < G_N_ELEMENTS(prefixes) && !p.found; i++) {
		g_autofree char *glob = g_strconcat(prefixes[i], "*", NULL);

		git_reference_foreach_glob(repo, glob, probe_ref, &p);
	}
	return p.found;
}

/*
 * The tree the patch was made against, as far as its index lines say:
 * tree with each touched file replaced by the blob the patch names as its
 * pre-image (removed where the patch creates it).  0, or -1 when the lab
 * lacks a blob or holds it only from its own work (no 3-way apply then).
 */
static int fake_ancestor(git_oid *out, git_repository *repo, git_tree *tree, git_diff *diff)
{
	git_index *index = NULL;
	int rc = -1;

	if (git_index_new(&index) < 0 || git_index_read_tree(index, tree) < 0)
		goto out;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_index_entry e = { 0 };

		if (git_oid_is_zero(&d->old_file.id)) {
			git_index_remove_bypath(index, d->new_file.path);
			continue;
		}
		if (full_blob_id(&e.id, repo, &d->old_file) < 0 || !is_published(repo, d->old_file.path, &e.id))
			goto out;
		e.path = d->old_file.path;
		e.mode = d->old_file.mode ? d->old_file.mode : GIT_FILEMODE_BLOB;
		if (git_index_add(index, &e) < 0)
			goto out;
	}
	rc = git_index_write_tree_to(out, index, repo) < 0 ? -1 : 0;
out:
	git_index_free(index);
	return rc;
}

/*
 * `git am -3`: the patch applied to the tree its index lines name, and
 * that change merged into tree.  1 with *out_tree, 0 when the lab lacks a
 * pre-image blob or the merge conflicts.
 */
static int apply_three_way(git_oid *out_tree, git_repository *repo, git_tree *tree, git_diff *diff)
{
	git_tree *ancestor = NULL, *theirs = NULL;
	git_index *applied = NULL, *merged = NULL;
	git_oid id;
	int rc = 0;

	if (fake_ancestor(&id, repo, tree, diff) < 0 || git_tree_lookup(&ancestor, repo, &id) < 0 ||
	    git_apply_to_tree(&applied, repo, ancestor, diff, NULL) < 0 ||
	    git_index_write_tree_to(&id, applied, repo) < 0 || git_tree_lookup(&theirs, repo, &id) < 0 ||
	    git_merge_trees(&merged, repo, ancestor, tree, theirs, NULL) < 0 || git_index_has_conflicts(merged))
		goto out;
	rc = git_index_write_tree_to(out_tree, merged, repo) < 0 ? 0 : 1;
out:
	git_index_free(merged);
	git_index_free(applied);
	git_tree_free(theirs);
	git_tree_free(ancestor);
	return rc;
}

/* ---- applying to the files the diff touches, not to the whole tree ---------------- */

/* Whether path is a directory in tree, or lies under a file there (a parent is a blob). */
static bool path_clashes(git_tree *tree, const char *path)
{
	g_autofree char *dir = g_strdup(path);
	git_tree_entry *e = NULL;
	bool clash;
	char *slash;

	if (git_tree_entry_bypath(&e, tree, path) == 0) {
		clash = git_tree_entry_type(e) == GIT_OBJECT_TREE;
		git_tree_entry_free(e);
		return clash;
	}
	while ((slash = strrchr(dir, '/'))) {
		*slash = '\0';
		if (git_tree_entry_bypath(&e, tree, dir) == 0) {
			clash = git_tree_entry_type(e) != GIT_OBJECT_TREE;
			git_tree_entry_free(e);
			return clash;
		}
	}
	return false;
}

/*
 * The tree of only what diff touches in tree (each path a delta names
 * that tree holds), so that git_apply_to_tree() reads an index of a few
 * entries and not of the whole kernel: 0.28 s a patch on the lab's tree,
 * most of what the bot's apply cost (doc/benchmarks.md).  NULL when a
 * path is a directory in tree or lies under a file (only the whole
 * tree's apply judges that as git does), or when the tree cannot be
 * made: the whole tree is applied to then.
 */
static git_tree *touched_tree(git_repository *repo, git_tree *tree, git_diff *diff)
{
	g_autoptr(GArray) updates = g_array_new(FALSE, TRUE, sizeof(git_tree_update));
	g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func((GDestroyNotify)git_tree_entry_free);
	git_treebuilder *empty = NULL;
	git_tree *base = NULL, *out = NULL;
	git_oid id;

	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *paths[] = { d->old_file.path, d->new_file.path };

		for (guint k = 0; k < G_N_ELEMENTS(paths); k++) {
			git_tree_entry *e = NULL;
			git_tree_update u = { .action = GIT_TREE_UPDATE_UPSERT };

			if (!paths[k] || (k == 1 && d->old_file.path && !strcmp(paths[0], paths[1])))
				continue;
			if (path_clashes(tree, paths[k]))
				return NULL;
			if (git_tree_entry_bypath(&e, tree, paths[k]) < 0)
				continue;   /* a file the diff adds */
			g_ptr_array_add(held, e);
			u.id = *git_tree_entry_id(e);
			u.filemode = git_tree_entry_filemode(e);
			u.path = paths[k];
			g_array_append_val(updates, u);
		}
	}
	if (git_treebuilder_new(&empty, repo, NULL) == 0 && git_treebuilder_write(&id, empty) == 0 &&
	    git_tree_lookup(&base, repo, &id) == 0 &&
	    git_tree_create_updated(&id, repo, base, updates->len, (git_tree_update *)updates->data) == 0 &&
	    git_tree_lookup(&out, repo, &id) < 0)
		out = NULL;
	git_tree_free(base);
	git_treebuilder_free(empty);
	return out;
}

/* The blobs of small (a touched_tree()) under prefix that post no longer holds: removals into out. */
static int removed_paths(GPtrArray *out, git_repository *repo, git_tree *small, const char *prefix,
			 git_index *post)
{
	for (size_t i = 0; i < git_tree_entrycount(small); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(small, i);
		g_autofree char *path = g_strconcat(prefix, git_tree_entry_name(e), NULL), *under = NULL;
		git_tree *sub = NULL;
		int rc;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			if (!git_index_get_bypath(post, path, 0))
				g_ptr_array_add(out, g_steal_pointer(&path));
			continue;
		}
		if (git_tree_lookup(&sub, repo, git_tree_entry_id(e)) < 0)
			return -1;
		under = g_strconcat(path, "/", NULL);
		rc = removed_paths(out, repo, sub, under, post);
		git_tree_free(sub);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* tree with what an apply to small changed (post, its index) made the same changes: *out. */
static int tree_with_applied(git_oid *out, git_repository *repo, git_tree *tree, git_tree *small,
			     git_index *post)
{
	g_autoptr(GArray) updates = g_array_new(FALSE, TRUE, sizeof(git_tree_update));
	g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func(g_free);

	for (size_t i = 0; i < git_index_entrycount(post); i++) {
		const git_index_entry *ie = git_index_get_byindex(post, i);
		git_tree_entry *e = NULL;
		git_tree_update u = { .action = GIT_TREE_UPDATE_UPSERT, .id = ie->id, .filemode = ie->mode,
				      .path = ie->path };
		bool same = git_tree_entry_bypath(&e, small, ie->path) == 0 &&
			    git_oid_equal(git_tree_entry_id(e), &ie->id) &&
			    (unsigned)git_tree_entry_filemode(e) == ie->mode;

		git_tree_entry_free(e);
		if (!same)
			g_array_append_val(updates, u);
	}
	if (removed_paths(gone, repo, small, "", post) < 0)
		return -1;
	for (guint i = 0; i < gone->len; i++) {
		git_tree_update u = { .action = GIT_TREE_UPDATE_REMOVE, .path = gone->pdata[i] };

		g_array_append_val(updates, u);
	}
	return git_tree_create_updated(out, repo, tree, updates->len, (git_tree_update *)updates->data);
}

/*
 * patch applied to tree in memory, the result written as a tree object:
 * 1 with *out_tree, 0 when it does not apply (*failure, *refused), -1
 * with err set when the repository cannot be used.  A file no build reads
 * (PK_PATH_INERT: MAINTAINERS, Documentation/, dt-bindings) whose hunks
 * do not apply on this base is left out, with why in *left_out, and the
 * rest applied: a MAINTAINERS line written against another tree must not
 * decide whether the code is tested, and the review says what was left.
 */
static int apply_to_tree(git_oid *out_tree, char **failure, bool *refused, bool *three_way, char **left_out,
			 git_repository *repo, git_tree *tree, const struct pk_patch *patch, GError **err)
{
	git_apply_options opts = GIT_APPLY_OPTIONS_INIT;
	g_autoptr(GHashTable) leave_out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GString) left = g_string_new(NULL);
	struct apply_progress progress = { .leave_out = leave_out };
	git_diff *diff = NULL;
	git_index *index = NULL;
	git_tree *small = NULL;   /* what the diff touches (touched_tree()); NULL: the whole tree */
	g_autofree char *text = patch->diff ? prepare_diff(repo, tree, patch) : NULL;
	int rc = 0;

	*refused = false;
	/*
	 * A mail the parser had to repair (patch.h) is not applied from the
	 * repaired reading: git am rejects the mail as sent, and so does the bot.
	 */
	if (patch->damage && patch->damage->len) {
		g_autofree char *what = pk_patch_damage_describe(patch, patch->damage->pdata[0]);
		*failure = g_strdup_printf("the mail is corrupt: %s%s; git am rejects it, so the bot does not "
					   "apply it", what, patch->damage->len > 1 ? ", and more" : "");
		goto out;
	}
	if (text && (*failure = rename_line_refusal(text))) {
		*refused = true;
		goto out;
	}
	if (!text || git_diff_from_buffer(&diff, text, strlen(text)) < 0) {
		const git_error *e = git_error_last();
		*failure = g_strdup_printf("the diff does not parse: %s", patch->diff && e ? e->message : "no diff");
		goto out;
	}
	if ((*failure = delta_refusal(diff, patch))) {
		*refused = true;
		goto out;
	}
	opts.delta_cb = on_delta;
	opts.hunk_cb = on_hunk;
	opts.payload = &progress;
	small = touched_tree(repo, tree, diff);
	/* each round leaves out one more inert file, so it ends */
	while (git_apply_to_tree(&index, repo, small ? small : tree, diff, &opts) < 0) {
		const git_error *e = git_error_last();

		*failure = describe_failure(&progress, patch, tree, e ? e->message : "unknown reason");
		if (progress.file && !g_hash_table_contains(leave_out, progress.file) &&
		    g_hash_table_size(leave_out) + 1 < git_diff_num_deltas(diff) &&
		    pk_path_kind(progress.file) == PK_PATH_INERT) {
			g_string_append_printf(left, "%s%s", left->len ? "; " : "", *failure);
			g_hash_table_add(leave_out, g_steal_pointer(&progress.file));
			g_clear_pointer(failure, g_free);
			continue;
		}
		/* three_way NULL: a clean apply only */
		if (three_way && (*three_way = apply_three_way(out_tree, repo, tree, diff) == 1)) {
			g_clear_pointer(failure, g_free);
			g_string_truncate(left, 0);
			rc = 1;
		}
		goto out;
	}
	if ((small ? tree_with_applied(out_tree, repo, tree, small, index)
		   : git_index_write_tree_to(out_tree, index, repo)) < 0)
		rc = pk_git_fail(err, "writing the patched tree");
	else
		rc = 1;
out:
	if (rc == 1 && left->len && left_out)
		*left_out = g_strdup(left->str);
	g_free(progress.file);
	git_index_free(index);
	git_tree_free(small);
	git_diff_free(diff);
	return rc;
}

int pk_apply_patch(struct pk_apply_result *out, const struct pk_lab *lab,
		   const char *parent_rev, const struct pk_patch *patch, GError **err)
{
	PK_PROFILE_SCOPE("apply");
	git_repository *repo = NULL;
	git_commit *parent = NULL, *commit = NULL;
	git_tree *parent_tree = NULL, *tree = NULL;
	struct pk_apply_result res = { 0 };
	git_oid tree_id, commit_id;
	int rc = -1, applied;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&parent, repo, parent_rev, err) < 0 ||
	    git_commit_tree(&parent_tree, parent) < 0)
		goto cleanup;
	if ((applied = apply_to_tree(&tree_id, &res.failure, &res.refused, &res.three_way, &res.left_out, repo,
				     parent_tree, patch, err)) < 0)
		goto cleanup;
	if (!applied)
		goto done;
	if (git_tree_lookup(&tree, repo, &tree_id) < 0) {
		pk_git_fail(err, "reading the patched tree");
		goto cleanup;
	}
	if (commit_tree(&commit_id, repo, parent, tree, patch, err) < 0 ||
	    git_commit_lookup(&commit, repo, &commit_id) < 0 ||
	    pk_repo_checkout_commit(repo, commit, err) < 0)
		goto cleanup;
	res.applied = true;
	res.commit = g_strdup(git_oid_tostr_s(&commit_id));
done:
	/* a patch that did not apply leaves the tree at its parent, as promised */
	if (!res.applied && pk_repo_checkout_commit(repo, parent, err) < 0)
		goto cleanup;
	*out = res;
	memset(&res, 0, sizeof res);
	rc = 0;
cleanup:
	pk_apply_result_clear(&res);
	git_tree_free(tree);
	git_tree_free(parent_tree);
	git_commit_free(commit);
	git_commit_free(parent);
	return rc;
}

int pk_apply_series_check(char **out_failure, const struct pk_lab *lab, const char *rev,
			  const struct pk_patch *const *patches, guint n, bool three_way, GError **err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	int rc = -1;

	*out_failure = NULL;
	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&commit, repo, rev, err) < 0 || git_commit_tree(&tree, commit) < 0)
		goto cleanup;
	rc = 1;
	for (guint i = 0; rc == 1 && i < n; i++) {
		g_autofree char *failure = NULL;
		bool refused, merged = false;
		git_oid next;

		if ((rc = apply_to_tree(&next, &failure, &refused, three_way ? &merged : NULL, NULL, repo, tree,
					patches[i], err)) == 0)
			*out_failure = n > 1 ? g_strdup_printf("patch %u/%u: %s", i + 1, n, failure)
					     : g_steal_pointer(&failure);
		git_tree_free(tree);
		tree = NULL;
		if (rc == 1 && git_tree_lookup(&tree, repo, &next) < 0)
			rc = pk_git_fail(err, "reading the patched tree");
	}
cleanup:
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

void pk_apply_result_clear(struct pk_apply_result *res)
{
	g_clear_pointer(&res->commit, g_free);
	g_clear_pointer(&res->failure, g_free);
	g_clear_pointer(&res->left_out, g_free);
	res->applied = false;
}
