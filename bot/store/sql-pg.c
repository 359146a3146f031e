/*
 * sql-pg.c - the PostgreSQL backend of the statement layer (sql.h), for a
 * store many workers share: `[store] url = postgresql://...`.  The only
 * file of the store that calls libpq.
 *
 * The store's SQL is written for both engines (RETURNING, ON CONFLICT,
 * COALESCE); what still differs is translated here and only here:
 *   - placeholders: ?N and :name become $N (pg_translate());
 *   - the schema and migrations (db/schema.sql, db/NNN-*.sql) stay the
 *     one source: pg_ddl() turns SQLite's words into PostgreSQL's
 *     (pg_ddl_rules[]);
 *   - PRAGMA user_version is the one row of table printkbot_schema;
 *   - integrity is PostgreSQL's to keep: foreign keys hold at every
 *     statement, so `db check` reads the version and finds no dangling row.
 * Values go as text (blobs as binary bytea) and come back as text, so a
 * column reads the same whatever its type; a boolean reads as 1 or 0.
 *
 * The database must be SQL_ASCII with C collation (CREATE DATABASE
 * printkbot TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C'
 * LC_CTYPE 'C'): a console line is bytes, not always UTF-8, and SQLite's
 * TEXT keeps any bytes, compares them bytewise and lowers ASCII alone;
 * SQL_ASCII and C do the same.  Another encoding is refused at open.
 */
#include "store/private.h"

#include <libpq-fe.h>
#include <string.h>

/* The type of a bound parameter (pg_type.h's OIDs, stable across releases). */
#define PG_BYTEA_OID  17
#define PG_INT8_OID   20
#define PG_FLOAT8_OID 701

/* A statement: sql.h's head, then the SQL for PostgreSQL and the values bound. */
struct pg_stmt {
	struct store_stmt head;
	char *sql;              /* with $N */
	GPtrArray *names;       /* the :name of parameter i+1, or NULL */
	int n;                  /* parameters */
	char **values;          /* n values, NULL for SQL NULL */
	int *lengths;
	int *formats;           /* 1 for a binary blob, 0 for text */
	Oid *types;             /* 0: let PostgreSQL infer it from the SQL */
	PGresult *res;          /* once stepped */
	int row;                /* the current row of res */
	int runs;               /* executions so far */
	char *name;             /* the server's prepared statement, from the second run on */
	GPtrArray *blobs;       /* unescaped bytea handed out for this row */
};

static PGconn *pg_conn(struct pk_store *s)
{
	return s->conn;
}

static struct pg_stmt *pg(store_stmt *st)
{
	return (struct pg_stmt *)st;
}

/*
 * A lost connection, a server shutting down, too many clients, a
 * deadlock or a serialisation failure passes: PK_ERROR_TRANSIENT, as
 * SQLite's busy is.  Their SQLSTATE classes are 08, 53, 57P and 40.
 */
static bool pg_passing(PGconn *c, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(c) != CONNECTION_OK || !state)
		return true;
	return g_str_has_prefix(state, "08") || g_str_has_prefix(state, "53") ||
	       g_str_has_prefix(state, "57P") || g_str_has_prefix(state, "40");
}

static int pg_error(struct pk_store *s, const PGresult *res, GError **err, const char *what)
{
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(pg_conn(s));
	g_autofree char *line = g_strstrip(g_strdup(msg && *msg ? msg : "no answer"));

	return pk_error(err, pg_passing(pg_conn(s), res) ? PK_ERROR_TRANSIENT : PK_ERROR_FAILED,
			"%s: %s: %s", s->path, what, line);
}

/* The server's notices (a table that exists, a cascade) are for a console, not our stderr. */
static void pg_notice(void *arg, const char *message)
{
}

static void pg_close(struct pk_store *s);

/* Refuse a database whose text would not hold SQLite's (see the head of this file). */
static int pg_check_encoding(struct pk_store *s, GError **err)
{
	const char *enc = PQparameterStatus(pg_conn(s), "server_encoding");

	PGresult *res = PQexec(pg_conn(s), "SELECT datcollate FROM pg_database "
			       "WHERE datname = current_database()");
	const char *coll = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1
			   ? PQgetvalue(res, 0, 0) : "unknown";
	g_autofree char *what = g_strdup_printf("%s with collation %s", enc ? enc : "unknown", coll);
	bool c_coll = !strcmp(coll, "C") || !strcmp(coll, "POSIX");

	PQclear(res);
	if (!g_strcmp0(enc, "SQL_ASCII") && c_coll &&
	    PQsetClientEncoding(pg_conn(s), "SQL_ASCII") == 0)
		return 0;
	pk_error(err, PK_ERROR_INPUT, "%s: the database is %s, not SQL_ASCII with C: console lines "
		 "are bytes; make it with CREATE DATABASE ... TEMPLATE template0 ENCODING 'SQL_ASCII' "
		 "LC_COLLATE 'C' LC_CTYPE 'C'", s->path, what);
	pg_close(s);
	return -1;
}

static int pg_open(struct pk_store *s, const char *url, GError **err)
{
	PGconn *c = PQconnectdb(url);

	if (!c || PQstatus(c) != CONNECTION_OK) {
		/* libpq quotes what it cannot parse of the URL, a password too */
		g_autofree char *msg = g_strstrip(pk_url_scrub(c ? PQerrorMessage(c) : "out of memory", url));

		pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", s->path, msg);
		PQfinish(c);
		return -1;
	}
	PQsetNoticeProcessor(c, pg_notice, NULL);
	s->conn = c;
	return pg_check_encoding(s, err);
}

static void pg_close(struct pk_store *s)
{
	PQfinish(pg_conn(s));
	s->conn = NULL;
}

/*
 * A connection lost between transactions is made again: the next job
 * after the server came back works.  Inside a transaction it is not (what
 * the transaction did is gone); the caller's rollback and retry decide.
 */
static void pg_revive(struct pk_store *s)
{
	if (PQstatus(pg_conn(s)) != CONNECTION_BAD || s->depth)
		return;
	PQreset(pg_conn(s));
	if (PQstatus(pg_conn(s)) != CONNECTION_OK)
		return;
	/* a new session: the encoding pg_check_encoding() chose is set again */
	PQsetClientEncoding(pg_conn(s), "SQL_ASCII");
	/* and a read-only store's session stays read-only */
	if (s->readonly)
		PQclear(PQexec(pg_conn(s), s->be->readonly_sql));
	/*
	 * And the intake's lock, which was the old session's, taken again, or
	 * lost to another intake.  The old session's backend frees it as it
	 * exits, which may be a moment after the new session began: 2 s of tries.
	 */
	for (int i = 0; s->intake > 0 && i < 20; i++) {
		PGresult *res = PQexec(pg_conn(s), s->be->intake_lock_sql);
		bool ok = PQresultStatus(res) == PGRES_TUPLES_OK, taken = ok && !strcmp(PQgetvalue(res, 0, 0), "1");

		PQclear(res);
		if (taken)
			return;
		if (!ok || i == 19)
			s->intake = -1;
		else
			g_usleep(100 * 1000);
	}
}

/* ---- placeholders ------------------------------------------------------ */

/* Copy a quoted literal or identifier (q is ' or ") from *p to out, doubled quotes included. */
static void pg_copy_quoted(const char **p, GString *out)
{
	char q = **p;

	g_string_append_c(out, *(*p)++);
	while (**p) {
		char ch = *(*p)++;

		g_string_append_c(out, ch);
		if (ch == q && **p != q)
			return;
		if (ch == q)
			g_string_append_c(out, *(*p)++);
	}
}

/* The index of :name, given one when it is new (SQLite's numbering: after every index so far). */
static int pg_name_index(struct pg_stmt *st, const char *name, size_t len)
{
	for (guint i = 0; i < st->names->len; i++)
		if (st->names->pdata[i] && strlen(st->names->pdata[i]) == len &&
		    !strncmp(st->names->pdata[i], name, len))
			return (int)i + 1;
	g_ptr_array_add(st->names, g_strndup(name, len));
	return (int)st->names->len;
}

/* Note parameter i as used (names grows to hold it). */
static void pg_use(struct pg_stmt *st, int i)
{
	while ((int)st->names->len < i)
		g_ptr_array_add(st->names, NULL);
}

/* ?N, ? and :name as $N, outside quotes and comments; "::" (a cast) stays. */
static char *pg_translate(struct pg_stmt *st, const char *sql)
{
	GString *out = g_string_new(NULL);
	const char *p = sql;

	while (*p) {
		if (*p == '\'' || *p == '"') {
			pg_copy_quoted(&p, out);
		} else if (p[0] == '-' && p[1] == '-') {
			size_t n = strcspn(p, "\n");

			g_string_append_len(out, p, (gssize)n);
			p += n;
		} else if (*p == '?') {
			char *end;
			long i = strtol(p + 1, &end, 10);

			if (end == p + 1)
				i = (long)st->names->len + 1;
			pg_use(st, (int)i);
			g_string_append_printf(out, "$%ld", i);
			p = end;
		} else if (p[0] == ':' && p[1] == ':') {
			g_string_append(out, "::");
			p += 2;
		} else if (*p == ':' && (g_ascii_isalpha(p[1]) || p[1] == '_')) {
			size_t n = 1 + strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

			g_string_append_printf(out, "$%d", pg_name_index(st, p, n));
			p += n;
		} else {
			g_string_append_c(out, *p++);
		}
	}
	return g_string_free(out, FALSE);
}

/* ---- statements -------------------------------------------------------- */

static store_stmt *pg_prep(struct pk_store *s, const char *sql, GError **err)
{
	struct pg_stmt *st = g_new0(struct pg_stmt, 1);

	/* PostgreSQL parses at the first step; a bad statement fails there */
	st->head = (struct store_stmt){ .be = &store_pg, .s = s };
	st->names = g_ptr_array_new_with_free_func(g_free);
	st->sql = pg_translate(st, sql);
	st->n = (int)st->names->len;
	st->values = g_new0(char *, st->n + 1);
	st->lengths = g_new0(int, st->n + 1);
	st->formats = g_new0(int, st->n + 1);
	st->types = g_new0(Oid, st->n + 1);
	st->blobs = g_ptr_array_new_with_free_func(PQfreemem);
	pg_revive(s);
	return &st->head;
}

static void pg_reset(store_stmt *st)
{
	g_clear_pointer(&pg(st)->res, PQclear);
	g_ptr_array_set_size(pg(st)->blobs, 0);
	pg(st)->row = 0;
}

static void pg_clear(store_stmt *st)
{
	pg_reset(st);
	for (int i = 0; i < pg(st)->n; i++) {
		g_clear_pointer(&pg(st)->values[i], g_free);
		pg(st)->types[i] = 0;
		pg(st)->formats[i] = 0;
	}
}

static void pg_free(store_stmt *st)
{
	pg_clear(st);
	if (pg(st)->name && PQstatus(pg_conn(st->s)) == CONNECTION_OK) {
		g_autofree char *sql = g_strdup_printf("DEALLOCATE %s", pg(st)->name);

		/* in a failed transaction this fails too, and the server frees it with the session */
		PQclear(PQexec(pg_conn(st->s), sql));
	}
	g_free(pg(st)->name);
	g_free(pg(st)->values);
	g_free(pg(st)->lengths);
	g_free(pg(st)->formats);
	g_free(pg(st)->types);
	g_ptr_array_unref(pg(st)->blobs);
	g_ptr_array_unref(pg(st)->names);
	g_free(pg(st)->sql);
	g_free(st);
}

static int pg_index(store_stmt *st, const char *name)
{
	for (guint i = 0; i < pg(st)->names->len; i++)
		if (!g_strcmp0(pg(st)->names->pdata[i], name))
			return (int)i + 1;
	return 0;
}

/* Parameter i (from 1) takes value (owned), of type and format; out of range is ignored as SQLite does. */
static void pg_bind(store_stmt *st, int i, char *value, int len, Oid type, int format)
{
	struct pg_stmt *p = pg(st);

	if (i < 1 || i > p->n) {
		g_free(value);
		return;
	}
	g_free(p->values[i - 1]);
	p->values[i - 1] = value;
	p->lengths[i - 1] = len;
	p->types[i - 1] = type;
	p->formats[i - 1] = format;
}

static void pg_bind_int(store_stmt *st, int i, gint64 v)
{
	pg_bind(st, i, g_strdup_printf("%" G_GINT64_FORMAT, v), 0, PG_INT8_OID, 0);
}

static void pg_bind_double(store_stmt *st, int i, double v)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	pg_bind(st, i, g_strdup(g_ascii_dtostr(buf, sizeof(buf), v)), 0, PG_FLOAT8_OID, 0);
}

static void pg_bind_text(store_stmt *st, int i, const char *v)
{
	pg_bind(st, i, g_strdup(v), 0, 0, 0);
}

static void pg_bind_data(store_stmt *st, int i, const void *p, size_t len)
{
	/* g_memdup2 of 0 bytes is NULL, which would be SQL NULL: an empty blob is a 1-byte buffer */
	char *copy = g_malloc(len ? len : 1);

	memcpy(copy, p, len);
	pg_bind(st, i, copy, (int)len, PG_BYTEA_OID, 1);
}

static void pg_bind_null(store_stmt *st, int i)
{
	pg_bind(st, i, NULL, 0, 0, 0);
}

/*
 * Run the statement.  One run at a time is parsed and planned with it;
 * a statement run again (a row of a loop) is prepared on the server once,
 * so that each later row costs only its execution.  NULL with err set
 * when not even a failed result came back.
 */
static PGresult *pg_execute(struct pg_stmt *p, GError **err)
{
	static unsigned serial;   /* names are per connection; one process numbers them all */
	PGconn *c = pg_conn(p->head.s);
	const char *const *values = (const char *const *)p->values;
	PGresult *res;

	if (p->runs++ == 1 && !p->name) {
		g_autofree char *name = g_strdup_printf("pk%u", ++serial);

		res = PQprepare(c, name, p->sql, p->n, p->types);
		if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
			pg_error(p->head.s, res, err, "cannot prepare a statement");
			PQclear(res);
			return NULL;
		}
		PQclear(res);
		p->name = g_steal_pointer(&name);
	}
	if (p->name)
		res = PQexecPrepared(c, p->name, p->n, values, p->lengths, p->formats, 0);
	else
		res = PQexecParams(c, p->sql, p->n, p->types, values, p->lengths, p->formats, 0);
	if (!res)
		pg_error(p->head.s, NULL, err, "query failed");
	return res;
}

/* Whether res is an INSERT, UPDATE or DELETE's: only those set the changes count, as in SQLite. */
static bool pg_is_write(PGresult *res)
{
	const char *tag = PQcmdStatus(res);

	return g_str_has_prefix(tag, "INSERT ") || g_str_has_prefix(tag, "UPDATE ") ||
	       g_str_has_prefix(tag, "DELETE ");
}

/* The first step runs the statement and keeps its rows; the next ones walk them. */
static int pg_step(store_stmt *st, GError **err)
{
	struct pg_stmt *p = pg(st);
	ExecStatusType status;

	if (p->res) {
		g_ptr_array_set_size(p->blobs, 0);
		p->row++;
		return p->row < PQntuples(p->res) ? 1 : 0;
	}
	p->res = pg_execute(p, err);
	if (!p->res)
		return -1;
	status = PQresultStatus(p->res);
	if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
		int rc = pg_error(st->s, p->res, err, "query failed");

		g_clear_pointer(&p->res, PQclear);
		return rc;
	}
	if (pg_is_write(p->res))
		st->s->changes = g_ascii_strtoll(PQcmdTuples(p->res), NULL, 10);
	p->row = 0;
	return PQntuples(p->res) > 0 ? 1 : 0;
}

static bool pg_is_null(store_stmt *st, int i)
{
	return !pg(st)->res || PQgetisnull(pg(st)->res, pg(st)->row, i);
}

static const char *pg_col_str(store_stmt *st, int i)
{
	return pg_is_null(st, i) ? NULL : PQgetvalue(pg(st)->res, pg(st)->row, i);
}

/* A boolean comes as "t" or "f": read as SQLite's 1 or 0. */
static gint64 pg_col_int(store_stmt *st, int i)
{
	const char *v = pg_col_str(st, i);

	if (!v)
		return 0;
	if (!strcmp(v, "t") || !strcmp(v, "f"))
		return *v == 't';
	return g_ascii_strtoll(v, NULL, 10);
}

static double pg_col_double(store_stmt *st, int i)
{
	const char *v = pg_col_str(st, i);

	return v ? g_ascii_strtod(v, NULL) : 0;
}

/* bytea comes as text (\x and hex); unescaped once per read, freed with the row. */
static const void *pg_col_blob(store_stmt *st, int i, size_t *len)
{
	const char *v = pg_col_str(st, i);
	unsigned char *bytes;

	*len = 0;
	if (!v || !(bytes = PQunescapeBytea((const unsigned char *)v, len)))
		return NULL;
	g_ptr_array_add(pg(st)->blobs, bytes);
	return bytes;
}

static int pg_col_count(store_stmt *st)
{
	return pg(st)->res ? PQnfields(pg(st)->res) : 0;
}

static gint64 pg_changes(struct pk_store *s)
{
	return s->changes;
}

/* ---- the schema -------------------------------------------------------- */

/*
 * SQLite's words in the db/ SQL files and what PostgreSQL says for them, in order
 * (INTEGER PRIMARY KEY before INTEGER).  SQLite's integers and reals are
 * 64-bit, hence BIGINT and DOUBLE PRECISION; WITHOUT ROWID is a storage
 * choice PostgreSQL has no word for.
 */
static const struct {
	const char *pattern;
	const char *replacement;
} pg_ddl_rules[] = {
	{ "\\bINTEGER PRIMARY KEY\\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
	{ "\\bINTEGER\\b", "BIGINT" },
	{ "\\bREAL\\b", "DOUBLE PRECISION" },
	{ "\\bBLOB\\b", "BYTEA" },
	{ "\\)\\s*WITHOUT ROWID", ")" },
	/* a migration's line for PostgreSQL alone (009: an identity moved past copied ids) */
	{ "(?m)^-- pg: ", "" },
};

/* A db/ SQL file as PostgreSQL takes it; caller frees. */
static char *pg_ddl(const char *sql)
{
	char *out = g_strdup(sql);

	for (size_t i = 0; i < G_N_ELEMENTS(pg_ddl_rules); i++) {
		g_autoptr(GRegex) re = g_regex_new(pg_ddl_rules[i].pattern, G_REGEX_OPTIMIZE, 0, NULL);
		char *next = g_regex_replace_literal(re, out, -1, 0, pg_ddl_rules[i].replacement, 0, NULL);

		g_free(out);
		out = next;
	}
	return out;
}

/* A whole script in one round trip (the simple protocol takes many statements). */
static int pg_exec_script(struct pk_store *s, const char *sql, const char *name, GError **err)
{
	g_autofree char *ddl = pg_ddl(sql);
	PGresult *res = PQexec(pg_conn(s), ddl);
	ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	int rc = 0;

	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
		rc = pg_error(s, res, err, name);
	PQclear(res);
	return rc;
}

static int pg_version(struct pk_store *s, gint64 *out, GError **err)
{
	gint64 known;

	if (query_int(s, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
		      "AND tablename = 'printkbot_schema'", &known, err) < 0)
		return -1;
	if (!known) {
		*out = 0;
		return 0;
	}
	return query_int(s, "SELECT version FROM printkbot_schema", out, err);
}

static int pg_set_version(struct pk_store *s, int version, GError **err)
{
	g_autoptr(store_stmt) st = NULL;

	if (exec1(s, "CREATE TABLE IF NOT EXISTS printkbot_schema (version BIGINT NOT NULL)", err) < 0 ||
	    exec1(s, "DELETE FROM printkbot_schema", err) < 0 ||
	    !(st = prep(s, "INSERT INTO printkbot_schema (version) VALUES (?1)", err)))
		return -1;
	bind_int(st, 1, version);
	return run(s, st, err);
}

/* Foreign keys hold at every statement: a migration cannot leave a dangling row. */
static char *pg_dangling(struct pk_store *s, GError **err)
{
	return NULL;
}

static const char *const pg_setup[] = { NULL };

const struct store_backend store_pg = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.prep = pg_prep,
	.free = pg_free,
	.index = pg_index,
	.bind_int = pg_bind_int,
	.bind_double = pg_bind_double,
	.bind_text = pg_bind_text,
	.bind_data = pg_bind_data,
	.bind_null = pg_bind_null,
	.step = pg_step,
	.reset = pg_reset,
	.clear = pg_clear,
	.is_null = pg_is_null,
	.col_int = pg_col_int,
	.col_double = pg_col_double,
	.col_str = pg_col_str,
	.col_blob = pg_col_blob,
	.col_count = pg_col_count,
	.changes = pg_changes,
	.exec_script = pg_exec_script,
	.version = pg_version,
	.set_version = pg_set_version,
	.dangling = pg_dangling,
	.begin_sql = "BEGIN",
	.readonly_sql = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
	.setup_sql = pg_setup,
	.ready_sql = pg_setup,
	/* workers starting together on a new database: one makes the schema, the others wait */
	.schema_lock_sql = "SELECT pg_advisory_xact_lock(1886546786)",   /* "prkb" */
	.objects_sql = "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
		       "WHERE n.nspname = current_schema() AND c.relname <> 'printkbot_schema'",
	.table_sql = "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?1",
	.skip_locked = " FOR UPDATE SKIP LOCKED",
	/* session-level: held until the connection ends */
	.intake_lock_sql = "SELECT CASE WHEN pg_try_advisory_lock(1886546788) THEN 1 ELSE 0 END",
	.instr = "strpos",
	/* the server's clock at the statement, not the transaction's start (now()) */
	.now_sql = "CAST(floor(extract(epoch FROM clock_timestamp())) AS BIGINT)",
};

/* ---- db check ---------------------------------------------------------- */

int store_pg_check(struct pk_store *s, const char *url, gint64 *version, GPtrArray *problems,
		   GError **err)
{
	g_autoptr(GError) local = NULL;

	if (pg_open(s, url, err) < 0)
		return -1;
	if (pg_version(s, version, &local) < 0) {
		g_ptr_array_add(problems, g_strdup(local->message));
		*version = -1;
	} else if (*version < 0) {
		g_ptr_array_add(problems, g_strdup_printf("schema version %" G_GINT64_FORMAT " is no "
							  "printkbot schema version", *version));
	}
	pg_close(s);
	return 0;
}
