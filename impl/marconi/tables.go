package marconi

import (
	"sort"
	"sync"
)

// registration is one registration table entry (spec 002 §3.2). The
// routing table points at the same value, so a heartbeat's freshness
// update and a WS attach are one field write seen by both (§5: heartbeat
// "does not invalidate the entire entry").
type registration struct {
	s      Session
	master bool
	handle *wsHandle
}

// tables are Marconi's routing and registration tables (§3.1, §3.2):
// per-process, hash-keyed, guarded by one lock so an invalidation updates
// both at once. The hot path takes the read lock only.
type tables struct {
	mu sync.RWMutex
	// regs is the registration table: session id → registration.
	regs map[string]*registration
	// routes is the routing table: (tenant, project) → identity → the
	// live session the identity resolves to; MasterIdentity resolves to
	// the project's master.
	routes map[projectKey]map[string]*registration
	// sessions lists each project's registrations, to rebuild its routes.
	sessions map[projectKey]map[string]*registration
	// masters is each project's master session id (the master flag).
	masters map[projectKey]string
}

func newTables() *tables {
	return &tables{
		regs:     map[string]*registration{},
		routes:   map[projectKey]map[string]*registration{},
		sessions: map[projectKey]map[string]*registration{},
		masters:  map[projectKey]string{},
	}
}

// route resolves key; the caller holds mu (read or write).
func (t *tables) route(key RouteKey) *registration {
	return t.routes[projectKey{key.Tenant, key.Project}][key.Identity]
}

// put adds or replaces a registration and makes it its identity's route
// (the most recent registration of an identity wins); the caller holds mu.
// A re-register of a known session keeps its WS handle.
func (t *tables) put(s Session) *registration {
	pk := projectKey{s.Tenant, s.Project}
	reg := t.regs[s.SessionID]
	if reg != nil && (reg.s.Tenant != s.Tenant || reg.s.Project != s.Project || reg.s.Identity != s.Identity) {
		// Same session id, other routing key: drop the old entry first.
		t.remove(reg.s.SessionID)
		reg = &registration{s: s, handle: reg.handle}
	}
	if reg == nil {
		reg = &registration{s: s}
	}
	reg.s = s
	reg.master = t.masters[pk] == s.SessionID
	t.regs[s.SessionID] = reg
	if t.sessions[pk] == nil {
		t.sessions[pk] = map[string]*registration{}
	}
	t.sessions[pk][s.SessionID] = reg
	if t.routes[pk] == nil {
		t.routes[pk] = map[string]*registration{}
	}
	t.routes[pk][s.Identity] = reg
	if reg.master {
		t.routes[pk][MasterIdentity] = reg
	}
	return reg
}

// remove drops a session from the registration table and from its
// project's session list, and returns it; routes are left to
// rebuildProject. The caller holds mu.
func (t *tables) remove(sessionID string) *registration {
	reg := t.regs[sessionID]
	if reg == nil {
		return nil
	}
	delete(t.regs, sessionID)
	pk := projectKey{reg.s.Tenant, reg.s.Project}
	delete(t.sessions[pk], sessionID)
	if len(t.sessions[pk]) == 0 {
		delete(t.sessions, pk)
	}
	return reg
}

// rebuildProject recomputes a project's routes from its registrations and
// master flag: routing.invalidate_project (§5) without a SessionStore
// read-through — the registration table is the in-process source of truth,
// so nothing on the hot path ever misses into Redis. For each identity the
// most recent registration wins. The caller holds mu.
func (t *tables) rebuildProject(pk projectKey) {
	regs := make([]*registration, 0, len(t.sessions[pk]))
	for _, r := range t.sessions[pk] {
		regs = append(regs, r)
	}
	if len(regs) == 0 {
		delete(t.routes, pk)
		return
	}
	sort.Slice(regs, func(i, j int) bool {
		a, b := regs[i].s, regs[j].s
		if !a.RegisteredAt.Equal(b.RegisteredAt) {
			return a.RegisteredAt.Before(b.RegisteredAt)
		}
		return a.SessionID < b.SessionID
	})
	routes := make(map[string]*registration, len(regs)+1)
	master := t.masters[pk]
	for _, r := range regs { // later (newer) registrations overwrite
		routes[r.s.Identity] = r
		r.master = r.s.SessionID == master
		if r.master {
			routes[MasterIdentity] = r
		}
	}
	t.routes[pk] = routes
}

// tenantRoutes counts a tenant's routing entries; the caller holds mu.
func (t *tables) tenantRoutes(tenant string) int {
	n := 0
	for pk, r := range t.routes {
		if pk.tenant == tenant {
			n += len(r)
		}
	}
	return n
}

// TableView is a copy of the routing and registration tables, for tests
// and checkers: what the mesh would route each key to right now.
type TableView struct {
	// Routes maps each routing key to the session id it resolves to.
	Routes map[RouteKey]string `json:"routes"`
	// Registrations is the registration table.
	Registrations map[string]LiveSession `json:"registrations"`
	// Masters maps "tenant/project" to the master session id.
	Masters map[string]string `json:"masters"`
}

func (t *tables) view() TableView {
	t.mu.RLock()
	defer t.mu.RUnlock()
	v := TableView{Routes: map[RouteKey]string{}, Registrations: map[string]LiveSession{}, Masters: map[string]string{}}
	for pk, ids := range t.routes {
		for id, r := range ids {
			v.Routes[RouteKey{Tenant: pk.tenant, Project: pk.project, Identity: id}] = r.s.SessionID
		}
	}
	for id, r := range t.regs {
		v.Registrations[id] = r.live()
	}
	for pk, id := range t.masters {
		v.Masters[pk.tenant+"/"+pk.project] = id
	}
	return v
}

func (r *registration) live() LiveSession {
	return LiveSession{Session: r.s, Master: r.master, Attached: r.handle != nil}
}
