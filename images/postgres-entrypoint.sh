#!/bin/sh
# The subset of the public postgres image's docker-entrypoint.sh that
# slotgate relies on, for the local image (no gosu, no bash: /bin/sh is
# dash). It runs as the postgres user (the image's USER); on the first start
# it initialises PGDATA with the POSTGRES_* settings, then execs the command.
set -e
: "${PGDATA:=/var/lib/postgresql/data}"
if [ "${1#-}" != "$1" ]; then
	set -- postgres "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
	user=${POSTGRES_USER:-postgres}
	auth=${POSTGRES_HOST_AUTH_METHOD:-trust}
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list, as upstream
	initdb -D "$PGDATA" -U "$user" -A "$auth" --no-sync ${POSTGRES_INITDB_ARGS:--E UTF8 --locale=C} >/dev/null
	printf 'host all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
	db=${POSTGRES_DB:-$user}
	if [ "$db" != postgres ]; then
		printf 'CREATE DATABASE "%s";\n' "$db" | postgres --single -j -D "$PGDATA" postgres >/dev/null
	fi
	echo "docker-entrypoint: initialised $PGDATA (user $user, database $db)"
fi
exec "$@"
