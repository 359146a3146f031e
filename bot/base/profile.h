/*
 * profile.h - where a run's time goes, stage by stage, for bench/: the
 * seconds and count of each stage (apply, make, boot, store...), written
 * when the command ends to the file PRINTKBOT_PROFILE names, one line
 * "STAGE<TAB>COUNT<TAB>SECONDS" each, appended.  Without it nothing is
 * timed.  A stage is a function's whole call: PK_PROFILE_SCOPE("make")
 * at its top times it to whichever return (GCC's cleanup attribute, as
 * g_autoptr).  Stages are not nested in one another, so that they add up;
 * "total" is the whole command, and what no stage holds is the rest.
 */
#ifndef PK_PROFILE_H
#define PK_PROFILE_H

#include <glib.h>
#include <stdbool.h>

struct pk_profile_span {
	const char *stage;
	gint64 start;       /* monotonic microseconds; 0: not profiling */
};

/* Whether PRINTKBOT_PROFILE is set (read once). */
bool pk_profile_on(void);

static inline struct pk_profile_span pk_profile_begin(const char *stage)
{
	return (struct pk_profile_span){ stage, pk_profile_on() ? g_get_monotonic_time() : 0 };
}

/* The span's time added to its stage (thread-safe). */
void pk_profile_end(struct pk_profile_span *span);

/* unused: clang does not count the cleanup as a use of the span */
#define PK_PROFILE_SCOPE(stage) \
	struct pk_profile_span pk_profile_span_ __attribute__((cleanup(pk_profile_end), unused)) = \
		pk_profile_begin(stage)

/* Append every stage's line to $PRINTKBOT_PROFILE (nothing when unset); the table is emptied. */
void pk_profile_write(void);

#endif
