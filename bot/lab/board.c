/* board.c - the QEMU boards of qemu/boards; see board.h. */
#include "lab/board.h"

#include <string.h>

#include "base/util.h"

void pk_board_free(struct pk_board *board)
{
	if (!board)
		return;
	g_free(board->prefix);
	g_free(board->machine);
	g_free(board->dtb);
	g_free(board->console);
	g_free(board->capture_port);
	g_free(board->memory);
	g_free(board->smp);
	g_strfreev(board->symbols);
	g_free(board->row);
	g_free(board);
}

/* A device name for console= or printkbot.capture=: what /dev holds, no path, no option. */
static bool device_name(const char *v)
{
	if (!*v || strlen(v) > 16)
		return false;
	for (const char *c = v; *c; c++)
		if (!g_ascii_isalnum(*c))
			return false;
	return true;
}

/* A QEMU size or count: digits, then at most a unit (1G, 512M, 4). */
static bool qemu_number(const char *v)
{
	size_t digits = strspn(v, "0123456789");

	return digits > 0 && (!v[digits] || (strchr("KMG", v[digits]) && !v[digits + 1]));
}

/* One key=value word of a row into b; false when the key or its value is not one the table knows. */
static bool take_key(struct pk_board *b, const char *word, const char **why)
{
	const char *eq = strchr(word, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - word) : strlen(word);
	char **slot = NULL;

#define KEY(k) (klen == strlen(k) && !strncmp(word, k, klen))
	if (KEY("dtb")) {
		/* a make target under arch/<karch>/boot/dts/: no way out of it */
		if (!g_str_has_suffix(v, ".dtb") || strstr(v, "..") || *v == '/') {
			*why = "dtb= wants a .dtb path under arch/<arch>/boot/dts/";
			return false;
		}
		slot = &b->dtb;
	} else if (KEY("console") || KEY("capture")) {
		if (!device_name(v)) {
			*why = "console= and capture= want a device name (ttyS1, ttyAMA0)";
			return false;
		}
		slot = KEY("console") ? &b->console : &b->capture_port;
	} else if (KEY("memory") || KEY("smp")) {
		if (!qemu_number(v)) {
			*why = "memory= and smp= want a number (1G, 4)";
			return false;
		}
		slot = KEY("memory") ? &b->memory : &b->smp;
	} else if (KEY("serials")) {
		if (strcmp(v, "capture,console") && strcmp(v, "console,capture")) {
			*why = "serials= is capture,console or console,capture";
			return false;
		}
		b->capture_first = !strcmp(v, "capture,console");
		return true;
	} else {
		*why = "a key is one of dtb, console, capture, serials, memory, smp";
		return false;
	}
#undef KEY
	g_free(*slot);
	*slot = g_strdup(v);
	return true;
}

/* The row's words (prefix, arch, machine, then keys and CONFIG_ symbols) into a board; NULL with err. */
static struct pk_board *parse_row(char **words, const char *row, GError **err)
{
	g_autoptr(GPtrArray) symbols = g_ptr_array_new_with_free_func(g_free);
	struct pk_board *b = g_new0(struct pk_board, 1);
	guint count = g_strv_length(words);
	const char *why = NULL;

	b->row = g_strdup(row);
	if (count < 3) {
		why = "want a path prefix, an architecture and a QEMU machine";
		goto bad;
	}
	b->prefix = g_strdup(words[0]);
	if (!(b->arch = pk_arch_by_name(words[1]))) {
		pk_error(err, PK_ERROR_FAILED, "%s: no architecture \"%s\" (the lab has %s)", row, words[1],
			 pk_arch_names());
		pk_board_free(b);
		return NULL;
	}
	/* the architecture's own machine: its lab as it is */
	if (strcmp(words[2], b->arch->machine))
		b->machine = g_strdup(words[2]);
	for (guint w = 3; w < count; w++) {
		if (g_str_has_prefix(words[w], "CONFIG_")) {
			if (!words[w][strlen("CONFIG_")]) {
				why = "CONFIG_ names no symbol";
				goto bad;
			}
			g_ptr_array_add(symbols, g_strdup(words[w] + strlen("CONFIG_")));
		} else if (!b->machine) {
			why = "a row of the architecture's own machine takes nothing else";
			goto bad;
		} else if (!take_key(b, words[w], &why)) {
			goto bad;
		}
	}
	if (!b->machine && symbols->len) {
		why = "a row of the architecture's own machine takes nothing else";
		goto bad;
	}
	g_ptr_array_add(symbols, NULL);
	b->symbols = (char **)g_ptr_array_steal(symbols, NULL);
	return b;
bad:
	pk_error(err, PK_ERROR_FAILED, "%s: %s", row, why);
	pk_board_free(b);
	return NULL;
}

int pk_board_parse(GPtrArray *boards, const char *text, const char *path, GError **err)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (unsigned n = 0; lines[n]; n++) {
		g_auto(GStrv) words = NULL;
		g_autofree char *row = NULL;
		struct pk_board *b;

		g_strstrip(lines[n]);
		if (!*lines[n] || *lines[n] == '#')
			continue;
		words = g_regex_split_simple("\\s+", lines[n], 0, 0);
		row = g_strdup_printf("%s:%u", path, n + 1);
		if (!(b = parse_row(words, row, err)))
			return -1;
		g_ptr_array_add(boards, b);
	}
	return 0;
}

/* datadir's table, read once; a table that did not parse is an error each time it is asked for. */
static GPtrArray *boards_of(const char *datadir, GError **err)
{
	static GHashTable *tables;   /* datadir -> GPtrArray: the boards live as long as the process */
	g_autofree char *path = g_build_filename(datadir, "qemu", "boards", NULL), *text = NULL;
	GPtrArray *boards;

	if (!tables)
		tables = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	if ((boards = g_hash_table_lookup(tables, datadir)))
		return boards;
	if (pk_read_file(&text, NULL, path, 1 << 20, err) < 0)
		return NULL;
	boards = g_ptr_array_new_with_free_func((GDestroyNotify)pk_board_free);
	if (pk_board_parse(boards, text, path, err) < 0) {
		g_ptr_array_unref(boards);
		return NULL;
	}
	g_hash_table_insert(tables, g_strdup(datadir), boards);
	return boards;
}

int pk_board_for_patch(const struct pk_board **out, const char *datadir, const struct pk_patch *patch,
		       GError **err)
{
	GPtrArray *boards = boards_of(datadir, err);

	*out = NULL;
	if (!boards)
		return -1;
	for (guint i = 0; i < boards->len; i++) {
		const struct pk_board *b = boards->pdata[i];

		if (pk_patch_touches(patch, b->prefix)) {
			*out = b;
			return 0;
		}
	}
	return 0;
}
