package marconi

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RouteKey is the routing table's key (spec 002 §3.1): a recipient
// identity within its tenant and project.
type RouteKey struct {
	Tenant   string `json:"tenant_id"`
	Project  string `json:"project_id"`
	Identity string `json:"identity"`
}

func (k RouteKey) String() string { return k.Tenant + "/" + k.Project + "/" + k.Identity }

// MasterIdentity is the routing alias of a project's master session: a
// signal to (tenant, project, "@master") goes to whichever session holds
// the master flag (§5 handoff_master / claim_master).
const MasterIdentity = "@master"

// projectKey names a project within its tenant.
type projectKey struct{ tenant, project string }

// Session is a session record as the SessionStore keeps it and as
// register returns it (§3.2 Registration without the WS handle).
type Session struct {
	SessionID     string    `json:"session_id"`
	Tenant        string    `json:"tenant_id"`
	Project       string    `json:"project_id"`
	Identity      string    `json:"identity"`
	Surface       string    `json:"surface,omitempty"`
	MachineID     string    `json:"machine_id,omitempty"`
	RegisteredAt  time.Time `json:"registered_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
}

// Route is the routing key the session answers to.
func (s Session) Route() RouteKey {
	return RouteKey{Tenant: s.Tenant, Project: s.Project, Identity: s.Identity}
}

// ErrBadSession wraps a session the mesh refuses: missing ids, or ids that
// would break the SessionStore's key layout (a tenant id is a hash tag).
var ErrBadSession = errors.New("bad session")

// validate checks the ids the key layout depends on: the tenant is the
// hash tag of every session key, so it may not contain braces; ids may not
// contain ':' so a key parses back unambiguously.
func (s Session) validate() error {
	for name, v := range map[string]string{"session_id": s.SessionID, "tenant_id": s.Tenant, "project_id": s.Project, "identity": s.Identity} {
		if v == "" {
			return fmt.Errorf("%w: %s is empty", ErrBadSession, name)
		}
		if strings.ContainsAny(v, "{}") || (name != "identity" && strings.Contains(v, ":")) {
			return fmt.Errorf("%w: %s %q contains '{', '}' or ':'", ErrBadSession, name, v)
		}
	}
	if s.Identity == MasterIdentity {
		return fmt.Errorf("%w: identity %q is the master alias", ErrBadSession, s.Identity)
	}
	return nil
}

// LiveSession is a routing table value (§3.1) as a snapshot: the live
// session an identity resolves to.
type LiveSession struct {
	Session
	// Master: this session holds its project's master flag.
	Master bool `json:"master"`
	// Attached: a receiver WebSocket is attached (§3.3).
	Attached bool `json:"attached"`
}
