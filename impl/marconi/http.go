package marconi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// API paths. The MCP verbs stay prism_signal_* (spec 002 §10); these are
// the FastAPI-side routes the shims call (§2.4).
const (
	PathSignal    = "/v1/signal"   // POST SendRequest → 200 SendResult (prism_signal)
	PathSessions  = "/v1/sessions" // POST Session → register; DELETE /{id}?tenant_id&project_id → deregister
	PathClaim     = "/v1/masters/claim"
	PathHandoff   = "/v1/masters/handoff"
	PathPending   = "/v1/pending" // GET ?tenant_id&project_id&identity (prism_signals_pending)
	PathAck       = "/v1/ack"
	PathWebSocket = "/v1/ws" // GET ?session_id: the receiver shim's socket
	PathMetrics   = "/metrics"
)

// Handler is the HTTP and WebSocket API.
func (m *Mesh) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathSignal, m.serveSend)
	mux.HandleFunc("POST "+PathSessions, m.serveRegister)
	mux.HandleFunc("POST "+PathSessions+"/{id}/heartbeat", m.serveHeartbeat)
	mux.HandleFunc("POST "+PathSessions+"/{id}/engagement", m.serveEngagement)
	mux.HandleFunc("DELETE "+PathSessions+"/{id}", m.serveDeregister)
	mux.HandleFunc("POST "+PathClaim, m.serveClaim)
	mux.HandleFunc("POST "+PathHandoff, m.serveHandoff)
	mux.HandleFunc("GET "+PathPending, m.servePending)
	mux.HandleFunc("POST "+PathAck, m.serveAck)
	mux.HandleFunc("GET "+PathWebSocket, m.serveWS)
	mux.Handle("GET "+PathMetrics, promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	return mux
}

// serveSend is the hot path's HTTP edge: decode, Send, 200. The request
// context is marked WithHotPath, so any I/O a send does before its 200 is
// attributed to it by the counting seams.
func (m *Mesh) serveSend(w http.ResponseWriter, r *http.Request) {
	var req SendRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := m.Send(WithHotPath(r.Context()), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (m *Mesh) serveRegister(w http.ResponseWriter, r *http.Request) {
	var s Session
	if !decode(w, r, &s) {
		return
	}
	out, err := m.Register(r.Context(), s)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// sessionRef names a session in control requests.
type sessionRef struct {
	Tenant  string `json:"tenant_id"`
	Project string `json:"project_id"`
}

func (m *Mesh) serveHeartbeat(w http.ResponseWriter, r *http.Request) {
	var ref sessionRef
	if !decode(w, r, &ref) {
		return
	}
	res, err := m.Heartbeat(r.Context(), ref.Tenant, ref.Project, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (m *Mesh) serveEngagement(w http.ResponseWriter, r *http.Request) {
	var ref sessionRef
	if !decode(w, r, &ref) {
		return
	}
	res, err := m.StampEngagement(r.Context(), ref.Tenant, ref.Project, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (m *Mesh) serveDeregister(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := m.Deregister(r.Context(), q.Get("tenant_id"), q.Get("project_id"), r.PathValue("id")); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// MasterRequest claims or hands off a project's master flag.
type MasterRequest struct {
	Tenant  string `json:"tenant_id"`
	Project string `json:"project_id"`
	// From is the current master (handoff only).
	From string `json:"from,omitempty"`
	// To is the new master.
	To string `json:"to"`
}

func (m *Mesh) serveClaim(w http.ResponseWriter, r *http.Request) {
	var req MasterRequest
	if !decode(w, r, &req) {
		return
	}
	if err := m.ClaimMaster(r.Context(), req.Tenant, req.Project, req.To); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (m *Mesh) serveHandoff(w http.ResponseWriter, r *http.Request) {
	var req MasterRequest
	if !decode(w, r, &req) {
		return
	}
	if err := m.HandoffMaster(r.Context(), req.Tenant, req.Project, req.From, req.To); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// PendingReply is prism_signals_pending's answer.
type PendingReply struct {
	Signals []json.RawMessage `json:"signals"`
}

func (m *Mesh) servePending(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key := RouteKey{Tenant: q.Get("tenant_id"), Project: q.Get("project_id"), Identity: q.Get("identity")}
	if key.Tenant == "" || key.Project == "" || key.Identity == "" {
		writeError(w, ErrBadRequest)
		return
	}
	envs := m.Pending(key)
	out := PendingReply{Signals: make([]json.RawMessage, 0, len(envs))}
	for _, e := range envs {
		b, err := json.Marshal(e)
		if err != nil {
			writeError(w, err)
			return
		}
		out.Signals = append(out.Signals, b)
	}
	writeJSON(w, http.StatusOK, out)
}

// AckRequest carries a receiver's final-delivery evidence (also accepted
// as a WebSocket text message with Type "ack").
type AckRequest struct {
	Type     string  `json:"type,omitempty"`
	SignalID string  `json:"signal_id"`
	AckKind  AckKind `json:"ack_kind"`
}

func (m *Mesh) serveAck(w http.ResponseWriter, r *http.Request) {
	var req AckRequest
	if !decode(w, r, &req) {
		return
	}
	if err := m.Ack(req.SignalID, req.AckKind); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// ErrorReply is every non-200 answer's body.
type ErrorReply struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

// Error codes of ErrorReply, one per status the API answers.
const (
	CodeBadRequest     = "bad_request"     // 400
	CodeUnknownSession = "unknown_session" // 404
	CodeUnknownSignal  = "unknown_signal"  // 404
	CodeNotMaster      = "not_master"      // 409
	CodeExpired        = "session_expired" // 410
	CodeInternal       = "internal"        // 500: a SessionStore (or legacy path) call failed
)

func statusOf(err error) (int, string) {
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrBadSession):
		return http.StatusBadRequest, CodeBadRequest
	case errors.Is(err, ErrUnknownSession):
		return http.StatusNotFound, CodeUnknownSession
	case errors.Is(err, ErrUnknownSignal):
		return http.StatusNotFound, CodeUnknownSignal
	case errors.Is(err, ErrNotMaster):
		return http.StatusConflict, CodeNotMaster
	case errors.Is(err, ErrSessionExpired):
		return http.StatusGone, CodeExpired
	}
	return http.StatusInternalServerError, CodeInternal
}

func writeError(w http.ResponseWriter, err error) {
	status, code := statusOf(err)
	writeJSON(w, status, ErrorReply{Code: code, Message: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxBody bounds a request body.
const maxBody = 1 << 20

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, ErrorReply{Code: CodeBadRequest, Message: "decode body: " + err.Error()})
		return false
	}
	return true
}
