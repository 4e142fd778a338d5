package audit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

func entry(tenant string, i int) Entry {
	return Entry{Envelope: Envelope{SignalID: fmt.Sprintf("%s-%d", tenant, i), TenantID: tenant, Kind: "ping", Payload: []byte("x")}, Outcome: OutcomePushed}
}

func newTestQueue(t *testing.T, cfg QueueConfig, m Mutant, now func() time.Time) *Queue {
	t.Helper()
	q, err := NewQueue(QueueOptions{Default: cfg, Mutant: m, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// overwriteTotal reads marconi_audit_queue_overwrite_total{tenant} summed
// over reasons from the queue's registry, as an operator would.
func overwriteTotal(t *testing.T, q *Queue, tenant string) float64 {
	t.Helper()
	fams, err := q.Metrics().Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != MetricQueueOverwrite {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" && l.GetValue() == tenant {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func cfg(entries int, p Policy) QueueConfig {
	c := DefaultQueueConfig()
	c.MaxEntries, c.Policy = entries, p
	return c
}

func seqs(items []Item) []uint64 {
	out := make([]uint64, len(items))
	for i, it := range items {
		out[i] = it.Offset.Seq
	}
	return out
}

func TestQueueOldestOverwritesAndCounts(t *testing.T) {
	q := newTestQueue(t, cfg(3, PolicyOldest), MutantNone, nil)
	for i := range 5 {
		if !q.Offer(entry("t1", i)) {
			t.Fatalf("oldest policy refused entry %d", i)
		}
	}
	st := q.Stats("t1")
	if st.Depth != 3 || st.Dropped[DropOverwritten] != 2 || st.Offered != 5 || st.Kept != 5 {
		t.Fatalf("stats %+v, want depth 3, 2 overwritten", st)
	}
	if got := overwriteTotal(t, q, "t1"); got != 2 {
		t.Errorf("overwrite counter %v, want 2", got)
	}
	if got := seqs(q.Take("t1", 10)); fmt.Sprint(got) != "[3 4 5]" {
		t.Errorf("took %v, want the newest three", got)
	}
}

func TestQueueMaxBytesEvictsOldest(t *testing.T) {
	c := cfg(100, PolicyOldest)
	c.MaxBytes = 2*EntrySize(entry("t1", 0)) + 1
	q := newTestQueue(t, c, MutantNone, nil)
	for i := range 4 {
		q.Offer(entry("t1", i))
	}
	if st := q.Stats("t1"); st.Depth != 2 || st.Dropped[DropMaxBytes] != 2 || st.Bytes > c.MaxBytes {
		t.Fatalf("stats %+v, want 2 kept and 2 evicted for max_bytes", st)
	}
	big := entry("t1", 9)
	big.Envelope.Payload = make([]byte, c.MaxBytes)
	if q.Offer(big) {
		t.Error("an entry larger than max_bytes was kept")
	}
	if st := q.Stats("t1"); st.Dropped[DropTooLarge] != 1 || st.Depth != 2 {
		t.Errorf("too-large entry: %+v", st)
	}
}

func TestQueueRejectNew(t *testing.T) {
	q := newTestQueue(t, cfg(3, PolicyRejectNew), MutantNone, nil)
	kept := 0
	for i := range 5 {
		if q.Offer(entry("t1", i)) {
			kept++
		}
	}
	if kept != 3 || q.Stats("t1").Dropped[DropRejected] != 2 || overwriteTotal(t, q, "t1") != 2 {
		t.Fatalf("kept %d, stats %+v", kept, q.Stats("t1"))
	}
	if got := seqs(q.Take("t1", 10)); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("took %v, want the first three", got)
	}
}

func TestQueueBoundedBackPressure(t *testing.T) {
	c := cfg(1, PolicyBoundedBackPressure)
	c.BackPressureWait = 20 * time.Millisecond
	q := newTestQueue(t, c, MutantNone, nil)
	q.Offer(entry("t1", 0))

	// No writer has ever taken anything: nobody will free space.
	began := time.Now()
	if q.Offer(entry("t1", 1)) {
		t.Fatal("full queue with no writer kept the entry")
	}
	if d := time.Since(began); d >= c.BackPressureWait {
		t.Errorf("refusal without a writer took %v: it waited for space that cannot come", d)
	}

	// A draining writer (it just took an entry) that frees nothing within
	// the wait: refused after about the wait.
	q.Take("t1", 1)
	q.Offer(entry("t1", 2))
	began = time.Now()
	if q.Offer(entry("t1", 3)) {
		t.Fatal("full queue kept the entry although nothing was freed")
	}
	if d := time.Since(began); d < c.BackPressureWait || d > c.BackPressureWait+200*time.Millisecond {
		t.Errorf("refusal after %v, want about the %v wait", d, c.BackPressureWait)
	}

	// A draining writer that frees space within the wait lets the entry in:
	// it takes once the offer is counted, which happens under the lock the
	// offer then waits on, so the take frees space during the wait.
	offered := q.Stats("t1").Offered
	go func() {
		err := wait.Within(t.Context(), 5*time.Second, time.Millisecond, func(context.Context) error {
			if q.Stats("t1").Offered == offered {
				return fmt.Errorf("offer of entry 4 not started")
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		q.Take("t1", 1)
	}()
	if !q.Offer(entry("t1", 4)) {
		t.Error("entry refused although the writer freed space within the wait")
	}

	// With the writer's appends failing, a full queue refuses at once.
	q.SetWriterHealthy("t1", false)
	began = time.Now()
	if q.Offer(entry("t1", 5)) {
		t.Fatal("full queue with a failing writer kept the entry")
	}
	if d := time.Since(began); d >= c.BackPressureWait {
		t.Errorf("refusal with a failing writer took %v", d)
	}
	if got := q.Stats("t1").Dropped[DropBackPressure]; got != 3 || overwriteTotal(t, q, "t1") != 3 {
		t.Errorf("back-pressure refusals counted %d, want 3", got)
	}

	c.BackPressureWait = time.Second
	if _, err := NewQueue(QueueOptions{Default: c}); err == nil {
		t.Errorf("a %v back-pressure wait was accepted (cap %v)", c.BackPressureWait, MaxBackPressureWait)
	}
}

func TestQueueMaxAge(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	c := cfg(100, PolicyOldest)
	c.MaxAge = 10 * time.Second
	q := newTestQueue(t, c, MutantNone, clock)
	for i := range 3 {
		q.Offer(entry("t1", i))
	}
	now = now.Add(5 * time.Second)
	q.Offer(entry("t1", 3))
	now = now.Add(6 * time.Second) // the first three are 11 s old
	if got := seqs(q.Take("t1", 10)); fmt.Sprint(got) != "[4]" {
		t.Errorf("took %v, want only the young entry", got)
	}
	if st := q.Stats("t1"); st.Dropped[DropMaxAge] != 3 || overwriteTotal(t, q, "t1") != 3 {
		t.Errorf("aged-out entries not counted: %+v", st)
	}
}

func TestQueueBadTenantCounted(t *testing.T) {
	q := newTestQueue(t, cfg(10, PolicyOldest), MutantNone, nil)
	for _, tenant := range []string{"", "a{b}"} {
		if q.Offer(entry(tenant, 0)) {
			t.Errorf("tenant %q was keyed", tenant)
		}
		if overwriteTotal(t, q, tenant) != 1 {
			t.Errorf("tenant %q: refusal not counted", tenant)
		}
	}
}

// The negative control's premise: the uncounted mutant loses entries the
// same way and says nothing.
func TestQueueUncountedMutantHidesLoss(t *testing.T) {
	q := newTestQueue(t, cfg(3, PolicyOldest), MutantUncountedDrop, nil)
	for i := range 5 {
		q.Offer(entry("t1", i))
	}
	if st := q.Stats("t1"); st.Depth != 3 || len(st.Dropped) != 0 || overwriteTotal(t, q, "t1") != 0 {
		t.Fatalf("mutant counted its loss: %+v", st)
	}
}

func TestQueueRequeueAndResume(t *testing.T) {
	q := newTestQueue(t, cfg(100, PolicyOldest), MutantNone, nil)
	for i := range 5 {
		q.Offer(entry("t1", i))
	}
	held := q.Take("t1", 2)
	q.Requeue("t1", held)
	if got := seqs(q.Take("t1", 10)); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("after requeue took %v", got)
	}
	for i := range 3 {
		q.Offer(entry("t1", i))
	}
	if n := len(q.DiscardThrough("t1", Offset{Gen: q.Generation(), Seq: 7})); n != 2 {
		t.Errorf("discarded %d, want seq 6 and 7", n)
	}
	if n := len(q.DiscardThrough("t1", Offset{Gen: "00000000000000000001", Seq: 99})); n != 0 {
		t.Errorf("an offset of another generation discarded %d entries", n)
	}
	if got := seqs(q.Take("t1", 10)); fmt.Sprint(got) != "[8]" {
		t.Errorf("took %v after resume", got)
	}
	if overwriteTotal(t, q, "t1") != 0 {
		t.Error("resumed entries were counted as lost")
	}
}

// Offered = kept + counted losses, and kept = taken + still queued, under
// concurrent offers and takes (run with -race).
func TestQueueLedgerUnderConcurrency(t *testing.T) {
	q := newTestQueue(t, cfg(50, PolicyOldest), MutantNone, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := len(q.Take("t1", 7))
			mu.Lock()
			taken += n
			mu.Unlock()
		}
	})
	var offerers sync.WaitGroup
	for w := range 4 {
		offerers.Go(func() {
			for i := range 5000 {
				q.Offer(entry("t1", w*10000+i))
			}
		})
	}
	offerers.Wait()
	close(stop)
	wg.Wait()
	st := q.Stats("t1")
	lost := int64(overwriteTotal(t, q, "t1"))
	if st.Offered != 20000 || st.Kept != st.Offered {
		t.Fatalf("oldest policy: kept %d of %d offered", st.Kept, st.Offered)
	}
	if int64(taken)+int64(st.Depth)+lost != st.Offered {
		t.Fatalf("taken %d + queued %d + lost %d != offered %d", taken, st.Depth, lost, st.Offered)
	}
}

func TestParseOffset(t *testing.T) {
	o := Offset{Gen: "00000001700000000000", Seq: 42}
	got, err := ParseOffset(o.String())
	if err != nil || got != o {
		t.Fatalf("round trip %v: %v %v", o, got, err)
	}
	for _, bad := range []string{"", "42", ":42", "g:x"} {
		if _, err := ParseOffset(bad); err == nil {
			t.Errorf("ParseOffset(%q) accepted", bad)
		}
	}
}

func TestKeysShareHashTag(t *testing.T) {
	k, err := KeysFor("acme")
	if err != nil {
		t.Fatal(err)
	}
	if k.Stream != "marconi:signals:{acme}" || !slot.Same(k.Stream, k.Offset) {
		t.Errorf("keys %+v: want the stream marconi:signals:{acme} and an offset key in its slot", k)
	}
	if _, err := KeysFor(""); err == nil {
		t.Error(`empty tenant keyed: "{}" hashes the whole key, so stream and offset would split slots`)
	}
}

func BenchmarkOffer(b *testing.B) {
	q, _ := NewQueue(QueueOptions{Default: cfg(1000, PolicyOldest)})
	e := entry("t1", 0)
	b.ReportAllocs()
	for b.Loop() {
		q.Offer(e)
	}
}

// TestQueueCloseCountsInFlight: what the queue still holds at a process
// exit is counted under reason "shutdown" (§6), and so is a late offer; the
// uncounted-shutdown mutant loses the same entries without a trace.
func TestQueueCloseCountsInFlight(t *testing.T) {
	for _, m := range []Mutant{MutantNone, MutantUncountedShutdown} {
		q := newTestQueue(t, cfg(100, PolicyOldest), m, nil)
		for i := range 7 {
			q.Offer(entry("t", i))
		}
		q.Take("t", 2) // the writer appended these
		if n := q.Close(); n != 5 {
			t.Fatalf("%q: Close dropped %d, want 5", m, n)
		}
		if q.Offer(entry("t", 99)) {
			t.Errorf("%q: offer after Close kept", m)
		}
		want := 6.0
		if m == MutantUncountedShutdown {
			want = 0
		}
		if got := overwriteTotal(t, q, "t"); got != want {
			t.Errorf("%q: overwrite counter %v, want %v", m, got, want)
		}
		if st := q.Stats("t"); st.Depth != 0 {
			t.Errorf("%q: depth %d after Close", m, st.Depth)
		}
	}
}

// TestQueueOldestEvictsNewestMutant: same count, same counter, the wrong
// entries — the loss-budget row's set check must tell them apart.
func TestQueueOldestEvictsNewestMutant(t *testing.T) {
	q := newTestQueue(t, cfg(3, PolicyOldest), MutantOldestEvictsNewest, nil)
	for i := range 6 {
		if !q.Offer(entry("t", i)) {
			t.Fatalf("offer %d refused", i)
		}
	}
	if got := overwriteTotal(t, q, "t"); got != 3 {
		t.Errorf("overwrite counter %v, want 3", got)
	}
	var kept []string
	for _, it := range q.Take("t", 10) {
		kept = append(kept, it.Entry.Envelope.SignalID)
	}
	if fmt.Sprint(kept) != "[t-0 t-1 t-5]" {
		t.Errorf("kept %v, want the oldest two and the newest: [t-0 t-1 t-5]", kept)
	}
}
