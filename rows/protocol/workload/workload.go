// Package workload holds the protocol row's reply-shape probe: typed reads
// (ZSCORE, HGETALL) whose reply shape differs between RESP2 and RESP3, and
// the decoders that turn them into the judge package's ShapeRead records.
package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/rows/protocol/judge"
)

// RawShape is one reply of a typed read, as the pool returned it, with the
// value it must decode to.
type RawShape struct {
	Op, Key string
	// Want is the canonical expected value (see CanonScore, CanonHash).
	Want  string
	Reply any
	Err   error
}

// Decoder turns the protocol-dependent replies into typed values.
type Decoder struct {
	Name  string
	Score func(reply any) (float64, error)
	Hash  func(reply any) (map[string]string, error)
}

// ProtocolAware decodes both shapes: ZSCORE as a RESP3 double or a RESP2
// bulk string, HGETALL as a RESP3 map or a RESP2 flat array.
var ProtocolAware = Decoder{Name: "protocol-aware", Score: scoreAny, Hash: hashAny}

// RESP3Only is the naive decoder of a client written against RESP3 replies
// only: ZSCORE must be a float64, HGETALL a map. Applied to RESP2 replies it
// must fail loudly (the protocol row's reply-shape control).
var RESP3Only = Decoder{Name: "resp3-only", Score: func(reply any) (float64, error) {
	f, ok := reply.(float64)
	if !ok {
		return 0, fmt.Errorf("zscore: want float64, got %T: %w", reply, client.ErrUnexpectedReply)
	}
	return f, nil
}, Hash: func(reply any) (map[string]string, error) {
	m, ok := reply.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("hgetall: want map, got %T: %w", reply, client.ErrUnexpectedReply)
	}
	return hashAny(m)
}}

func scoreAny(reply any) (float64, error) {
	switch t := reply.(type) {
	case float64:
		return t, nil
	case string:
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, fmt.Errorf("zscore %q: %w", t, client.ErrUnexpectedReply)
		}
		return f, nil
	}
	return 0, fmt.Errorf("zscore: %T: %w", reply, client.ErrUnexpectedReply)
}

func hashAny(reply any) (map[string]string, error) {
	out := map[string]string{}
	switch t := reply.(type) {
	case map[string]any:
		for k, v := range t {
			s, err := client.AsString(v)
			if err != nil {
				return nil, fmt.Errorf("hgetall field %s: %w", k, err)
			}
			out[k] = s
		}
		return out, nil
	case []any:
		if len(t)%2 != 0 {
			return nil, fmt.Errorf("hgetall: odd array of %d: %w", len(t), client.ErrUnexpectedReply)
		}
		for i := 0; i < len(t); i += 2 {
			k, err1 := client.AsString(t[i])
			v, err2 := client.AsString(t[i+1])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("hgetall pair %d: %w", i/2, client.ErrUnexpectedReply)
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("hgetall: %T: %w", reply, client.ErrUnexpectedReply)
}

// CanonScore renders a score canonically.
func CanonScore(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// CanonHash renders a hash canonically (sorted field=value pairs).
func CanonHash(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ShapeProbe writes n sorted-set members and n hashes with seeded values
// under prefix (keys spread over every slot), then reads each back with
// ZSCORE and HGETALL, returning the raw replies.
func ShapeProbe(ctx context.Context, p client.Pool, rng *rand.Rand, prefix string, n int) []RawShape {
	var out []RawShape
	for i := range n {
		zk := fmt.Sprintf("%s:z:%d:%x", prefix, i, rng.Uint32())
		score := float64(rng.IntN(1_000_000)) / 8 // exact in binary, some fractional
		_, err := p.Do(ctx, client.NewCmd("ZADD", []string{zk}, CanonScore(score), "m"))
		if err != nil {
			out = append(out, RawShape{Op: "ZSCORE", Key: zk, Want: CanonScore(score), Err: err})
		} else {
			reply, err := p.Do(ctx, client.NewCmd("ZSCORE", []string{zk}, "m"))
			out = append(out, RawShape{Op: "ZSCORE", Key: zk, Want: CanonScore(score), Reply: reply, Err: err})
		}

		hk := fmt.Sprintf("%s:h:%d:%x", prefix, i, rng.Uint32())
		h := map[string]string{}
		args := []string{}
		for f := range 1 + rng.IntN(4) {
			k, v := fmt.Sprintf("f%d", f), fmt.Sprintf("v%x", rng.Uint32())
			h[k] = v
			args = append(args, k, v)
		}
		_, err = p.Do(ctx, client.NewCmd("HSET", []string{hk}, args...))
		if err != nil {
			out = append(out, RawShape{Op: "HGETALL", Key: hk, Want: CanonHash(h), Err: err})
			continue
		}
		reply, err := p.Do(ctx, client.NewCmd("HGETALL", []string{hk}))
		out = append(out, RawShape{Op: "HGETALL", Key: hk, Want: CanonHash(h), Reply: reply, Err: err})
	}
	return out
}

// DecodeShapes applies d to every raw reply and records the typed reads
// the reply-shape checker judges.
func DecodeShapes(raw []RawShape, d Decoder) []judge.ShapeRead {
	out := make([]judge.ShapeRead, 0, len(raw))
	for _, r := range raw {
		s := judge.ShapeRead{Op: r.Op, Key: r.Key, Want: r.Want, Shape: shapeOf(r.Reply)}
		if r.Err != nil {
			s.Err = r.Err.Error()
			out = append(out, s)
			continue
		}
		switch r.Op {
		case "ZSCORE":
			f, err := d.Score(r.Reply)
			if err != nil {
				s.DecodeErr = err.Error()
			} else {
				s.Got = CanonScore(f)
			}
		case "HGETALL":
			m, err := d.Hash(r.Reply)
			if err != nil {
				s.DecodeErr = err.Error()
			} else {
				s.Got = CanonHash(m)
			}
		}
		out = append(out, s)
	}
	return out
}

func shapeOf(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case float64:
		return "float64"
	case []any:
		return "array"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
