/*
 * policy.h - what the bot agrees to build.  A patch is code from a stranger
 * and the kernel build runs programs from the tree, so before anything is
 * applied a patch is checked here: unsafe paths (absolute, "..", ".git",
 * symlinks) and binary diffs are always refused, and size limits apply.
 * The build system (Makefile, Kbuild, Kconfig, scripts/, tools/) and
 * other files the build reads (assembly, linker scripts, tables...) are
 * built when the sandbox is on and a throwaway layer (layer.h) can take
 * the build's writes, so that nothing the patch's build leaves behind
 * reaches a later build; without a layer (not root) or with sandbox =
 * off they are refused unless the configuration allows them
 * (allow_build_system, allow_other_files).  Files the build neither
 * reads nor runs (Documentation/, MAINTAINERS...: PK_PATH_INERT) are
 * applied and not built, so a patch that documents what it changes is
 * tested like one that does not.  The paths judged are the parser's
 * (patch.h); a patch that libgit2, which applies it, reads otherwise (a
 * rename or copy, a symlink mode, a path the parser read differently) is
 * refused too (apply.h's pk_apply_refusal), so what is allowed only ever
 * changes what was judged (tests/fuzz/fuzz-policy-apply.c checks it).
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
#include "lab/pathkind.h"
#include "lab/sandbox.h"

/*
 * Whether patch may be applied and built.  Returns true, or false with
 * *reason set to one sentence naming the file and the rule (caller frees).
 */
bool pk_policy_allows(const struct pk_policy *policy, const struct pk_patch *patch, char **reason);

#endif
