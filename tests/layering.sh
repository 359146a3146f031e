#!/usr/bin/env bash
# The stages of bot/ are floors (doc/development.md, "Where things live"): a file may
# include its own folder and the floors below, never one above, so no
# stage calls back up and there are no circles.  Fails naming every
# include that goes up.
set -euo pipefail
cd "$(dirname "$0")/.."
floors=(base analysis lab store "intake pipeline" report config daemon cmd)
declare -A floor
for i in "${!floors[@]}"; do
	for d in ${floors[$i]}; do floor[$d]=$i; done
done
bad=0
for f in bot/*/*.[ch]; do
	dir=$(basename "$(dirname "$f")")
	[ -n "${floor[$dir]:-}" ] || { echo "$f: folder $dir has no floor in tests/layering.sh"; bad=1; continue; }
	while IFS=: read -r line inc; do
		[ -n "${floor[$inc]:-}" ] || { echo "$f:$line: includes unknown stage $inc/"; bad=1; continue; }
		if [ "${floor[$inc]}" -gt "${floor[$dir]}" ]; then
			echo "$f:$line: $dir/ includes $inc/, a floor above it"
			bad=1
		fi
	done < <(grep -n '^#include "[a-z]*/' "$f" | sed -E 's|^([0-9]+):#include "([a-z]+)/.*|\1:\2|')
done
[ $bad -eq 0 ] && echo "layering: every include of bot/ stays on its floor or goes down"
exit $bad
