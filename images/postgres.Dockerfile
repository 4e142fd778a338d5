# slotgate/postgres:<major>-local — the host's Debian-packaged PostgreSQL in
# an otherwise empty image (FROM scratch is never pulled). scripts/images.sh
# stages rootfs/ (postgres, initdb, /bin/sh for initdb's popen, the shared
# libraries ldd lists, the server's lib and share directories, UTC zoneinfo,
# a passwd file with the postgres user) and state/ (the directories the
# server writes, owned by postgres).
#
# Interface kept compatible with the public postgres image the fixtures
# default to: POSTGRES_USER, POSTGRES_DB, POSTGRES_HOST_AUTH_METHOD and
# POSTGRES_INITDB_ARGS are honoured on the first start, PGDATA is
# /var/lib/postgresql/data, the command is "postgres [-c name=value ...]".
FROM scratch
ARG PG_MAJOR
COPY rootfs/ /
COPY --chown=999:999 state/ /
ENV PATH=/usr/lib/postgresql/${PG_MAJOR}/bin:/usr/local/bin:/usr/bin:/bin \
    LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu \
    PGDATA=/var/lib/postgresql/data \
    TZ=UTC
USER postgres
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
