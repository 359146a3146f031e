/* cmd-db.c - `printkbot db`: look after the database. */
#include "cmd/commands.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char db_usage[] =
	"usage: printkbot db check|migrate [--config FILE] [--db FILE]\n\n"
	"    check        integrity, foreign keys and schema version of the\n"
	"                 database, read-only (an older schema is not migrated)\n"
	"    migrate      bring the schema to this printkbot's version now (any\n"
	"                 command that opens the database does it too), or make\n"
	"                 a new database\n\n"
	"    --config FILE  read its [store] path or url (default $PRINTKBOT_CONFIG,\n"
	"                 else /etc/printkbot.conf if present)\n"
	"    --db FILE    the database, a SQLite file or a postgresql:// URL (default\n"
	"                 the config's [store], else $PRINTKBOT_DB, else\n"
	"                 $PRINTKBOT_CACHE/printkbot.db)\n\n"
	"exit status: 0 healthy, 1 problems found (a file that is not SQLite, or\n"
	"is too damaged to read, is one), 2 usage or no such file\n";

static int cmd_db__check(const char *db)
{
	g_autofree char *where = db ? g_strdup(db) : pk_store_default_path();
	/* what is printed: a URL's password is nobody's business on a terminal or in a log */
	g_autofree char *path = pk_url_redact(where);
	g_autoptr(GError) err = NULL;
	struct pk_store_check check = { 0 };
	int rc;

	if (pk_store_check_file(&check, where, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	if (check.version >= 0)
		printf("%s: schema version %d (this printkbot: %d%s)\n", path, check.version,
		       PK_STORE_SCHEMA_VERSION, check.version && check.version < PK_STORE_SCHEMA_VERSION
		       ? "; migrated when next opened" : "");
	for (guint i = 0; i < check.problems->len; i++)
		printf("%s: problem: %s\n", path, (const char *)check.problems->pdata[i]);
	if (check.problems->len)
		printf("%s: %u problem(s)\n", path, check.problems->len);
	else
		printf("%s: integrity ok, foreign keys ok\n", path);
	rc = check.problems->len ? 1 : 0;
	pk_store_check_clear(&check);
	return rc;
}

static int cmd_db__migrate(const char *db)
{
	g_autofree char *path = db ? g_strdup(db) : pk_store_default_path();
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store) store = NULL;
	struct pk_store_check check = { 0 };
	int before = -1;

	/* the version before, when there is a database to read (a new file has none) */
	if (pk_store_check_file(&check, path, NULL) == 0)
		before = check.version;
	pk_store_check_clear(&check);
	if (pk_store_open(&store, path, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 1;
	}
	if (before > 0 && before < PK_STORE_SCHEMA_VERSION)
		printf("%s: schema version %d migrated to %d\n", pk_store_name(store), before, PK_STORE_SCHEMA_VERSION);
	else if (before > 0)
		printf("%s: schema version %d, nothing to migrate\n", pk_store_name(store), before);
	else
		printf("%s: made at schema version %d\n", pk_store_name(store), PK_STORE_SCHEMA_VERSION);
	return 0;
}

/* The db commands; each takes the database path (NULL for the default). */
static const struct {
	const char *name;
	int (*fn)(const char *db);
} db_commands[] = {
	{ "check", cmd_db__check },
	{ "migrate", cmd_db__migrate },
};

/* The file is not opened (PK_NEEDS_STORE would migrate it), only checked: PK_NEEDS_STORE_PATH. */
static const struct pk_option db_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	{ NULL },
};

static int db_command(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(db_commands); i++)
		if (!strcmp(name, db_commands[i].name))
			return (int)i;
	return -1;
}

static int db_check(const struct pk_cmdline *cl, GError **err)
{
	if (db_command(cl->args[0]) < 0) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unknown db command '%s'", cl->args[0]);
		return -1;
	}
	return 0;
}

static int cmd_db(struct pk_cmd_ctx *ctx)
{
	const char *db = ctx->cmdline.common.db ? ctx->cmdline.common.db : ctx->config.db;

	return db_commands[db_command(ctx->cmdline.args[0])].fn(db);
}

const struct pk_cmd_spec cmd_db_spec = {
	.usage = db_usage,
	.options = db_options,
	.args_name = "a db command",
	.args_min = 1, .args_max = 1,
	.check = db_check,
	.setup_status = 2,
	.run = cmd_db,
};
