#!/bin/sh
# cluster-create: forms the compose topology's 3×1 cluster from six empty
# cluster-enabled nodes with plain CLUSTER commands (ADDSLOTSRANGE, MEET,
# REPLICATE), then waits until every node reports cluster_state:ok and every
# replica's link is up. Run once by the cluster-create service; idempotent:
# it exits 0 at once when the cluster is already formed.
#
# Plain commands rather than `valkey-cli --cluster create`: the nodes
# announce a client address for the HOST (cluster-announce-client-ipv4), and
# valkey-cli's final check would dial those addresses from inside this
# container. Here every command goes to the bus-side addresses given below.
#
# PRIMARIES and REPLICAS are space-separated ip:port lists; replica i
# follows primary i. The bus port is the client port + 10000 (the default).
set -eu

PRIMARIES="${PRIMARIES:-172.28.0.11:7001 172.28.0.12:7002 172.28.0.13:7003}"
REPLICAS="${REPLICAS:-172.28.0.14:7004 172.28.0.15:7005 172.28.0.16:7006}"
TIMEOUT="${TIMEOUT:-60}"

cli() { addr=$1; shift; valkey-cli -h "${addr%:*}" -p "${addr##*:}" "$@"; }
info_field() { cli "$1" cluster info | tr -d '\r' | sed -n "s/^$2://p"; }
die() { echo "cluster-create: $*" >&2; exit 1; }
# expect ADDR WANT ARGS...: run a command and require the reply WANT.
expect() {
	addr=$1 want=$2; shift 2
	got=$(cli "$addr" "$@" | tr -d '\r')
	[ "$got" = "$want" ] || die "$addr $*: $got"
}
# wait_for WHAT CMD...: retry CMD every 0.2 s until it succeeds or TIMEOUT.
wait_for() {
	what=$1; shift
	tries=$((TIMEOUT * 5))
	until "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || die "timed out after ${TIMEOUT}s waiting for $what"
		sleep 0.2
	done
}

set -- $PRIMARIES
first=$1
primaries=$#
set -- $PRIMARIES $REPLICAS
nodes=$#

formed() {
	for n in $PRIMARIES $REPLICAS; do
		[ "$(info_field "$n" cluster_state)" = ok ] || return 1
		[ "$(info_field "$n" cluster_known_nodes)" = "$nodes" ] || return 1
	done
}
if formed 2>/dev/null; then
	echo "cluster-create: already formed ($nodes nodes, cluster_state:ok)"
	exit 0
fi

for n in $PRIMARIES $REPLICAS; do
	wait_for "$n to answer" sh -c "valkey-cli -h ${n%:*} -p ${n##*:} ping 2>/dev/null | grep -q PONG"
	[ "$(info_field "$n" cluster_known_nodes)" = 1 ] || die "$n already knows other nodes: start from empty volumes (docker compose down -v)"
done

# Slots split evenly, as valkey-cli --cluster create does.
i=0
for p in $PRIMARIES; do
	expect "$p" OK cluster addslotsrange $((i * 16384 / primaries)) $(((i + 1) * 16384 / primaries - 1))
	i=$((i + 1))
done

for n in $PRIMARIES $REPLICAS; do
	[ "$n" = "$first" ] || expect "$first" OK cluster meet "${n%:*}" "${n##*:}"
done
knows_all() { for n in $PRIMARIES $REPLICAS; do [ "$(info_field "$n" cluster_known_nodes)" = "$nodes" ] || return 1; done; }
wait_for "every node to know all $nodes nodes" knows_all

set -- $PRIMARIES
for r in $REPLICAS; do
	[ $# -gt 0 ] || die "more replicas than primaries"
	id=$(cli "$1" cluster myid | tr -d '\r')
	# The replica may not have heard of its primary through gossip yet.
	wait_for "$r to replicate $1" sh -c "valkey-cli -h ${r%:*} -p ${r##*:} cluster replicate $id | grep -q '^OK'"
	shift
done

replicas_up() {
	for r in $REPLICAS; do
		cli "$r" info replication | tr -d '\r' | grep -q '^master_link_status:up' || return 1
	done
}
wait_for "cluster_state:ok on every node" formed
wait_for "every replica's link up" replicas_up
echo "cluster-create: formed $primaries primaries + $((nodes - primaries)) replicas, cluster_state:ok"
