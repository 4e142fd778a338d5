package fencing

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/client"
)

// ConnectionWatermark is the highest client id on the primary pool reaches:
// every connection open now has an id at or below it, every later one a
// higher id (the server numbers connections in order). The operator takes
// it at full-B — the last A pod gone (Deployment Gate rule 2(b)) — for
// CutRetiredConnections.
func ConnectionWatermark(ctx context.Context, pool client.Pool) (int64, error) {
	clients, err := clientList(ctx, pool)
	if err != nil {
		return 0, fmt.Errorf("connection watermark: %w", err)
	}
	var mark int64
	for _, c := range clients {
		mark = max(mark, c.id)
	}
	return mark, nil
}

// CutRetiredConnections closes, on the primary pool reaches, every client
// connection named with prefix (the relay's CLIENT SETNAME) whose id is at
// or below watermark (ConnectionWatermark at full-B): every connection an A
// or O pod ever had, with whatever it still has in flight. The operator
// runs it before the backfill (spec 000 §The Fencing Migration: "Backfill
// (once, after full-B)"; §Deployment Gate rule 3).
//
// Why: T1 and T2 hold under E1, which retires O and A processes but not
// what they already sent. An A acquire still in the network — a segment
// an A pod's kernel keeps retransmitting after the pod died, delivered
// when a partition heals — lands after the backfill and the observed-zero
// drain, passes A's union check when the session's new key is free, writes
// the old key and issues max(old, new) + 1 into the old counter: a second
// authority no C script consults, at a generation C issues again. Once the
// server has closed the connection it was sent on, such a segment meets a
// closed socket. B pods' connections opened before full-B are cut too:
// they are live processes and reconnect (a retried call), which E1 already
// accounts for.
//
// It returns the names of the connections it closed. Disabled mode only,
// like the backfill: one primary holds both keyspaces.
func CutRetiredConnections(ctx context.Context, pool client.Pool, prefix string, watermark int64) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("cut retired connections: %w: an empty name prefix would cut every client", client.ErrBadOptions)
	}
	clients, err := clientList(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("cut retired connections: %w", err)
	}
	var cut []string
	for _, c := range clients {
		if !strings.HasPrefix(c.name, prefix) || c.id > watermark {
			continue
		}
		// The filter form answers how many it closed: 0 when the client
		// left on its own meanwhile.
		reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CLIENT", "KILL", "ID", strconv.FormatInt(c.id, 10)}})
		if err != nil {
			return cut, fmt.Errorf("cut retired connections: kill %d (%s): %w", c.id, c.name, err)
		}
		if n, _ := client.AsInt64(reply); n > 0 {
			cut = append(cut, c.name)
		}
	}
	return cut, nil
}

// clientEntry is one line of CLIENT LIST: its id and name.
type clientEntry struct {
	id   int64
	name string
}

func clientList(ctx context.Context, pool client.Pool) ([]clientEntry, error) {
	reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CLIENT", "LIST"}})
	if err != nil {
		return nil, fmt.Errorf("client list: %w", err)
	}
	list, err := client.AsString(reply)
	if err != nil {
		return nil, fmt.Errorf("client list: %w", err)
	}
	return parseClientList(list), nil
}

// parseClientList reads CLIENT LIST's "k=v k=v" lines. Over RESP3 the reply
// is a verbatim string, which valkey-go hands back with its "txt:" format
// prefix.
func parseClientList(s string) []clientEntry {
	s = strings.TrimPrefix(s, "txt:")
	var out []clientEntry
	for _, line := range strings.Split(s, "\n") {
		e := clientEntry{id: -1}
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch k {
			case "id":
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					e.id = n
				}
			case "name":
				e.name = v
			}
		}
		if e.id >= 0 {
			out = append(out, e)
		}
	}
	return out
}
