package preflight

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
)

// durabilityConfig are the settings the durability item reads with CONFIG
// GET (allowed: readOnly), one parameter per call so a server that knows
// one and not another still answers.
var durabilityConfig = []string{"min-replicas-to-write", "min-replicas-max-lag", "cluster-node-timeout", "appendonly", "save"}

// durability reads every primary's replication and persistence settings.
func (g *gatherer) durability(ctx context.Context) {
	var primaries []*node
	for _, n := range g.nodes {
		if n.Primary {
			primaries = append(primaries, n)
		}
	}
	samples := make([]history.DurabilitySample, len(primaries))
	for i, n := range primaries {
		samples[i] = g.readDurability(ctx, n)
	}
	g.obs.Durability = samples
}

func (g *gatherer) readDurability(ctx context.Context, n *node) history.DurabilitySample {
	s := history.DurabilitySample{Node: n.Addr, Cluster: g.obs.Topology.Cluster, MinReplicasToWrite: -1, MinReplicasMaxLag: -1}
	if n.pool == nil {
		s.Err = "not connected: " + n.Err
		return s
	}
	repl, err := info(ctx, n.pool, "replication")
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.Replicas, _ = strconv.Atoi(repl["connected_slaves"])
	for i := range s.Replicas {
		// slave0:ip=…,port=…,state=online,offset=…,lag=0
		f := map[string]string{}
		for _, kv := range strings.Split(repl["slave"+strconv.Itoa(i)], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		if f["state"] == "online" {
			s.ReplicasOnline++
		}
		if lag, err := strconv.Atoi(f["lag"]); err == nil {
			s.MaxLag = max(s.MaxLag, lag)
		}
	}
	conf := map[string]string{}
	for _, param := range durabilityConfig {
		v, err := n.pool.Do(ctx, client.Cmd{Prefix: []string{"CONFIG", "GET", param}})
		if err != nil {
			s.ConfigErr = err.Error()
			continue
		}
		f, err := fields(v)
		if err != nil {
			s.ConfigErr = err.Error()
			continue
		}
		if val, ok := f[param]; ok {
			conf[param] = str(val)
		}
	}
	if v, ok := conf["min-replicas-to-write"]; ok {
		s.MinReplicasToWrite, _ = strconv.Atoi(v)
	}
	if v, ok := conf["min-replicas-max-lag"]; ok {
		s.MinReplicasMaxLag, _ = strconv.Atoi(v)
	}
	if v, err := strconv.Atoi(conf["cluster-node-timeout"]); err == nil && g.obs.Topology.Cluster {
		s.NodeTimeout = time.Duration(v) * time.Millisecond
	}
	if pers, err := info(ctx, n.pool, "persistence"); err == nil {
		s.Persistence, s.AOF = true, pers["aof_enabled"] == "1"
	}
	if v, ok := conf["save"]; ok {
		s.RDBSave = v
	} else if s.ConfigErr != "" {
		s.Persistence = false // the save schedule is unknown, not empty
	}
	return s
}
