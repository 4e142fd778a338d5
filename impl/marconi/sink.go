package marconi

import (
	"sync"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// MemorySink is a plain in-memory audit.Sink that keeps every entry: the
// stand-in when no audit queue is wired (unit tests, benchmarks). Offer is
// an append under a mutex, as the Sink contract requires.
type MemorySink struct {
	mu      sync.Mutex
	entries []audit.Entry
}

// NewMemorySink returns an empty sink.
func NewMemorySink() *MemorySink { return &MemorySink{} }

// Offer keeps e.
func (s *MemorySink) Offer(e audit.Entry) bool {
	s.mu.Lock()
	s.entries = append(s.entries, e)
	s.mu.Unlock()
	return true
}

// Len is the number of entries kept.
func (s *MemorySink) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Entries returns a copy of the entries, in Offer order.
func (s *MemorySink) Entries() []audit.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Entry(nil), s.entries...)
}
