package marconi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/coder/websocket"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// serveWS is the receiver shim's socket (spec 002 §2.2: "the receiver's
// WebSocket handler registers itself with Marconi's routing table at
// connect time"). on_ws_connect attaches a per-session queue and drains
// the session's pending signals into it; this handler writes the queue to
// the socket, one JSON envelope per text message, and reads acks. When
// the socket ends, on_ws_disconnect detaches the queue and what it had not
// written goes back to the pending index.
//
// A session the registration table does not hold is refused with 404
// before the upgrade (the shim must register first).
func (m *Mesh) serveWS(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("session_id")
	h := newHandle(sid, m.opts.QueueSize)
	if err := m.inv.OnWSConnect(sid, h); err != nil {
		writeError(w, err)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		_ = m.inv.OnWSDisconnect(sid, h)
		return
	}
	// The connection is hijacked: its lifetime is the socket's, not the
	// request's.
	ctx, cancel := context.WithCancel(context.Background())
	if m.opts.Mutant == MutantWSSubscribe {
		// The legacy forwarding loop's subscription (§2.2), kept while
		// attached: what Stage 5 removes.
		ch := LegacyChannel(m.store.prefix, sid)
		if err := m.opts.LegacySubscriber.Subscribe(ctx, ch); err == nil {
			defer func() { _ = m.opts.LegacySubscriber.Unsubscribe(context.Background(), ch) }()
		}
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var ack AckRequest
			if typ == websocket.MessageText && json.Unmarshal(data, &ack) == nil && ack.Type == "ack" {
				_ = m.Ack(ack.SignalID, ack.AckKind)
			}
		}
	}()

	var unwritten []*audit.Envelope
	closedByMesh := false
write:
	for {
		select {
		case e := <-h.q:
			b, err := json.Marshal(e)
			if err == nil {
				err = c.Write(ctx, websocket.MessageText, b)
			}
			if err != nil {
				unwritten = append(unwritten, e)
				break write
			}
		case <-h.done:
			closedByMesh = true
			break write
		case <-ctx.Done():
			break write
		}
	}
	_ = m.inv.OnWSDisconnect(sid, h, unwritten...)
	if closedByMesh {
		// Deregistered, replaced by a newer socket, or the instance is
		// closing: tell the shim.
		_ = c.Close(websocket.StatusGoingAway, "detached")
	} else {
		_ = c.CloseNow()
	}
	cancel()
	<-readDone
}
