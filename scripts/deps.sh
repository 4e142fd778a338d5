#!/usr/bin/env bash
# Installs what slotgate's local-process provider needs, when it is missing:
# valkey-server 8 (Debian bookworm-backports), valkey-sentinel (the replicated
# topology's Sentinels; optional, the fixtures fall back to
# valkey-server --sentinel), PostgreSQL server binaries, and Debian's
# redis-server 7 (optional: the client-surface row's older-topology
# scenario serves Redis 7's topology reply with it, and is not run without
# it).
# As root on Debian it installs; elsewhere it prints how.
set -euo pipefail

need_valkey=1
if command -v valkey-server >/dev/null 2>&1; then
  v=$(valkey-server --version | sed -n 's/.*v=\([0-9]*\)\..*/\1/p')
  [ "${v:-0}" -ge 8 ] && need_valkey=0
fi
need_sentinel=1
command -v valkey-sentinel >/dev/null 2>&1 && need_sentinel=0
need_redis7=1
command -v redis-server >/dev/null 2>&1 && need_redis7=0
need_pg=1
if command -v postgres >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  need_pg=0
fi

if [ $need_valkey -eq 0 ] && [ $need_pg -eq 0 ] && [ $need_sentinel -eq 0 ] && [ $need_redis7 -eq 0 ]; then
  echo "deps: valkey-server $(valkey-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), valkey-sentinel, PostgreSQL and redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') present"
  exit 0
fi

is_debian=0
[ -r /etc/debian_version ] && is_debian=1
if [ "$(id -u)" -ne 0 ] || [ $is_debian -ne 1 ]; then
  if [ $need_valkey -eq 0 ] && [ $need_pg -eq 0 ]; then
    # Optional: the fixtures start Sentinels as valkey-server --sentinel.
    [ $need_sentinel -eq 1 ] && echo "deps: valkey-sentinel missing (optional; on Debian: apt-get install -t bookworm-backports valkey-sentinel)"
    [ $need_redis7 -eq 1 ] && echo "deps: redis-server missing (optional, Redis 7 for client-surface's older-topology scenario; on Debian: apt-get install redis-server)"
    echo "deps: valkey-server and PostgreSQL present"
    exit 0
  fi
  echo "deps: missing:$([ $need_valkey -eq 1 ] && echo ' valkey-server>=8')$([ $need_pg -eq 1 ] && echo ' postgresql')" >&2
  echo "deps: on Debian 12 as root, run 'make deps'; by hand:" >&2
  echo "  echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list" >&2
  echo "  apt-get update && apt-get install -y -t bookworm-backports valkey-server valkey-tools valkey-sentinel && apt-get install -y postgresql" >&2
  echo "deps: elsewhere install Valkey 8 and PostgreSQL >= 13 with your package manager and put valkey-server on PATH" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
if [ $need_valkey -eq 1 ] || [ $need_sentinel -eq 1 ]; then
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deps: adding bookworm-backports to the apt sources"
    cat > /etc/apt/sources.list.d/slotgate-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
fi
echo "deps: apt-get update"
apt-get update -qq
if [ $need_valkey -eq 1 ]; then
  echo "deps: installing valkey-server 8 from bookworm-backports"
  apt-get install -y -qq -t bookworm-backports valkey-server valkey-tools >/dev/null
  # The package enables a system service; slotgate starts its own servers.
  (service valkey-server stop || true) >/dev/null 2>&1
fi
if [ $need_sentinel -eq 1 ]; then
  echo "deps: installing valkey-sentinel from bookworm-backports"
  if apt-get install -y -qq -t bookworm-backports valkey-sentinel >/dev/null; then
    # Likewise: slotgate starts its own Sentinels.
    (service valkey-sentinel stop || true) >/dev/null 2>&1
  else
    echo "deps: valkey-sentinel not installed (optional: the fixtures run valkey-server --sentinel)" >&2
  fi
fi
if [ $need_redis7 -eq 1 ]; then
  echo "deps: installing redis-server 7 (optional: client-surface's older-topology scenario)"
  if apt-get install -y -qq redis-server >/dev/null; then
    # The package enables a system service; slotgate starts its own servers.
    (service redis-server stop || true) >/dev/null 2>&1
    (update-rc.d redis-server disable || true) >/dev/null 2>&1
  else
    echo "deps: redis-server not installed (optional: the older-topology scenario is then not run)" >&2
  fi
fi
if [ $need_pg -eq 1 ]; then
  echo "deps: installing postgresql"
  apt-get install -y -qq postgresql >/dev/null
  (service postgresql stop || true) >/dev/null 2>&1
fi
echo "deps: ok: $(valkey-server --version)$(command -v valkey-sentinel >/dev/null 2>&1 && echo ', valkey-sentinel')$(command -v redis-server >/dev/null 2>&1 && echo ", $(redis-server --version | cut -d' ' -f1-3)")"
