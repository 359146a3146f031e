/*
 * noise.c - records that vary between boots of one kernel: learning the
 * mask from several boots of the base, storing it, asking it (noise.h).
 */
#include "analysis/kdiff-private.h"
#include "base/profile.h"

#include <stdlib.h>
#include <string.h>

struct pk_noise {
	GHashTable *keys;   /* char* key -> NULL: a set, keys owned */
};

static struct pk_noise *noise_new(void)
{
	struct pk_noise *noise = g_new0(struct pk_noise, 1);

	noise->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return noise;
}

void pk_noise_free(struct pk_noise *noise)
{
	if (!noise)
		return;
	g_hash_table_unref(noise->keys);
	g_free(noise);
}

/* How many times each key occurs in one boot. */
static GHashTable *count_keys(const struct pk_capture *cap, const struct pk_normaliser *n)
{
	GHashTable *counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];
		g_autofree char *norm = pk_normaliser_apply(n, r->text);
		char *key = pk_kdiff_record_key(r, norm);
		guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key));

		g_hash_table_replace(counts, key, GUINT_TO_POINTER(c + 1));
	}
	return counts;
}

/*
 * A key is noise when some boot has it a different number of times than
 * another (zero included): comparing boots key by key, any count that is
 * not the same everywhere marks the key.
 */
struct pk_noise *pk_noise_learn(const struct pk_capture *const *boots, unsigned n)
{
	PK_PROFILE_SCOPE("noise");
	struct pk_noise *noise = noise_new();
	struct pk_normaliser *norm = pk_normaliser_new();
	g_autoptr(GPtrArray) counts = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);

	for (unsigned i = 0; i < n; i++)
		g_ptr_array_add(counts, count_keys(boots[i], norm));
	for (guint i = 0; i < counts->len; i++) {
		GHashTableIter it;
		gpointer key, value;

		g_hash_table_iter_init(&it, counts->pdata[i]);
		while (g_hash_table_iter_next(&it, &key, &value)) {
			for (guint j = 0; j < counts->len; j++) {
				if (g_hash_table_lookup(counts->pdata[j], key) != value) {
					g_hash_table_add(noise->keys, g_strdup(key));
					break;
				}
			}
		}
	}
	pk_normaliser_free(norm);
	return noise;
}

void pk_noise_add(struct pk_noise *into, const struct pk_noise *from)
{
	GHashTableIter it;
	gpointer key;

	if (!from)
		return;
	g_hash_table_iter_init(&it, from->keys);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_hash_table_add(into->keys, g_strdup(key));
}

unsigned pk_noise_size(const struct pk_noise *noise)
{
	return noise ? g_hash_table_size(noise->keys) : 0;
}

char **pk_noise_keys(const struct pk_noise *noise)
{
	guint n = 0;
	char **keys, **out;

	if (!noise)
		return g_new0(char *, 1);
	keys = (char **)g_hash_table_get_keys_as_array(noise->keys, &n);
	out = g_new0(char *, n + 1);

	qsort(keys, n, sizeof(*keys), pk_kdiff_compare_strings);
	for (guint i = 0; i < n; i++)
		out[i] = g_strdup(keys[i]);
	g_free(keys);
	return out;
}

struct pk_noise *pk_noise_from_keys(const char *const *keys)
{
	struct pk_noise *noise = noise_new();

	for (; keys && *keys; keys++)
		g_hash_table_add(noise->keys, g_strdup(*keys));
	return noise;
}

bool pk_noise_has(const struct pk_noise *noise, const struct pk_record *r)
{
	g_autofree char *norm = NULL, *key = NULL;

	if (!noise || !g_hash_table_size(noise->keys))
		return false;
	norm = pk_kdiff_normalise(r->text);
	key = pk_kdiff_record_key(r, norm);
	return g_hash_table_contains(noise->keys, key);
}

/*
 * Messages whose presence, not just figures, follows the host's timing
 * under TCG: whether the PIT calibration of the TSC succeeds decides which
 * tsc: and clocksource: lines a boot prints, and what the delay loop and
 * sched_clock report.  No number of base boots is sure to have seen every
 * variant (a busy host brings out new ones), so with a noise mask they
 * are never compared in the boot log.  The same goes for the APIC timer
 * check, which fails when the host stalls the guest during calibration,
 * and its calibration against the ACPI PM timer, off by tens of percent
 * when the host is busy (then "not consistent" and "adjusted"; seen in
 * e2e 001 beside a kernel build), and for the direct delay-loop
 * calibration of a second CPU, which drops estimates and gives up when it
 * does (seen on a loaded host, 2 CPUs).
 * A patch that changes one of them still shows in the printk index diff.
 */
static const char *const timing_noise[] = {
	"tsc: ", "clocksource: ", "sched_clock: ", "Calibrating delay loop",
	"APIC timer disabled due to verification failure", "calibrate_delay_direct() ",
	"APIC calibration not consistent with PM-Timer: ", "APIC delta adjusted to PM-Timer: ",
};

/*
 * The PS/2 keyboard's and mouse's "input: ... as /devices/platform/i8042/
 * serio1/...": serio's workqueue probes them after init
 * has started, the mouse's protocol probe for seconds of guest time under
 * TCG, so a capture on a busy host may end before the line.  Seen in e2e
 * 020 beside two CPU hogs: three base boots without the mouse's line, the
 * pure conversion's boot and its confirmation with it, a false
 * console-changed.  Other input devices (USB, from qemu/devices) are
 * compared: their boots wait for a quiet log.
 */
static bool is_serio_input(const char *norm)
{
	return g_str_has_prefix(norm, "input: ") && strstr(norm, " as /devices/platform/i8042/serio");
}

static bool is_timing_noise(const char *norm)
{
	for (guint i = 0; i < G_N_ELEMENTS(timing_noise); i++)
		if (g_str_has_prefix(norm, timing_noise[i]))
			return true;
	return is_serio_input(norm);
}

bool pk_noise_drops(const struct pk_noise *noise, const char *norm, const char *key)
{
	return noise && (is_timing_noise(norm) || g_hash_table_contains(noise->keys, key));
}
