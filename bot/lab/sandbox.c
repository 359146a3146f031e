/* sandbox.c - bubblewrap around builds and boots; see sandbox.h. */
#define _GNU_SOURCE
#include "lab/sandbox.h"
#include "base/cgroup.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct pk_sandbox_config settings = PK_SANDBOX_CONFIG_INIT;
static char *settings_user, *settings_ccache_dir;
static char **settings_trusted_trees;

/*
 * The files of /etc a build or QEMU reads: the dynamic loader's cache,
 * the alternatives links (/usr/bin/awk, cc, ld... point there), user and
 * group names, the time zone, ccache's and perl's system config.  Not
 * /etc as a whole: printkbot.conf may hold an SMTP or IMAP password, and
 * what a host program reads at build time it can print from the kernel
 * it builds, into a review that goes to a mailing list.
 */
static const char *const etc_files[] = {
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone",
	"/etc/ccache.conf", "/etc/perl", "/etc/mime.types", NULL,
};

/* The top-level names that merged /usr makes links (Debian 12: bin -> usr/bin). */
static const char *const usr_links[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL };

void pk_sandbox_configure(const struct pk_sandbox_config *config)
{
	/* copy first: config's strings may be the ones we hold */
	char *user = g_strdup(config->user ? config->user : PK_SANDBOX_USER);
	char *ccache_dir = g_strdup(config->ccache_dir);
	char **trusted = g_strdupv(config->trusted_trees);

	g_free(settings_user);
	g_free(settings_ccache_dir);
	g_strfreev(settings_trusted_trees);
	settings = *config;
	settings_user = user;
	settings.user = settings_user;
	settings_ccache_dir = ccache_dir;
	settings.ccache_dir = settings_ccache_dir;
	settings_trusted_trees = trusted;
	settings.trusted_trees = settings_trusted_trees;
}

const struct pk_sandbox_config *pk_sandbox_settings(void)
{
	return &settings;
}

const char *pk_sandbox_mode_name(enum pk_sandbox_mode mode)
{
	return mode == PK_SANDBOX_OFF ? "off" : "on";
}

/* The sandbox user's ids; -1 with err set when there is no such user. */
static int sandbox_ids(uid_t *out_uid, gid_t *out_gid, GError **err)
{
	const char *user = settings.user ? settings.user : PK_SANDBOX_USER;
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (getpwnam_r(user, &pw, buf, sizeof buf, &found) != 0 || !found)
		return pk_error(err, PK_ERROR_FAILED,
				"the sandbox user %s does not exist: run 'make deps' (or "
				"'useradd --system --user-group --no-create-home %s')", user, user);
	if (pw.pw_uid == 0 || pw.pw_gid == 0)
		return pk_error(err, PK_ERROR_FAILED, "the sandbox user %s is root: it must not be", user);
	*out_uid = pw.pw_uid;
	*out_gid = pw.pw_gid;
	return 0;
}

bool pk_sandbox_usable(char **why)
{
	g_autoptr(GError) err = NULL;
	uid_t uid;
	gid_t gid;

	if (!pk_proc_have("bwrap")) {
		if (why)
			*why = g_strdup("bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
		return false;
	}
	if (geteuid() != 0)
		return true;
	if (!pk_proc_have("setpriv")) {
		if (why)
			*why = g_strdup("setpriv (util-linux) is not installed");
		return false;
	}
	if (sandbox_ids(&uid, &gid, &err) < 0) {
		if (why)
			*why = g_strdup(err->message);
		return false;
	}
	return true;
}

bool pk_sandbox_active(void)
{
	return settings.mode == PK_SANDBOX_ON && pk_sandbox_usable(NULL);
}

static void add(GPtrArray *a, const char *s)
{
	g_ptr_array_add(a, g_strdup(s));
}

static void add3(GPtrArray *a, const char *opt, const char *x, const char *y)
{
	add(a, opt);
	add(a, x);
	if (y)
		add(a, y);
}

struct bind {
	const char *opt;   /* --ro-bind, --bind, --dev-bind */
	const char *path;
};

/* Outer paths first: a bind inside another bound path must come after it. */
static gint bind_cmp(gconstpointer a, gconstpointer b)
{
	const struct bind *x = a, *y = b;
	size_t lx = strlen(x->path), ly = strlen(y->path);

	return lx < ly ? -1 : lx > ly ? 1 : strcmp(x->path, y->path);
}

/* Whether path is at or under dir. */
static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0' || (n == 1 && dir[0] == '/'));
}

/*
 * Append to dirs the ancestors of path (outermost first) that the sandbox
 * does not have otherwise: not /, /tmp or the system part, not at or
 * under a bound path, not listed yet.
 */
static void add_parents(GPtrArray *dirs, const char *path, const GArray *binds)
{
	static const char *const system[] = { "/usr", "/dev", "/proc", "/etc", NULL };
	g_autofree char *parent = g_path_get_dirname(path);
	g_auto(GStrv) parts = g_strsplit(parent, "/", -1);
	g_autoptr(GString) acc = g_string_new(NULL);

	for (char **c = parts; *c; c++) {
		bool covered = false;

		if (!**c)
			continue;
		g_string_append_printf(acc, "/%s", *c);
		covered = !strcmp(acc->str, "/tmp");
		for (const char *const *s = system; *s; s++)
			covered |= is_under(acc->str, *s);
		for (guint j = 0; j < binds->len; j++)
			covered |= is_under(acc->str, g_array_index(binds, struct bind, j).path);
		for (guint j = 0; j < dirs->len; j++)
			covered |= !strcmp(acc->str, dirs->pdata[j]);
		if (!covered)
			g_ptr_array_add(dirs, g_strdup(acc->str));
	}
}

static int collect(GArray *binds, const char *opt, const char *const *list, GError **err)
{
	for (const char *const *p = list; p && *p; p++) {
		struct bind b = { opt, *p };

		if (!g_path_is_absolute(*p))
			return pk_error(err, PK_ERROR_FAILED, "sandbox: %s is not an absolute path", *p);
		if (!g_file_test(*p, G_FILE_TEST_EXISTS))
			return pk_error(err, PK_ERROR_FAILED, "sandbox: %s does not exist", *p);
		g_array_append_val(binds, b);
	}
	return 0;
}

/*
 * The caller's paths, bound at the same place.  bwrap makes the missing
 * parents of a mount point mode 0700 as root, which the sandbox user
 * could not cross, so each parent that is not bound itself is made
 * first, 0755, on the sandbox's own root or /tmp.
 */
static int add_binds(GPtrArray *a, const struct pk_sandbox *sb, GError **err)
{
	g_autoptr(GArray) binds = g_array_new(FALSE, FALSE, sizeof(struct bind));
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);

	if (collect(binds, "--ro-bind", sb->ro, err) < 0 || collect(binds, "--bind", sb->rw, err) < 0 ||
	    collect(binds, "--dev-bind", sb->dev, err) < 0)
		return -1;
	g_array_sort(binds, bind_cmp);
	for (guint i = 0; i < binds->len; i++)
		add_parents(dirs, g_array_index(binds, struct bind, i).path, binds);
	for (guint i = 0; i < dirs->len; i++) {
		add3(a, "--perms", "0755", NULL);
		add3(a, "--dir", dirs->pdata[i], NULL);
	}
	for (guint i = 0; i < binds->len; i++) {
		const struct bind *b = &g_array_index(binds, struct bind, i);
		add3(a, b->opt, b->path, b->path);
	}
	return 0;
}

/* /usr and the links or dirs of merged /usr, read-only. */
static void add_system(GPtrArray *a)
{
	add3(a, "--ro-bind", "/usr", "/usr");
	for (const char *const *n = usr_links; *n; n++) {
		g_autofree char *path = g_strconcat("/", *n, NULL);
		g_autofree char *target = g_file_read_link(path, NULL);

		if (target)
			add3(a, "--symlink", target, path);
		else if (g_file_test(path, G_FILE_TEST_IS_DIR))
			add3(a, "--ro-bind", path, path);
	}
	add3(a, "--perms", "0755", NULL);   /* bwrap would make the mount points' parent 0700 */
	add3(a, "--dir", "/etc", NULL);
	for (const char *const *e = etc_files; *e; e++)
		add3(a, "--ro-bind-try", *e, *e);
}

/*
 * As root, bubblewrap runs privileged (it needs no user namespace) and
 * setpriv inside it drops to the sandbox user.  Not --unshare-user
 * --uid N: that maps N inside to uid 0 outside, so the build would still
 * be root to the host kernel (for signals, for the peer credentials of a
 * Unix socket, for files if anything leaked through); and not setpriv
 * before bubblewrap: an unprivileged bwrap cannot reach a cache under
 * /root (mode 0700) to bind it.  This way the build's processes have a
 * real unprivileged uid, and only the paths bound for it exist.
 */
GPtrArray *pk_sandbox_argv(const struct pk_sandbox *sb, const char *const *argv, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *tmp_size = g_strdup_printf("%" G_GUINT64_FORMAT,
						    sb->tmp_size ? sb->tmp_size : settings.tmp_size);
	bool root = geteuid() == 0;
	uid_t uid = 0;
	gid_t gid = 0;

	if (root && sandbox_ids(&uid, &gid, err) < 0)
		return NULL;
	add(a, "bwrap");
	add(a, "--die-with-parent");
	add(a, "--new-session");       /* no TIOCSTI into a terminal we were started from */
	add(a, "--unshare-ipc");
	add(a, "--unshare-pid");
	add(a, "--unshare-net");
	add(a, "--unshare-uts");
	add(a, "--unshare-cgroup-try");
	if (!root) {
		add(a, "--unshare-user");
		add(a, "--disable-userns");
	}
	add3(a, "--hostname", "printkbot", NULL);
	add_system(a);
	add3(a, "--dev", "/dev", NULL);
	add3(a, "--proc", "/proc", NULL);
	add3(a, "--perms", "1777", NULL);
	add3(a, "--size", tmp_size, NULL);
	add3(a, "--tmpfs", "/tmp", NULL);
	if (add_binds(a, sb, err) < 0)
		return NULL;
	if (sb->cwd)
		add3(a, "--chdir", sb->cwd, NULL);
	add(a, "--clearenv");
	add3(a, "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin");
	add3(a, "--setenv", "HOME", "/tmp");
	add3(a, "--setenv", "TMPDIR", "/tmp");
	add3(a, "--setenv", "LC_ALL", "C");
	for (const char *const *e = sb->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		g_autofree char *name = eq ? g_strndup(*e, (gsize)(eq - *e)) : NULL;

		if (name)
			add3(a, "--setenv", name, eq + 1);
	}
	if (root) {
		g_autofree char *u = g_strdup_printf("%u", (unsigned)uid);
		g_autofree char *g = g_strdup_printf("%u", (unsigned)gid);
		struct stat st;

		/* setpriv needs these three to switch; it drops them with the uid */
		add3(a, "--cap-drop", "ALL", NULL);
		add3(a, "--cap-add", "CAP_SETUID", NULL);
		add3(a, "--cap-add", "CAP_SETGID", NULL);
		add3(a, "--cap-add", "CAP_SETPCAP", NULL);
		add(a, "--");
		add(a, "setpriv");
		add3(a, "--reuid", u, NULL);
		add3(a, "--regid", g, NULL);
		if (sb->group_of && stat(sb->group_of, &st) == 0 && st.st_gid != 0) {
			g_autofree char *sg = g_strdup_printf("%u", (unsigned)st.st_gid);
			add3(a, "--groups", sg, NULL);
		} else {
			add(a, "--clear-groups");
		}
		add(a, "--inh-caps=-all");
		add(a, "--bounding-set=-all");
		add(a, "--no-new-privs");
	}
	add(a, "--");
	for (const char *const *p = argv; *p; p++)
		add(a, *p);
	g_ptr_array_add(a, NULL);
	return g_steal_pointer(&a);
}

/* Hand dirfd's entries (recursively) to uid:gid; see pk_sandbox_own(). */
static int own_dir(int dirfd, const char *path, uid_t uid, gid_t gid, unsigned depth, GError **err)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > 64)
		return pk_error(err, PK_ERROR_FAILED, "%s: directories nested too deep", path);
	if (!(d = fdopendir(dirfd))) {
		close(dirfd);
		return pk_error(err, PK_ERROR_FAILED, "cannot read %s: %s", path, strerror(errno));
	}
	while (rc == 0 && (errno = 0, e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		if ((st.st_uid != uid || st.st_gid != gid) && (S_ISDIR(st.st_mode) || st.st_nlink == 1) &&
		    fchownat(dirfd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			rc = pk_error(err, PK_ERROR_FAILED, "cannot hand %s/%s to the sandbox user: %s", path,
				      e->d_name, strerror(errno));
		if (rc == 0 && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			g_autofree char *subpath = g_build_filename(path, e->d_name, NULL);

			if (sub >= 0)
				rc = own_dir(sub, subpath, uid, gid, depth + 1, err);
		}
	}
	closedir(d);
	return rc;
}

int pk_sandbox_own(const char *dir, GError **err)
{
	uid_t uid;
	gid_t gid;
	int fd;

	if (geteuid() != 0 || !pk_sandbox_active())
		return 0;
	if (sandbox_ids(&uid, &gid, err) < 0)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot open %s: %s", dir, strerror(errno));
	if (fchown(fd, uid, gid) < 0) {
		close(fd);
		return pk_error(err, PK_ERROR_FAILED, "cannot hand %s to the sandbox user: %s", dir, strerror(errno));
	}
	return own_dir(fd, dir, uid, gid, 0, err);
}

/* Say once per process that children run without the sandbox, and why. */
static void warn_unsandboxed(void)
{
	static gsize done;
	g_autofree char *why = NULL;

	if (settings.mode == PK_SANDBOX_OFF || pk_sandbox_usable(&why))
		return;
	if (g_once_init_enter(&done)) {
		pk_info("building without the sandbox: %s; patches are refused until it works", why);
		g_once_init_leave(&done, 1);
	}
}

/*
 * The process cap of one sandbox: a pids cgroup of its own (cgroup.h),
 * so that one build's fork bomb takes only its own processes, and limits
 * without RLIMIT_NPROC into *own (which counts every process of the one
 * sandbox user, every worker's).  Where no cgroup can be made (not
 * root, no pids controller) RLIMIT_NPROC stays, said once.  The cgroup's
 * dir, or NULL.
 */
static char *process_cap(struct pk_limits *own, const struct pk_limits *limits)
{
	static gsize said;
	g_autoptr(GError) why = NULL;
	char *dir;

	*own = *limits;
	if (!limits->processes || geteuid() != 0)
		return NULL;
	if (!(dir = pk_cgroup_make(limits->processes, &why))) {
		if (g_once_init_enter(&said)) {
			pk_info("the sandbox's process limit counts every sandbox of this machine together "
				"(RLIMIT_NPROC of its user): %s", why->message);
			g_once_init_leave(&said, 1);
		}
		return NULL;
	}
	own->processes = 0;
	return dir;
}

int pk_sandbox_run(struct pk_proc_result *out, bool *out_sandboxed, const struct pk_sandbox *sb,
		   const char *const *argv, const struct pk_proc_opts *opts, GError **err)
{
	struct pk_proc_opts wrapped_opts = *opts;
	g_autoptr(GPtrArray) wrapped = NULL;
	g_autofree char *cgroup = NULL;
	struct pk_limits limits;
	bool sandboxed = pk_sandbox_active();
	int rc;

	if (!sandboxed) {
		struct pk_proc_opts plain = *opts;

		warn_unsandboxed();
		if (sb->env)
			plain.env = sb->env;
		if (pk_proc_run(out, argv, &plain, err) < 0)
			return -1;
		goto done;
	}
	for (const char *const *p = sb->rw; p && *p; p++)
		if (pk_sandbox_own(*p, err) < 0)
			return -1;
	if (!(wrapped = pk_sandbox_argv(sb, sb->argv ? sb->argv : argv, err)))
		return -1;
	if (sb->limits)
		wrapped_opts.limits = sb->limits;
	if (wrapped_opts.limits) {
		cgroup = process_cap(&limits, wrapped_opts.limits);
		wrapped_opts.limits = &limits;
		wrapped_opts.cgroup = cgroup;
	}
	rc = pk_proc_run(out, (const char *const *)wrapped->pdata, &wrapped_opts, err);
	if (cgroup)
		pk_cgroup_remove(cgroup);
	if (rc < 0)
		return -1;
done:
	if (out_sandboxed)
		*out_sandboxed = sandboxed;
	return 0;
}
