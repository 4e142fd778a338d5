# slotgate/valkey:<version>-local — the host's Debian-packaged valkey-server
# in an otherwise empty image (FROM scratch is never pulled, so this builds on
# an engine with no registry). scripts/images.sh stages rootfs/ (the binary,
# the shared libraries ldd lists, the dynamic loader, /data and /tmp) and
# builds this with the staged tree as context.
#
# Interface kept compatible with the public valkey/valkey image the fixtures
# default to: the command is "valkey-server [config file | --directive ...]",
# the working and data directory is /data, the port is 6379.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
WORKDIR /data
EXPOSE 6379
CMD ["valkey-server"]
