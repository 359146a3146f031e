#!/usr/bin/env bash
# pg-fixture.sh - a throwaway PostgreSQL for the store's tests, on a Unix
# socket in its own directory (no TCP port: nothing else can reach it).
#
#   pg-fixture.sh start DIR   initdb in DIR/data, start the server, print
#                             the URL of its "postgres" database
#   pg-fixture.sh stop DIR    stop it and remove DIR
#
# Exit status 77 when PostgreSQL's binaries are absent (the tests then
# skip PostgreSQL and say so).  PostgreSQL refuses to run as root: as root
# the server runs as nobody, in a directory that nobody owns.  The
# cluster is what the store asks for (sql-pg.c): SQL_ASCII and C locale,
# so text holds any bytes and sorts as in SQLite; no fsync (a test's data
# may be lost with the machine).
set -euo pipefail

cmd=${1:?usage: pg-fixture.sh start|stop DIR}
dir=${2:?usage: pg-fixture.sh start|stop DIR}
bin=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
	echo "no PostgreSQL binaries (initdb, pg_ctl; Debian's postgresql package)" >&2
	exit 77
fi
as=()
if [ "$(id -u)" = 0 ]; then
	as=(runuser -u nobody --)
fi

case $cmd in
start)
	mkdir -p "$dir"
	[ ${#as[@]} -eq 0 ] || chown nobody "$dir"
	"${as[@]}" "$bin/initdb" -D "$dir/data" -U printkbot --auth=trust --no-locale -E SQL_ASCII \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
	"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \
		-o "-c listen_addresses='' -k $dir -c fsync=off -c full_page_writes=off" start \
		|| { cat "$dir/server.log" >&2; exit 1; }
	echo "postgresql://printkbot@/postgres?host=$dir"
	;;
stop)
	[ ! -d "$dir/data" ] || "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -w -s -m immediate stop || true
	rm -rf "$dir"
	;;
*)
	echo "usage: pg-fixture.sh start|stop DIR" >&2
	exit 2
	;;
esac
