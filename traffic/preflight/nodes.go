package preflight

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
)

// node is one server the preflight talks to directly: every per-node read
// (SCAN above all) goes to this node's own connection, never through a
// cluster client that would pick one node for a keyless command.
type node struct {
	history.PreflightNode
	pool client.Pool
}

// shardNode is one node entry of CLUSTER SHARDS.
type shardNode struct {
	id, addr, health string
	primary          bool
	slots            int
}

// parseShards reads a CLUSTER SHARDS reply (RESP2 flat key/value arrays or
// RESP3 maps) into its nodes; a primary carries its shard's slot count.
// With tls the node's tls-port is used when it announces one.
func parseShards(reply any, tls bool) ([]shardNode, error) {
	shards, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("cluster shards: %w: %T", client.ErrUnexpectedReply, reply)
	}
	var out []shardNode
	for i, s := range shards {
		shard, err := fields(s)
		if err != nil {
			return nil, fmt.Errorf("cluster shards: shard %d: %w", i, err)
		}
		slots := 0
		ranges, _ := shard["slots"].([]any)
		for j := 0; j+1 < len(ranges); j += 2 {
			lo, err1 := client.AsInt64(ranges[j])
			hi, err2 := client.AsInt64(ranges[j+1])
			if err1 != nil || err2 != nil || hi < lo {
				return nil, fmt.Errorf("cluster shards: shard %d: bad slot range %v-%v", i, ranges[j], ranges[j+1])
			}
			slots += int(hi-lo) + 1
		}
		nodes, _ := shard["nodes"].([]any)
		for j, n := range nodes {
			f, err := fields(n)
			if err != nil {
				return nil, fmt.Errorf("cluster shards: shard %d node %d: %w", i, j, err)
			}
			sn := shardNode{id: str(f["id"]), health: str(f["health"]), primary: str(f["role"]) == "master"}
			host := str(f["endpoint"])
			if host == "" || host == "?" {
				host = str(f["ip"])
			}
			port := str(f["port"])
			if tls && str(f["tls-port"]) != "" {
				port = str(f["tls-port"])
			}
			if host == "" || port == "" || port == "0" {
				return nil, fmt.Errorf("cluster shards: node %s announces no reachable address", sn.id)
			}
			sn.addr = net.JoinHostPort(host, port)
			if sn.primary {
				sn.slots = slots
			}
			out = append(out, sn)
		}
	}
	// Primaries first, then by address: output does not depend on the
	// server's shard order.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].primary != out[j].primary {
			return out[i].primary
		}
		return out[i].addr < out[j].addr
	})
	return out, nil
}

// fields reads one RESP3 map or RESP2 flat key/value array.
func fields(v any) (map[string]any, error) {
	switch t := v.(type) {
	case map[string]any:
		return t, nil
	case []any:
		if len(t)%2 != 0 {
			return nil, fmt.Errorf("odd key/value array of %d: %w", len(t), client.ErrUnexpectedReply)
		}
		m := make(map[string]any, len(t)/2)
		for i := 0; i < len(t); i += 2 {
			k, err := client.AsString(t[i])
			if err != nil {
				return nil, err
			}
			m[k] = t[i+1]
		}
		return m, nil
	}
	return nil, fmt.Errorf("%T: %w", v, client.ErrUnexpectedReply)
}

func str(v any) string {
	s, err := client.AsString(v)
	if err != nil {
		return ""
	}
	return s
}

// parseInfo parses INFO's "field:value" lines.
func parseInfo(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// info runs INFO section on p and parses it.
func info(ctx context.Context, p client.Pool, section string) (map[string]string, error) {
	v, err := p.Do(ctx, client.Cmd{Prefix: []string{"INFO", section}})
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", section, err)
	}
	s, err := client.AsString(v)
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", section, err)
	}
	return parseInfo(s), nil
}

// dial opens a single-node, read-only pool on addr. A plain TCP dial goes
// first: an address nobody listens on fails at once with the dialer's own
// error, instead of after the client library's retries and log lines.
func (g *gatherer) dial(ctx context.Context, addr string) (client.Pool, error) {
	o := g.opts
	d := net.Dialer{Timeout: o.Timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = conn.Close()
	p, err := client.NewPool(ctx, client.Options{
		Backend: client.BackendGoRedis, Mode: client.ModeSingle, Protocol: client.RESP2,
		Addrs: []string{addr}, Username: o.Username, Password: o.Password, TLS: o.TLS,
		ClientName: "slotgate-preflight", DialTimeout: o.Timeout, ReadTimeout: o.Timeout,
	})
	if err != nil {
		return nil, err
	}
	return readOnly{p}, nil
}

// discover connects to the first endpoint that answers and reads the
// topology: on a cluster every node from CLUSTER SHARDS, else every given
// endpoint as its own node. It dials every node; a node that does not
// answer keeps its error (the checks that need it become unknown).
func (g *gatherer) discover(ctx context.Context) error {
	var errs []string
	for _, addr := range g.opts.Endpoints {
		p, err := g.dial(ctx, addr)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", addr, err))
			continue
		}
		g.seed, g.seedAddr = p, addr
		break
	}
	if g.seed == nil {
		return fmt.Errorf("%w: %s", ErrUnreachable, strings.Join(errs, "; "))
	}
	srv, err := info(ctx, g.seed, "server")
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, g.seedAddr, err)
	}
	g.obs.Server = serverVersion(srv)
	cl, err := info(ctx, g.seed, "cluster")
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, g.seedAddr, err)
	}
	topo := &g.obs.Topology
	topo.Cluster = cl["cluster_enabled"] == "1"
	if !topo.Cluster {
		for _, addr := range g.opts.Endpoints {
			n := &node{PreflightNode: history.PreflightNode{Addr: addr, Primary: true}}
			g.nodes = append(g.nodes, n)
		}
	} else {
		if err := g.readCluster(ctx); err != nil {
			topo.Err = err.Error()
			return nil
		}
	}
	g.connect(ctx)
	return nil
}

// readCluster reads CLUSTER INFO and CLUSTER SHARDS from the seed.
func (g *gatherer) readCluster(ctx context.Context) error {
	topo := &g.obs.Topology
	v, err := g.seed.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "INFO"}})
	if err != nil {
		return fmt.Errorf("cluster info: %w", err)
	}
	s, err := client.AsString(v)
	if err != nil {
		return fmt.Errorf("cluster info: %w", err)
	}
	ci := parseInfo(s)
	topo.State = ci["cluster_state"]
	topo.SlotsAssigned, _ = strconv.Atoi(ci["cluster_slots_assigned"])
	topo.SlotsOK, _ = strconv.Atoi(ci["cluster_slots_ok"])
	v, err = g.seed.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "SHARDS"}})
	if err != nil {
		return fmt.Errorf("cluster shards: %w", err)
	}
	shardNodes, err := parseShards(v, g.opts.TLS != nil)
	if err != nil {
		return err
	}
	for _, sn := range shardNodes {
		g.nodes = append(g.nodes, &node{PreflightNode: history.PreflightNode{
			Addr: sn.addr, ID: sn.id, Primary: sn.primary, Slots: sn.slots, Health: sn.health,
		}})
	}
	return nil
}

// connect dials every node in parallel (reusing the seed's pool for its
// own address); on a standalone endpoint it also reads each node's role.
func (g *gatherer) connect(ctx context.Context) {
	forEach(g.nodes, func(n *node) {
		if n.Addr == g.seedAddr {
			n.pool = g.seed
		} else {
			p, err := g.dial(ctx, n.Addr)
			if err != nil {
				n.Err = err.Error()
				return
			}
			n.pool = p
		}
		if !g.obs.Topology.Cluster {
			repl, err := info(ctx, n.pool, "replication")
			if err != nil {
				n.Err = err.Error()
				return
			}
			n.Primary = repl["role"] != "slave"
		}
	})
	for _, n := range g.nodes {
		g.obs.Topology.Nodes = append(g.obs.Topology.Nodes, n.PreflightNode)
	}
}

// primaries are the nodes that hold the keyspace and answered.
func (g *gatherer) primaries() []*node {
	var out []*node
	for _, n := range g.nodes {
		if n.Primary {
			out = append(out, n)
		}
	}
	return out
}

func serverVersion(info map[string]string) string {
	if name := info["server_name"]; name != "" && info[name+"_version"] != "" {
		return name + " " + info[name+"_version"]
	}
	return "redis " + info["redis_version"]
}

// forEach runs f on every node concurrently and waits.
func forEach(nodes []*node, f func(*node)) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n)
		}()
	}
	wg.Wait()
}
