package marconi

import (
	"sync"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// wsHandle is the per-session queue a receiver's WebSocket handler reads
// (spec 002 §3.3: "a per-session asyncio.Queue that the WebSocket handler
// reads from"). A push is a non-blocking channel send under a mutex, so
// the hot path never waits on a socket.
type wsHandle struct {
	sessionID string
	// owner is the identity route of the session it attached to (set by
	// OnWSConnect); only MutantPutBackToIdentity queues under it.
	owner RouteKey

	mu     sync.Mutex
	q      chan *audit.Envelope
	closed bool
	done   chan struct{}
}

func newHandle(sessionID string, size int) *wsHandle {
	return &wsHandle{sessionID: sessionID, q: make(chan *audit.Envelope, size), done: make(chan struct{})}
}

// pushResult is what a push did.
type pushResult int

const (
	pushed     pushResult = iota
	pushClosed            // the handle was detached: the caller queues offline
	pushFull              // the receiver is too slow: dropped, counted
)

func (h *wsHandle) push(e *audit.Envelope) pushResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return pushClosed
	}
	select {
	case h.q <- e:
		return pushed
	default:
		return pushFull
	}
}

// close detaches the handle and returns what its reader had not taken yet,
// in order, so the caller can queue it offline instead of losing it.
func (h *wsHandle) close() []*audit.Envelope {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	close(h.done)
	var left []*audit.Envelope
	for {
		select {
		case e := <-h.q:
			left = append(left, e)
		default:
			return left
		}
	}
}
