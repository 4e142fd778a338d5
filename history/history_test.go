package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"
	"time"
)

func sample(nOps int) History {
	rng := rand.New(rand.NewSource(1))
	h := History{Scenario: "routing/moves/go-redis", Seed: 7, Began: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)}
	for i := range nOps {
		o := Op{Start: time.Duration(i) * time.Millisecond, End: time.Duration(i)*time.Millisecond + 300*time.Microsecond,
			Client: fmt.Sprintf("w%d", i%4), Backend: "go-redis", Slot: rng.Intn(16384), Kind: "set", Outcome: OK}
		if i%97 == 0 {
			o.Outcome, o.ErrKind, o.Err = Unknown, "network", "i/o timeout"
		}
		h.Ops = append(h.Ops, o)
	}
	h.Faults = []FaultWindow{{Fault: "slot/move", Target: "slot 42", Start: 10 * time.Millisecond, End: 40 * time.Millisecond}}
	h.Spans = []Span{{Name: "halt", Start: 11 * time.Millisecond, End: 20 * time.Millisecond}}
	h.Samples = []Sample{{Name: "lag", At: time.Second, Value: 3}}
	h.Judgements = []Judgement{{Row: "routing", Column: "errors", Scenario: h.Scenario,
		Call: &Call{Checker: "no-errors", Input: []json.RawMessage{json.RawMessage(`[]`), json.RawMessage(`1`)}}}}
	return h
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := sample(500)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Began.Equal(h.Began) {
		t.Fatalf("began %v, want %v", got.Began, h.Began)
	}
	got.Began = h.Began
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got.Judgements, h.Judgements)
	}
}

func TestCapKeepsFaultsAndFailures(t *testing.T) {
	h := sample(40_000)
	full, _, err := Cap(h, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	limit := len(full) / 5
	b, thin, err := Cap(h, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > limit {
		t.Fatalf("capped history is %d bytes, cap %d", len(b), limit)
	}
	back, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	notOK := 0
	for _, o := range h.Ops {
		if o.Outcome != OK {
			notOK++
		}
	}
	gotNotOK := 0
	for _, o := range back.Ops {
		if o.Outcome != OK {
			gotNotOK++
		}
	}
	if gotNotOK != notOK {
		t.Fatalf("kept %d non-ok operations, want all %d", gotNotOK, notOK)
	}
	if !reflect.DeepEqual(back.Faults, h.Faults) || !reflect.DeepEqual(back.Judgements, h.Judgements) {
		t.Fatal("fault windows or judgements were cut")
	}
	if back.Dropped != len(h.Ops)-len(back.Ops) || back.Dropped == 0 || thin.Dropped != back.Dropped {
		t.Fatalf("dropped %d, ops %d → %d", back.Dropped, len(h.Ops), len(back.Ops))
	}
	// Deterministic: the same history thins to the same bytes.
	again, _, _ := Cap(h, limit)
	if !bytes.Equal(again, b) {
		t.Fatal("Cap is not deterministic")
	}
}

// Large checker inputs do not starve the operation log: ok operations
// still get half the cap on top of what is always kept.
func TestCapWithLargeJudgement(t *testing.T) {
	h := sample(40_000)
	big := make([]byte, 0, 1<<20)
	big = append(big, '"')
	for i := 0; len(big) < 900_000; i++ {
		big = fmt.Appendf(big, "%x", i*2654435761)
	}
	big = append(big, '"')
	h.Judgements[0].Call.Input = append(h.Judgements[0].Call.Input, big)
	full, _, _ := Cap(h, 1<<40)
	limit := len(full) / 2
	b, thin, err := Cap(h, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(thin.Ops) < len(h.Ops)/20 {
		t.Fatalf("kept %d of %d operations in %d bytes (limit %d): the log was thinned to nothing", len(thin.Ops), len(h.Ops), len(b), limit)
	}
}

func TestRecorderConcurrentAndNil(t *testing.T) {
	r := NewRecorder("s", 1, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				r.Op(Op{Client: fmt.Sprint(g), Start: time.Duration(i), Kind: "get", Outcome: OK})
			}
			r.Fault(FaultWindow{Fault: "f"})
		}()
	}
	wg.Wait()
	if s := r.Snapshot(); len(s.Ops) != 800 || len(s.Faults) != 8 {
		t.Fatalf("recorded %d ops %d faults", len(s.Ops), len(s.Faults))
	}
	var none *Recorder
	none.Op(Op{})
	none.Fault(FaultWindow{})
	if From(context.Background()) != nil || From(With(context.Background(), r)) != r {
		t.Fatal("context does not carry the recorder")
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"routing/moves/go-redis": "routing/moves/go-redis.jsonl.gz",
		"a/../b c":               "a/_../b_c.jsonl.gz",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}
