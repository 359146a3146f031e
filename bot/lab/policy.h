/*
 * policy.h - what the bot agrees to build.  A patch is code from a stranger
 * and the kernel build runs programs from the tree, so before anything is
 * applied a patch is checked here: unsafe paths (absolute, "..", symlinks)
 * and binary diffs are always refused; the build system (Makefile, Kbuild,
 * Kconfig, scripts/, tools/) and files other than C sources and headers are
 * refused unless the configuration allows them; size limits apply.
 *
 * Every patch is refused, too, when the sandbox (sandbox.h) is on but
 * cannot run (bubblewrap missing): a patch is built only in the sandbox
 * unless the configuration says sandbox = off explicitly.
 */
#ifndef PK_POLICY_H
#define PK_POLICY_H

#include <stdbool.h>

#include "base/patch.h"
#include "base/settings.h"
#include "lab/sandbox.h"

/*
 * Whether patch may be applied and built.  Returns true, or false with
 * *reason set to one sentence naming the file and the rule (caller frees).
 */
bool pk_policy_allows(const struct pk_policy *policy, const struct pk_patch *patch, char **reason);

#endif
