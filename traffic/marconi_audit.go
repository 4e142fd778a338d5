package traffic

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// MetricSum reads a Prometheus registry as an operator would: the sum of
// every sample of metric name whose labels include want.
func MetricSum(g prometheus.Gatherer, name string, want map[string]string) (float64, error) {
	// Grouped by the empty label name every sample carries as "": one group.
	by, err := MetricByLabel(g, name, "", want)
	return by[""], err
}

// MetricByLabel sums metric name per value of label, among samples whose
// labels include want.
func MetricByLabel(g prometheus.Gatherer, name, label string, want map[string]string) (map[string]float64, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather %s: %w", name, err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			match := true
			for k, v := range want {
				match = match && labels[k] == v
			}
			if match {
				out[labels[label]] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return out, nil
}

// AuditGroup is a tenant stream's consumer-group state (XINFO GROUPS).
type AuditGroup struct {
	Length      int64
	Pending     int64
	Undelivered int64
}

// ReadAuditGroup reads tenant's stream length and its archiver group's
// pending count and lag (entries never delivered); a missing group counts
// every entry as undelivered.
func ReadAuditGroup(ctx context.Context, pool client.Pool, tenant, group string) (AuditGroup, error) {
	keys, err := audit.KeysFor(tenant)
	if err != nil {
		return AuditGroup{}, err
	}
	var g AuditGroup
	v, err := pool.Do(ctx, client.NewCmd("XLEN", []string{keys.Stream}))
	if err != nil {
		return g, fmt.Errorf("xlen %s: %w", keys.Stream, err)
	}
	g.Length, _ = client.AsInt64(v)
	if g.Length == 0 {
		return g, nil // nothing to deliver (and XINFO errors on a missing key)
	}
	v, err = pool.Do(ctx, client.Cmd{Prefix: []string{"XINFO", "GROUPS"}, Keys: []string{keys.Stream}})
	if err != nil {
		return g, fmt.Errorf("xinfo groups %s: %w", keys.Stream, err)
	}
	groups, _ := v.([]any)
	g.Undelivered = g.Length
	for _, raw := range groups {
		fields := ReplyFields(raw)
		if fields["name"] != group {
			continue
		}
		g.Pending, _ = client.AsInt64(fields["pending"])
		if lag, ok := fields["lag"]; ok && lag != nil {
			g.Undelivered, _ = client.AsInt64(lag)
		}
		// The server's lag is entries-added minus the entries the group
		// read: entries trimmed before the group read them stay in it
		// forever. Nothing after last-delivered-id means nothing is
		// undelivered, whatever the counter says.
		if last, err := client.AsString(fields["last-delivered-id"]); err == nil && g.Undelivered > 0 {
			next, err := EntryAfter(ctx, pool, keys.Stream, last)
			if err != nil {
				return g, err
			}
			if next == "" {
				g.Undelivered = 0
			}
		}
	}
	return g, nil
}

// ReplyFields reads an XINFO reply element or a stream entry's fields: a
// map under RESP3, a flat field/value array under RESP2.
func ReplyFields(v any) map[string]any {
	out := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		return t
	case []any:
		for i := 0; i+1 < len(t); i += 2 {
			if k, err := client.AsString(t[i]); err == nil {
				out[k] = t[i+1]
			}
		}
	}
	return out
}

// ReadAuditStream counts the entries of tenant's stream per signal id
// (XRANGE in pages).
func ReadAuditStream(ctx context.Context, pool client.Pool, tenant string) (map[string]int, error) {
	entries, err := ReadStreamEntries(ctx, pool, tenant)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range entries {
		if e.SignalID != "" {
			out[e.SignalID]++
		}
	}
	return out, nil
}

// ReadStreamEntries reads tenant's stream in order (XRANGE in pages).
func ReadStreamEntries(ctx context.Context, pool client.Pool, tenant string) ([]history.StreamEntry, error) {
	keys, err := audit.KeysFor(tenant)
	if err != nil {
		return nil, err
	}
	var out []history.StreamEntry
	start := "-"
	for {
		v, err := pool.Do(ctx, client.NewCmd("XRANGE", []string{keys.Stream}, start, "+", "COUNT", "1000"))
		if err != nil {
			return nil, fmt.Errorf("xrange %s: %w", keys.Stream, err)
		}
		entries, _ := v.([]any)
		for _, raw := range entries {
			pair, _ := raw.([]any)
			if len(pair) != 2 {
				return nil, fmt.Errorf("xrange %s: entry %v: %w", keys.Stream, raw, client.ErrUnexpectedReply)
			}
			id, _ := client.AsString(pair[0])
			start = "(" + id
			f := ReplyFields(pair[1])
			sid, _ := client.AsString(f["signal_id"])
			off, _ := client.AsString(f["offset"])
			out = append(out, history.StreamEntry{ID: id, SignalID: sid, Offset: off})
		}
		if len(entries) < 1000 {
			return out, nil
		}
	}
}

// EntryAfter is the id of stream's first entry after id ("" when none).
func EntryAfter(ctx context.Context, pool client.Pool, stream, id string) (string, error) {
	v, err := pool.Do(ctx, client.NewCmd("XRANGE", []string{stream}, "("+id, "+", "COUNT", "1"))
	if err != nil {
		return "", fmt.Errorf("xrange %s: %w", stream, err)
	}
	if entries, _ := v.([]any); len(entries) > 0 {
		if pair, _ := entries[0].([]any); len(pair) == 2 {
			next, _ := client.AsString(pair[0])
			return next, nil
		}
	}
	return "", nil
}

// ReadAuditCounts counts rows per signal id of one audit table (read
// directly, past any fault on the proxied link).
func ReadAuditCounts(ctx context.Context, dsn, schema, table string) (map[string]int, error) {
	conn, err := ConnectSchema(ctx, dsn, schema)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT signal_id, count(*) FROM %s GROUP BY signal_id", pgx.Identifier{table}.Sanitize()))
	if err != nil {
		return nil, fmt.Errorf("count %s.%s: %w", schema, table, err)
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	if err != nil {
		return nil, fmt.Errorf("count %s.%s: %w", schema, table, err)
	}
	return out, nil
}

// ConnectSchema opens a PostgreSQL connection to dsn with schema as its
// search path: the audit tables of one scenario live in a schema of its
// own.
func ConnectSchema(ctx context.Context, dsn, schema string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse dsn: %w", err)
	}
	cfg.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	return conn, nil
}
