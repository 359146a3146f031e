/*
 * noise.h - records that vary between boots of one kernel, as a mask the
 * diff (kdiff.h) leaves out.
 *
 * A mask is learnt from several boots of the base, stored as sorted lines
 * and rebuilt from them.  It holds normalised keys (pk_kdiff_normalise()
 * of the text after "level,facility,flag;", as /dev/kmsg writes a record),
 * so what normalising masks (timestamps, pointers, clock figures...) does
 * not make a record noise; its presence, count or level varying does.
 * Pure computation: no I/O.
 */
#ifndef PK_NOISE_H
#define PK_NOISE_H

#include <stdbool.h>

#include "analysis/kmsg.h"

/* Records that vary between boots of one kernel, as normalised keys. */
struct pk_noise;

/*
 * Learn run-to-run noise from n >= 2 captures of the same kernel (borrowed):
 * every normalised record that is not present in all of them (same count,
 * same level) is noise.  With n < 2 nothing is noise.  Returns a new mask
 * (pk_noise_free(), which accepts NULL).
 */
struct pk_noise *pk_noise_learn(const struct pk_capture *const *boots, unsigned n);
void pk_noise_free(struct pk_noise *noise);
/* Add every key of from (borrowed; NULL adds nothing) to into. */
void pk_noise_add(struct pk_noise *into, const struct pk_noise *from);
/* How many records the mask names. */
unsigned pk_noise_size(const struct pk_noise *noise);
/* The mask as sorted lines (for storing it); caller frees with g_strfreev. */
char **pk_noise_keys(const struct pk_noise *noise);
/* Rebuild a mask from pk_noise_keys() output (borrowed, copied); a new mask. */
struct pk_noise *pk_noise_from_keys(const char *const *keys);
/* Whether the mask says record r varies between boots (false for a NULL mask). */
bool pk_noise_has(const struct pk_noise *noise, const struct pk_record *r);

#endif
