package marconi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// Client is the shim side of the HTTP API (the MCP shim calls FastAPI over
// HTTP, spec 002 §2.4): sender and controller calls.
type Client struct {
	// BaseURL is the mesh's http://host:port.
	BaseURL string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

// APIError is a non-200 answer.
type APIError struct {
	Status int
	ErrorReply
}

func (e *APIError) Error() string {
	return fmt.Sprintf("marconi api: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsUnknownSession reports the mesh refusing a session it does not hold.
func IsUnknownSession(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == CodeUnknownSession
}

// IsSessionExpired reports a heartbeat for a record that is gone.
func IsSessionExpired(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == CodeExpired
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &APIError{Status: resp.StatusCode}
		_ = json.Unmarshal(raw, &e.ErrorReply)
		return fmt.Errorf("%s %s: %w", method, path, e)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// Send is prism_signal.
func (c *Client) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	var res SendResult
	err := c.do(ctx, http.MethodPost, PathSignal, req, &res)
	return res, err
}

// Register registers (or re-registers) a session.
func (c *Client) Register(ctx context.Context, s Session) (Session, error) {
	var out Session
	err := c.do(ctx, http.MethodPost, PathSessions, s, &out)
	return out, err
}

// Heartbeat stamps a session's heartbeat.
func (c *Client) Heartbeat(ctx context.Context, tenant, project, sid string) (HeartbeatResult, error) {
	var out HeartbeatResult
	err := c.do(ctx, http.MethodPost, PathSessions+"/"+url.PathEscape(sid)+"/heartbeat", sessionRef{Tenant: tenant, Project: project}, &out)
	return out, err
}

// StampEngagement stamps a session's engagement (stamp_engagement).
func (c *Client) StampEngagement(ctx context.Context, tenant, project, sid string) (HeartbeatResult, error) {
	var out HeartbeatResult
	err := c.do(ctx, http.MethodPost, PathSessions+"/"+url.PathEscape(sid)+"/engagement", sessionRef{Tenant: tenant, Project: project}, &out)
	return out, err
}

// Deregister releases a session.
func (c *Client) Deregister(ctx context.Context, tenant, project, sid string) error {
	q := url.Values{"tenant_id": {tenant}, "project_id": {project}}
	return c.do(ctx, http.MethodDelete, PathSessions+"/"+url.PathEscape(sid)+"?"+q.Encode(), nil, nil)
}

// ClaimMaster moves a project's master flag to sid.
func (c *Client) ClaimMaster(ctx context.Context, tenant, project, sid string) error {
	return c.do(ctx, http.MethodPost, PathClaim, MasterRequest{Tenant: tenant, Project: project, To: sid}, nil)
}

// HandoffMaster moves the flag from `from` to `to`.
func (c *Client) HandoffMaster(ctx context.Context, tenant, project, from, to string) error {
	return c.do(ctx, http.MethodPost, PathHandoff, MasterRequest{Tenant: tenant, Project: project, From: from, To: to}, nil)
}

// Pending is prism_signals_pending: drains key's pending signals.
func (c *Client) Pending(ctx context.Context, key RouteKey) ([]audit.Envelope, error) {
	q := url.Values{"tenant_id": {key.Tenant}, "project_id": {key.Project}, "identity": {key.Identity}}
	var reply PendingReply
	if err := c.do(ctx, http.MethodGet, PathPending+"?"+q.Encode(), nil, &reply); err != nil {
		return nil, err
	}
	out := make([]audit.Envelope, len(reply.Signals))
	for i, raw := range reply.Signals {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("pending: decode: %w", err)
		}
	}
	return out, nil
}

// Ack sends final-delivery evidence over HTTP.
func (c *Client) Ack(ctx context.Context, signalID string, kind AckKind) error {
	return c.do(ctx, http.MethodPost, PathAck, AckRequest{SignalID: signalID, AckKind: kind}, nil)
}

// Delivery is one envelope a receiver shim got over its WebSocket.
type Delivery struct {
	Envelope audit.Envelope
	// SessionID is the receiving session.
	SessionID string
	At        time.Time
}

// Receiver is a receiver shim's WebSocket (spec 002 §2.2).
type Receiver struct {
	SessionID string
	conn      *websocket.Conn
	done      chan struct{}
	errMu     sync.Mutex
	err       error
	closeOnce sync.Once
}

// DialReceiver opens session sid's socket and calls deliver for every
// envelope, in order, from one goroutine. A session the mesh does not hold
// fails with an APIError of CodeUnknownSession.
func DialReceiver(ctx context.Context, baseURL, sid string, deliver func(Delivery)) (*Receiver, error) {
	u := strings.Replace(baseURL, "http", "ws", 1) + PathWebSocket + "?" + url.Values{"session_id": {sid}}.Encode()
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			e := &APIError{Status: resp.StatusCode}
			if resp.Body != nil {
				raw, _ := io.ReadAll(resp.Body)
				_ = json.Unmarshal(raw, &e.ErrorReply)
			}
			return nil, fmt.Errorf("dial receiver %s: %w", sid, e)
		}
		return nil, fmt.Errorf("dial receiver %s: %w", sid, err)
	}
	conn.SetReadLimit(maxBody)
	r := &Receiver{SessionID: sid, conn: conn, done: make(chan struct{})}
	go r.read(deliver)
	return r, nil
}

func (r *Receiver) read(deliver func(Delivery)) {
	defer close(r.done)
	for {
		_, data, err := r.conn.Read(context.Background())
		if err != nil {
			r.errMu.Lock()
			r.err = err
			r.errMu.Unlock()
			return
		}
		var d Delivery
		if err := json.Unmarshal(data, &d.Envelope); err != nil {
			continue
		}
		d.SessionID, d.At = r.SessionID, time.Now()
		deliver(d)
	}
}

// Ack sends final-delivery evidence over the socket.
func (r *Receiver) Ack(ctx context.Context, signalID string, kind AckKind) error {
	b, _ := json.Marshal(AckRequest{Type: "ack", SignalID: signalID, AckKind: kind})
	return r.conn.Write(ctx, websocket.MessageText, b)
}

// Done is closed when the socket ended (the mesh closed it, or Close).
func (r *Receiver) Done() <-chan struct{} { return r.done }

// Err is why the socket ended, once Done is closed.
func (r *Receiver) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

// Close closes the socket with a normal closure and waits for the reader;
// a socket the mesh already ended closes without error.
func (r *Receiver) Close() error {
	var err error
	r.closeOnce.Do(func() {
		select {
		case <-r.done:
			_ = r.conn.CloseNow()
			return
		default:
		}
		err = r.conn.Close(websocket.StatusNormalClosure, "")
		<-r.done
		select {
		case <-r.done:
			if err != nil && r.Err() != nil { // the mesh closed it first
				err = nil
			}
		default:
		}
	})
	return err
}
