package preflight

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
)

// errStop ends a scan early at the caller's request.
var errStop = errors.New("stop")

// scanNode walks n's whole keyspace with SCAN (optionally MATCH), handing
// each batch to each. The scan is Complete only when the cursor came back
// to 0; it stops early after maxKeys keys (0 = no limit) or when each
// returns errStop, and records any other error.
func (g *gatherer) scanNode(ctx context.Context, n *node, match string, maxKeys int, each func([]string) error) history.NodeScan {
	s := history.NodeScan{Node: n.Addr, Slots: n.Slots}
	if n.pool == nil {
		s.Err = "not connected: " + n.Err
		return s
	}
	cursor := "0"
	for {
		args := []string{"SCAN", cursor}
		if match != "" {
			args = append(args, "MATCH", match)
		}
		args = append(args, "COUNT", strconv.Itoa(g.opts.ScanCount))
		reply, err := n.pool.Do(ctx, client.Cmd{Prefix: args})
		if err != nil {
			s.Err = fmt.Sprintf("scan: %v", err)
			return s
		}
		next, keys, err := scanReply(reply)
		if err != nil {
			s.Err = err.Error()
			return s
		}
		s.Keys += len(keys)
		if err := each(keys); err != nil {
			if !errors.Is(err, errStop) {
				s.Err = err.Error()
			}
			return s
		}
		if cursor = next; cursor == "0" {
			s.Complete = true
			return s
		}
		if maxKeys > 0 && s.Keys >= maxKeys {
			s.Err = fmt.Sprintf("stopped after %d keys (--max-keys %d)", s.Keys, maxKeys)
			return s
		}
	}
}

func scanReply(reply any) (cursor string, keys []string, err error) {
	vals, ok := reply.([]any)
	if !ok || len(vals) != 2 {
		return "", nil, fmt.Errorf("scan: %w: %v", client.ErrUnexpectedReply, reply)
	}
	if cursor, err = client.AsString(vals[0]); err != nil {
		return "", nil, fmt.Errorf("scan cursor: %w", err)
	}
	if keys, _, err = client.AsStrings(vals[1]); err != nil {
		return "", nil, fmt.Errorf("scan keys: %w", err)
	}
	return cursor, keys, nil
}

// topKeys keeps every key above the threshold and the k largest below it.
type topKeys struct {
	mu        sync.Mutex
	k         int
	threshold int64
	keys      []history.KeySize
}

func (t *topKeys) add(ks history.KeySize) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys = append(t.keys, ks)
	sort.Slice(t.keys, func(i, j int) bool { return t.keys[i].Bytes > t.keys[j].Bytes })
	over := 0
	for over < len(t.keys) && t.keys[over].Bytes > t.threshold {
		over++
	}
	if len(t.keys) > over+t.k {
		t.keys = t.keys[:over+t.k]
	}
}

// keySizes is the key-size pass: a full SCAN of every primary, each key's
// MEMORY USAGE (Workers at a time per node).
func (g *gatherer) keySizes(ctx context.Context) {
	pass := &history.KeySizePass{Cluster: g.obs.Topology.Cluster, Threshold: g.opts.KeySizeThreshold}
	prim := g.primaries()
	pass.Scans = make([]history.NodeScan, len(prim))
	top := &topKeys{k: 5, threshold: g.opts.KeySizeThreshold}
	idx := map[*node]int{}
	for i, n := range prim {
		idx[n] = i
	}
	forEach(prim, func(n *node) {
		pass.Scans[idx[n]] = g.scanNode(ctx, n, "", g.opts.MaxKeys, func(keys []string) error {
			return g.measure(ctx, n, keys, top)
		})
	})
	pass.Largest = top.keys
	g.obs.KeySizes = pass
}

// measure runs MEMORY USAGE on keys, Workers at a time; a key that vanished
// meanwhile (nil reply) is skipped. The first error ends the node's pass.
func (g *gatherer) measure(ctx context.Context, n *node, keys []string, top *topKeys) error {
	samples := strconv.Itoa(g.opts.MemorySamples)
	sem := make(chan struct{}, g.opts.Workers)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, key := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, err := n.pool.Do(ctx, client.Cmd{Prefix: []string{"MEMORY", "USAGE"}, Keys: []string{key}, Args: []string{"SAMPLES", samples}})
			if err == nil && v == nil {
				return
			}
			var size int64
			if err == nil {
				size, err = client.AsInt64(v)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("memory usage %s: %w", key, err)
				}
				mu.Unlock()
				return
			}
			top.add(history.KeySize{Node: n.Addr, Key: key, Bytes: size, Slot: int(slot.Of(key))})
		}()
	}
	wg.Wait()
	return first
}

// oldLeasePattern is SCAN MATCH for an old-keyspace lease, built from the
// implementation's own old key rule (impl/fencing OldKeys), so the two
// cannot drift.
var oldLeasePattern = fencing.OldKeys(fencing.Session{Community: "*", ID: "*"}).Lease

// oldLeases counts the live old-keyspace leases with a full SCAN MATCH of
// every primary (fencing.CountLeases' pattern, visited per node).
func (g *gatherer) oldLeases(ctx context.Context) {
	c := &history.LeaseCount{Cluster: g.obs.Topology.Cluster, Pattern: oldLeasePattern}
	prim := g.primaries()
	c.Scans = make([]history.NodeScan, len(prim))
	idx := map[*node]int{}
	for i, n := range prim {
		idx[n] = i
	}
	var mu sync.Mutex
	forEach(prim, func(n *node) {
		scan := g.scanNode(ctx, n, oldLeasePattern, 0, func(keys []string) error {
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				if len(c.Sample) < 20 {
					c.Sample = append(c.Sample, n.Addr+" "+k)
				}
			}
			return nil
		})
		mu.Lock()
		c.Scans[idx[n]] = scan
		mu.Unlock()
	})
	sort.Strings(c.Sample)
	g.obs.Leases = c
}

// ruleSessions are the sessions whose key pairs the implementation's rule
// produces for the check: ordinary ids and ones with the characters a tag
// parser trips on (':', '{', '}', empty parts).
var ruleSessions = []fencing.Session{
	{Community: "", ID: ""}, {Community: "c", ID: "a:b"}, {Community: "x{y", ID: "s"}, {Community: "c", ID: "s}t"},
	{Community: "ü-community", ID: "session-✓"},
}

// newKeyPrefix and the member suffixes come from impl/fencing NewKeys.
var (
	newKeyPrefix, _, _ = strings.Cut(fencing.NewKeys(fencing.Session{}).Lease, "{")
	leaseSuffix        = suffix(fencing.NewKeys(fencing.Session{}).Lease)
	generationSuffix   = suffix(fencing.NewKeys(fencing.Session{}).Generation)
)

func suffix(key string) string { return key[strings.LastIndexByte(key, ':'):] }

// pairer groups new-keyspace keys into (lease, generation) pairs of one
// session. The session is the key between the prefix and the member
// suffix with every brace removed, so a mis-tagged member
// (`buzz:tunnel:{c}:s:generation` beside `buzz:tunnel:{c:s}:lease`) still
// pairs with its lease — exactly the pair that must be caught.
type pairer struct {
	bySession map[string]*[2]string // lease, generation
	complete  int
}

var stripBraces = strings.NewReplacer("{", "", "}", "")

func (p *pairer) add(keys ...string) {
	if p.bySession == nil {
		p.bySession = map[string]*[2]string{}
	}
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, newKeyPrefix)
		if !ok {
			continue
		}
		member := 0
		switch {
		case strings.HasSuffix(rest, leaseSuffix):
			rest = strings.TrimSuffix(rest, leaseSuffix)
		case strings.HasSuffix(rest, generationSuffix):
			rest, member = strings.TrimSuffix(rest, generationSuffix), 1
		default:
			continue
		}
		id := stripBraces.Replace(rest)
		m := p.bySession[id]
		if m == nil {
			m = &[2]string{}
			p.bySession[id] = m
		}
		wasComplete := m[0] != "" && m[1] != ""
		m[member] = k
		if !wasComplete && m[0] != "" && m[1] != "" {
			p.complete++
		}
	}
}

// pairs returns the complete pairs, ordered by lease key.
func (p *pairer) pairs() [][2]string {
	var out [][2]string
	for _, m := range p.bySession {
		if m[0] != "" && m[1] != "" {
			out = append(out, *m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// slotPairs gathers the tagged pairs: the key rule's, the live keyspace's
// (up to KeyspacePairs), and the operator's; then each member's slot.
func (g *gatherer) slotPairs(ctx context.Context) {
	var pairs []history.SlotPair
	rule := "key rule (" + g.opts.RuleName + ")"
	for _, s := range ruleSessions[:min(len(ruleSessions), g.opts.RulePairs)] {
		k := g.opts.KeyRule(s)
		pairs = append(pairs, history.SlotPair{Source: rule, A: k.Lease, B: k.Generation})
	}
	for i := len(ruleSessions); i < g.opts.RulePairs; i++ {
		k := g.opts.KeyRule(fencing.Session{Community: "preflight", ID: "s" + strconv.Itoa(i)})
		pairs = append(pairs, history.SlotPair{Source: rule, A: k.Lease, B: k.Generation})
	}
	for _, p := range g.discoverPairs(ctx) {
		pairs = append(pairs, history.SlotPair{Source: "live keyspace", A: p[0], B: p[1]})
	}
	for _, p := range g.opts.Pairs {
		pairs = append(pairs, history.SlotPair{Source: "--pair", A: p[0], B: p[1]})
	}
	for i := range pairs {
		p := &pairs[i]
		var errA, errB error
		p.SlotA, p.By, errA = g.keySlot(ctx, p.A)
		p.SlotB, _, errB = g.keySlot(ctx, p.B)
		if err := firstErr(errA, errB); err != nil {
			p.Err = err.Error()
		}
	}
	g.obs.Pairs = pairs
}

// discoverPairs samples real pairs from every primary's new keyspace.
func (g *gatherer) discoverPairs(ctx context.Context) [][2]string {
	var (
		mu sync.Mutex
		pr pairer
	)
	forEach(g.primaries(), func(n *node) {
		g.scanNode(ctx, n, newKeyPrefix+"*", 0, func(batch []string) error {
			mu.Lock()
			defer mu.Unlock()
			if pr.add(batch...); pr.complete >= g.opts.KeyspacePairs {
				return errStop
			}
			return nil
		})
	})
	pairs := pr.pairs()
	if len(pairs) > g.opts.KeyspacePairs {
		pairs = pairs[:g.opts.KeyspacePairs]
	}
	return pairs
}

// byCRC16 says a slot was computed locally: a disabled-mode endpoint
// refuses CLUSTER KEYSLOT ("cluster support disabled").
const byCRC16 = "CRC16 (impl/slot; CLUSTER KEYSLOT unavailable with cluster support disabled)"

// keySlot asks the server for key's slot (CLUSTER KEYSLOT) on a cluster,
// else computes it with impl/slot (the cluster spec's CRC16, Axiom A1,
// checked against the server by the axioms row).
func (g *gatherer) keySlot(ctx context.Context, key string) (int, string, error) {
	if !g.obs.Topology.Cluster {
		return int(slot.Of(key)), byCRC16, nil
	}
	v, err := g.seed.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "KEYSLOT"}, Args: []string{key}})
	if err != nil {
		return 0, "", fmt.Errorf("cluster keyslot %s: %w", key, err)
	}
	n, err := client.AsInt64(v)
	return int(n), "CLUSTER KEYSLOT", err
}

// probeKeys are the A3 probe's un-tagged pair (different slots; a unit test
// keeps them so). They are never written: the probe script touches no key.
var probeKeys = [2]string{"slotgate:preflight:probe:a", "slotgate:preflight:probe:b"}

// crossSlotProbe sends the A3 probe, one EVAL on the un-tagged pair, to the
// seed node.
func (g *gatherer) crossSlotProbe(ctx context.Context) {
	p := &history.CrossSlotProbe{Node: g.seedAddr, Cluster: g.obs.Topology.Cluster, Keys: probeKeys}
	for i, k := range probeKeys {
		s, _, err := g.keySlot(ctx, k)
		if err != nil {
			p.Err = err.Error()
			g.obs.Probe = p
			return
		}
		p.Slots[i] = s
	}
	_, err := g.seed.Do(ctx, client.Cmd{Prefix: []string{"EVAL", probeScript, "2"}, Keys: probeKeys[:]})
	p.Ran = err == nil
	if err != nil {
		p.ErrKind, p.Err = string(client.KindOf(err)), err.Error()
	}
	g.obs.Probe = p
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
