/*
 * fuzz-authres.c - who may command the bot: Authentication-Results values
 * (intake/authres.h), read alone and as the fields of a mail (split at
 * blank lines), and #printkbot lines in a mail's text (intake/mailcmd.h).
 * What the reasons say is printable ASCII, and text the bot defused never
 * gives a command.
 */
#include "fuzz.h"
#include "intake/authres.h"
#include "intake/mailcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ids[] = { "mx.example.org", "spf.example.org", NULL };
	char *buf = fuzz_copy(data, size);
	g_auto(pk_authres_t) a = { 0 };
	g_auto(pk_mailcmd_t) c = { 0 }, d = { 0 };
	g_auto(GStrv) fields = g_strsplit(buf, "\n\n", 8);
	g_autofree char *what = NULL, *defused = NULL;

	fuzz_init_once();
	pk_authres_parse(&a, buf, NULL);
	pk_authres_vouches((const char *const *)fields, g_strv_length(fields), ids, "max@lists.example.org", &what);
	for (const char *p = what; *p; p++)
		if (!g_ascii_isprint(*p))
			abort();
	pk_mailcmd_parse(&c, buf);
	defused = pk_mailcmd_defuse(buf);
	pk_mailcmd_parse(&d, defused);
	if (d.kind != PK_MAILCMD_NONE)
		abort();
	free(buf);
	return 0;
}
