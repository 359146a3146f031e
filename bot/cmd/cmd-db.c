/* cmd-db.c - `printkbot db`: look after the database. */
#include "cmd/commands.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char db_usage[] =
	"usage: printkbot db check [--db FILE]\n\n"
	"    check        integrity, foreign keys and schema version of the\n"
	"                 database, read-only (an older schema is not migrated)\n\n"
	"    --db FILE    the database (default $PRINTKBOT_DB, else\n"
	"                 $PRINTKBOT_CACHE/printkbot.db)\n\n"
	"exit status: 0 healthy, 1 problems found (a file that is not SQLite, or\n"
	"is too damaged to read, is one), 2 usage or no such file\n";

static int cmd_db__check(const char *db)
{
	g_autofree char *path = db ? g_strdup(db) : pk_store_default_path();
	g_autoptr(GError) err = NULL;
	struct pk_store_check check = { 0 };
	int rc;

	if (pk_store_check_file(&check, path, &err) < 0) {
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

/* The db commands; each takes the database path (NULL for the default). */
static const struct {
	const char *name;
	int (*fn)(const char *db);
} db_commands[] = {
	{ "check", cmd_db__check },
};

int cmd_db(int argc, char **argv)
{
	const char *db = NULL, *sub = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(db_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
			db = argv[++i];
		} else if (!strncmp(argv[i], "--db=", 5)) {
			db = argv[i] + 5;
		} else if (argv[i][0] != '-' && !sub) {
			sub = argv[i];
		} else {
			fprintf(stderr, "printkbot: unexpected argument '%s'\n%s", argv[i], db_usage);
			return 2;
		}
	}
	for (size_t i = 0; sub && i < G_N_ELEMENTS(db_commands); i++)
		if (!strcmp(sub, db_commands[i].name))
			return db_commands[i].fn(db);
	fprintf(stderr, "printkbot: %s\n%s", sub ? "unknown db command" : "db wants a command",
		db_usage);
	return 2;
}
