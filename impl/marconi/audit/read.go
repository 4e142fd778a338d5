package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/slotgate/slotgate/impl/client"
)

// readChunk bounds one XRANGE of ReadStream.
const readChunk = 500

// StreamEntry is one Marconi Cache entry as ReadStream returns it.
type StreamEntry struct {
	ID    string
	Entry Entry
}

// ReadStream reads tenant's whole Marconi Cache stream, oldest first, with
// XRANGE in chunks (a cold-start reader: the obligation index's
// rehydration, §3.4/§6, and the harness's independent count). Entries
// whose JSON does not decode are skipped.
func ReadStream(ctx context.Context, pool client.Pool, tenant string) ([]StreamEntry, error) {
	keys, err := KeysFor(tenant)
	if err != nil {
		return nil, err
	}
	var out []StreamEntry
	start := "-"
	for {
		reply, err := pool.Do(ctx, client.NewCmd("XRANGE", []string{keys.Stream}, start, "+", "COUNT", strconv.Itoa(readChunk)))
		if err != nil {
			return out, fmt.Errorf("read stream %s: %w", keys.Stream, err)
		}
		msgs, err := parseEntries(reply)
		if err != nil {
			return out, fmt.Errorf("read stream %s: %w", keys.Stream, err)
		}
		for _, m := range msgs {
			var e Entry
			if m.Deleted || json.Unmarshal([]byte(m.Fields["entry"]), &e) != nil {
				continue
			}
			out = append(out, StreamEntry{ID: m.ID, Entry: e})
		}
		if len(msgs) < readChunk {
			return out, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}
