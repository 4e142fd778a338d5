package workload

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
)

// AuditCapProbe fills one audit queue past its cap with entries of one
// fixed size and no writer draining it, so the cap is met exactly: the
// queue is configured with max_bytes = BytesCap entries of that size
// (spec 002 §3.6; the loss-budget ledger cannot see a cap off by one,
// since every loss is still counted).
type AuditCapProbe struct {
	Name   string
	Policy audit.Policy // PolicyOldest or PolicyRejectNew
	// MaxEntries is max_entries; BytesCap how many entries max_bytes holds.
	MaxEntries, BytesCap int
	// Offers is how many entries are offered (more than either cap).
	Offers int
	// Mutant selects a known-bad queue (a negative control).
	Mutant audit.Mutant
}

// Run offers the entries and records each answer and the end state.
func (p AuditCapProbe) Run() (judge.AuditCapHistory, error) {
	const tenant = "caps"
	entry := func(i int) audit.Entry {
		return audit.Entry{Envelope: audit.Envelope{
			SignalID: fmt.Sprintf("%s-%08d", p.Name, i), TenantID: tenant, ProjectID: "proj", Sender: "agent", Recipient: "peer",
			Kind: "ping", Payload: []byte(strings.Repeat("x", 200)),
		}, Outcome: audit.OutcomePushed}
	}
	size := audit.EntrySize(entry(0))
	cfg := audit.DefaultQueueConfig()
	cfg.Policy, cfg.MaxEntries, cfg.MaxBytes = p.Policy, p.MaxEntries, int64(p.BytesCap)*size
	q, err := audit.NewQueue(audit.QueueOptions{Default: cfg, Mutant: p.Mutant, Now: time.Now})
	if err != nil {
		return judge.AuditCapHistory{}, fmt.Errorf("audit cap probe %s: %w", p.Name, err)
	}
	defer q.Close()
	h := judge.AuditCapHistory{Name: p.Name, Policy: string(p.Policy), MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes, EntrySize: size}
	for i := range p.Offers {
		e := entry(i)
		if s := audit.EntrySize(e); s != size {
			return h, fmt.Errorf("audit cap probe %s: entry %d is %d B, not %d", p.Name, i, s, size)
		}
		h.Kept = append(h.Kept, q.Offer(e))
	}
	st := q.Stats(tenant)
	h.Depth, h.Bytes = st.Depth, st.Bytes
	for _, n := range st.Dropped {
		h.Dropped += n
	}
	return h, nil
}
