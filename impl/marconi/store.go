package marconi

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

//go:embed lua/*.lua
var luaFS embed.FS

func mustScript(name string) *client.Script {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("marconi: embedded script %s: %v", name, err))
	}
	return client.NewScript("marconi/"+name, string(src))
}

// DefaultPrefix is the SessionStore's key prefix.
const DefaultPrefix = "marconi"

// DefaultSessionTTL is a session record's lifetime without a heartbeat.
const DefaultSessionTTL = 45 * time.Second

// SessionStore keeps session records in Redis: the cross-restart
// durability anchor for active sessions (spec 002 §6). It is written by
// register / heartbeat / deregister / the master flip — never by a send —
// and read once, by the warm-up.
//
// Key layout (slot rules, spec 000 §Axioms A2): every key of a tenant's
// sessions carries the tenant as its hash tag, so the two-key scripts are
// single-slot on a cluster and the warm-up's MGET per tenant is one slot.
//
//	<prefix>:sess:{<tenant>}:<session_id>       record (JSON), PX ttl
//	<prefix>:sessidx:{<tenant>}                 ZSET session id → expiry (unix ms)
//	<prefix>:master:{<tenant>}:<project>        master session id
//	<prefix>:ident:{<tenant>}:<project>:<identity>  ZSET session id → registered_at (unix ms)
//	<prefix>:tenants                            SET of tenants (its own slot)
//
// Discovery is by index, never SCAN: a keyless SCAN on a cluster client
// reaches one node (docs/FINDINGS.md, registry row).
type SessionStore struct {
	pool   client.Pool
	prefix string
	ttl    time.Duration
	now    func() time.Time

	register, heartbeat, release, master *client.Script

	// releaseKeepsIndex is MutantReleaseKeepsIndex (a negative control).
	releaseKeepsIndex bool
}

// StoreOptions configures a SessionStore.
type StoreOptions struct {
	// Prefix namespaces the keys; zero means DefaultPrefix. Scenarios side
	// by side use their own.
	Prefix string
	// TTL is a record's lifetime without a heartbeat; zero means
	// DefaultSessionTTL.
	TTL time.Duration
	// Now is the wall clock of index scores; nil means time.Now.
	Now func() time.Time
}

// NewSessionStore returns a store over pool.
func NewSessionStore(pool client.Pool, o StoreOptions) *SessionStore {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.TTL <= 0 {
		o.TTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &SessionStore{pool: pool, prefix: o.Prefix, ttl: o.TTL, now: o.Now,
		register: mustScript("register"), heartbeat: mustScript("heartbeat"),
		release: mustScript("release"), master: mustScript("master")}
}

// TTL is a record's lifetime without a heartbeat.
func (s *SessionStore) TTL() time.Duration { return s.ttl }

// RecordKey is session sid's record key.
func (s *SessionStore) RecordKey(tenant, sid string) string {
	return s.prefix + ":sess:{" + tenant + "}:" + sid
}

// IndexKey is tenant's session index key (same slot as its records).
func (s *SessionStore) IndexKey(tenant string) string { return s.prefix + ":sessidx:{" + tenant + "}" }

// MasterKey is a project's master key (same slot as its tenant's records).
func (s *SessionStore) MasterKey(tenant, project string) string {
	return s.prefix + ":master:{" + tenant + "}:" + project
}

// IdentityKey is an identity's session index (same slot as its tenant's
// records): what the Stage 1 fallback routes by when
// MARCONI_ROUTING_TABLE_READS is off (spec 002 §8 fine-grain flags).
func (s *SessionStore) IdentityKey(tenant, project, identity string) string {
	return s.prefix + ":ident:{" + tenant + "}:" + project + ":" + identity
}

// TenantsKey is the set of tenants with sessions: the warm-up's entry
// point.
func (s *SessionStore) TenantsKey() string { return s.prefix + ":tenants" }

// ParseRecordKey returns the tenant and session id of a record key of this
// store (what an expired-key notification names).
func (s *SessionStore) ParseRecordKey(key string) (tenant, sid string, ok bool) {
	rest, ok := strings.CutPrefix(key, s.prefix+":sess:{")
	if !ok {
		return "", "", false
	}
	tenant, sid, ok = strings.Cut(rest, "}:")
	return tenant, sid, ok && tenant != "" && sid != ""
}

// record is the stored JSON; LastHeartbeat lives in the index score.
type record struct {
	SessionID    string `json:"session_id"`
	Tenant       string `json:"tenant_id"`
	Project      string `json:"project_id"`
	Identity     string `json:"identity"`
	Surface      string `json:"surface,omitempty"`
	MachineID    string `json:"machine_id,omitempty"`
	RegisteredMs int64  `json:"registered_at_ms"`
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// Register writes sess (SessionStore.register): the tenant joins the
// tenants set first, so a warm-up never misses a tenant whose record
// exists.
func (s *SessionStore) Register(ctx context.Context, sess Session) error {
	if _, err := s.pool.Do(ctx, client.NewCmd("SADD", []string{s.TenantsKey()}, sess.Tenant)); err != nil {
		return fmt.Errorf("register %s: add tenant: %w", sess.SessionID, err)
	}
	rec, err := json.Marshal(record{SessionID: sess.SessionID, Tenant: sess.Tenant, Project: sess.Project, Identity: sess.Identity,
		Surface: sess.Surface, MachineID: sess.MachineID, RegisteredMs: sess.RegisteredAt.UnixMilli()})
	if err != nil {
		return fmt.Errorf("register %s: encode: %w", sess.SessionID, err)
	}
	keys := []string{s.RecordKey(sess.Tenant, sess.SessionID), s.IndexKey(sess.Tenant), s.IdentityKey(sess.Tenant, sess.Project, sess.Identity)}
	expiry := sess.LastHeartbeat.Add(s.ttl)
	//slotgate:same-slot RecordKey, IndexKey and IdentityKey all carry {tenant} as their hash tag
	if _, _, err := client.RunScript(ctx, s.pool, s.register, keys, string(rec), strconv.FormatInt(s.ttl.Milliseconds(), 10), ms(expiry), sess.SessionID, ms(sess.RegisteredAt)); err != nil {
		return fmt.Errorf("register %s: %w", sess.SessionID, err)
	}
	return nil
}

// ErrSessionExpired is returned by Heartbeat for a session whose record is
// gone (expired or released): the shim must register again.
var ErrSessionExpired = errors.New("session expired")

// Heartbeat extends sid's record (stamp_heartbeat) at `at`.
func (s *SessionStore) Heartbeat(ctx context.Context, tenant, sid string, at time.Time) error {
	keys := []string{s.RecordKey(tenant, sid), s.IndexKey(tenant)}
	//slotgate:same-slot RecordKey and IndexKey both carry {tenant} as their hash tag
	reply, _, err := client.RunScript(ctx, s.pool, s.heartbeat, keys, strconv.FormatInt(s.ttl.Milliseconds(), 10), ms(at.Add(s.ttl)), sid)
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w", sid, err)
	}
	if n, _ := client.AsInt64(reply); n == 0 {
		return fmt.Errorf("heartbeat %s: %w", sid, ErrSessionExpired)
	}
	return nil
}

// Release deletes sid's record and index entry (SessionStore.release); it
// reports whether the record still existed.
func (s *SessionStore) Release(ctx context.Context, tenant, sid string) (bool, error) {
	if s.releaseKeepsIndex {
		reply, err := s.pool.Do(ctx, client.NewCmd("DEL", []string{s.RecordKey(tenant, sid)}))
		if err != nil {
			return false, fmt.Errorf("release %s: %w", sid, err)
		}
		n, _ := client.AsInt64(reply)
		return n > 0, nil
	}
	keys := []string{s.RecordKey(tenant, sid), s.IndexKey(tenant)}
	//slotgate:same-slot RecordKey and IndexKey both carry {tenant} as their hash tag
	reply, _, err := client.RunScript(ctx, s.pool, s.release, keys, sid)
	if err != nil {
		return false, fmt.Errorf("release %s: %w", sid, err)
	}
	n, _ := client.AsInt64(reply)
	return n > 0, nil
}

// Unroute drops sid from its identity's session index (after a release or
// a confirmed expiry). The fallback read skips members whose record is
// gone, so this is hygiene, never correctness.
func (s *SessionStore) Unroute(ctx context.Context, tenant, project, identity, sid string) error {
	if _, err := s.pool.Do(ctx, client.NewCmd("ZREM", []string{s.IdentityKey(tenant, project, identity)}, sid)); err != nil {
		return fmt.Errorf("unroute %s: %w", sid, err)
	}
	return nil
}

// routeFanIn bounds how many of an identity's newest registrations the
// fallback read considers (one MGET).
const routeFanIn = 32

// Route is the Stage 1 SessionStore-read fallback of routing (spec 002 §8:
// MARCONI_ROUTING_TABLE_READS off reads "SessionStore fallback"): the
// session key resolves to in Redis right now — the newest registration of
// the identity whose record still exists, or the holder of the master
// flag for MasterIdentity (if its record exists); "" when none. Two
// reads, one slot. It is I/O on the send path by design: what Stage 1
// had, and what the table-read flags remove.
func (s *SessionStore) Route(ctx context.Context, key RouteKey) (string, error) {
	var candidates []string
	if key.Identity == MasterIdentity {
		reply, err := s.pool.Do(ctx, client.NewCmd("GET", []string{s.MasterKey(key.Tenant, key.Project)}))
		if err != nil {
			return "", fmt.Errorf("route %s: master: %w", key, err)
		}
		if sid, _ := client.AsString(reply); !client.IsNil(reply) && sid != "" {
			candidates = []string{sid}
		}
	} else {
		reply, err := s.pool.Do(ctx, client.NewCmd("ZREVRANGE", []string{s.IdentityKey(key.Tenant, key.Project, key.Identity)}, "0", strconv.Itoa(routeFanIn-1)))
		if err != nil {
			return "", fmt.Errorf("route %s: identity index: %w", key, err)
		}
		if candidates, _, err = client.AsStrings(reply); err != nil {
			return "", fmt.Errorf("route %s: identity index: %w", key, err)
		}
	}
	if len(candidates) == 0 {
		return "", nil
	}
	keys := make([]string, len(candidates))
	for i, sid := range candidates {
		keys[i] = s.RecordKey(key.Tenant, sid)
	}
	//slotgate:same-slot every RecordKey of one tenant carries the tenant's hash tag {tenant}
	reply, err := s.pool.Do(ctx, client.NewCmd("MGET", keys))
	if err != nil {
		return "", fmt.Errorf("route %s: records: %w", key, err)
	}
	vals, isNil, err := client.AsStrings(reply)
	if err != nil {
		return "", fmt.Errorf("route %s: records: %w", key, err)
	}
	for i := range vals {
		if isNil[i] {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(vals[i]), &r); err != nil {
			return "", fmt.Errorf("route %s: decode %s: %w", key, keys[i], err)
		}
		if r.Project == key.Project && (key.Identity == MasterIdentity || r.Identity == key.Identity) {
			return candidates[i], nil
		}
	}
	return "", nil
}

// Live is the Stage 1 SessionStore-read fallback of the registration
// table (MARCONI_REGISTRATION_TABLE_READS off): whether sid's record
// exists in Redis right now.
func (s *SessionStore) Live(ctx context.Context, tenant, sid string) (bool, error) {
	reply, err := s.pool.Do(ctx, client.NewCmd("EXISTS", []string{s.RecordKey(tenant, sid)}))
	if err != nil {
		return false, fmt.Errorf("live %s: %w", sid, err)
	}
	n, err := client.AsInt64(reply)
	if err != nil {
		return false, fmt.Errorf("live %s: %w", sid, err)
	}
	return n > 0, nil
}

// ErrNotMaster is returned by SetMaster when the expected master no longer
// holds the flag.
var ErrNotMaster = errors.New("expected master does not hold the flag")

// SetMaster flips the project's master flag to sid; with from non-empty
// only if from holds it (handoff), else unconditionally (claim).
func (s *SessionStore) SetMaster(ctx context.Context, tenant, project, from, sid string) error {
	reply, _, err := client.RunScript(ctx, s.pool, s.master, []string{s.MasterKey(tenant, project)}, from, sid)
	if err != nil {
		return fmt.Errorf("set master of %s/%s: %w", tenant, project, err)
	}
	if n, _ := client.AsInt64(reply); n == 0 {
		return fmt.Errorf("set master of %s/%s from %s: %w", tenant, project, from, ErrNotMaster)
	}
	return nil
}

// Snapshot is the SessionStore's active state, as the warm-up reads it.
type Snapshot struct {
	Sessions []Session
	// Masters maps each project with a live master to its session id.
	Masters map[RouteKey]string // Identity is MasterIdentity
}

// mgetChunk bounds one MGET (all keys of one tenant: one slot).
const mgetChunk = 500

// Load reads every active session (the §6 rehydration source): the
// tenants set, then per tenant the index members whose expiry is in the
// future, their records with per-tenant MGETs (one slot each), and the
// projects' master keys. Index entries past their expiry are pruned on the
// way (the record is gone already).
func (s *SessionStore) Load(ctx context.Context) (Snapshot, error) {
	snap := Snapshot{Masters: map[RouteKey]string{}}
	reply, err := s.pool.Do(ctx, client.NewCmd("SMEMBERS", []string{s.TenantsKey()}))
	if err != nil {
		return snap, fmt.Errorf("load sessions: tenants: %w", err)
	}
	tenants, _, err := client.AsStrings(reply)
	if err != nil {
		return snap, fmt.Errorf("load sessions: tenants: %w", err)
	}
	sort.Strings(tenants)
	now := s.now()
	for _, tenant := range tenants {
		sessions, err := s.loadTenant(ctx, tenant, now)
		if err != nil {
			return snap, err
		}
		snap.Sessions = append(snap.Sessions, sessions...)
		masters, err := s.loadMasters(ctx, tenant, sessions)
		if err != nil {
			return snap, err
		}
		for k, v := range masters {
			snap.Masters[k] = v
		}
	}
	return snap, nil
}

func (s *SessionStore) loadTenant(ctx context.Context, tenant string, now time.Time) ([]Session, error) {
	idx := s.IndexKey(tenant)
	if _, err := s.pool.Do(ctx, client.NewCmd("ZREMRANGEBYSCORE", []string{idx}, "-inf", "("+ms(now))); err != nil {
		return nil, fmt.Errorf("load sessions of %s: prune index: %w", tenant, err)
	}
	reply, err := s.pool.Do(ctx, client.NewCmd("ZRANGEBYSCORE", []string{idx}, ms(now), "+inf", "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("load sessions of %s: read index: %w", tenant, err)
	}
	members, err := withScores(reply)
	if err != nil {
		return nil, fmt.Errorf("load sessions of %s: read index: %w", tenant, err)
	}
	var out []Session
	for start := 0; start < len(members); start += mgetChunk {
		part := members[start:min(start+mgetChunk, len(members))]
		keys := make([]string, len(part))
		for i, m := range part {
			keys[i] = s.RecordKey(tenant, m.member)
		}
		//slotgate:same-slot every RecordKey of one tenant carries the tenant's hash tag {tenant}
		reply, err := s.pool.Do(ctx, client.NewCmd("MGET", keys))
		if err != nil {
			return nil, fmt.Errorf("load sessions of %s: read records: %w", tenant, err)
		}
		vals, isNil, err := client.AsStrings(reply)
		if err != nil {
			return nil, fmt.Errorf("load sessions of %s: read records: %w", tenant, err)
		}
		for i, v := range vals {
			if isNil[i] { // expired between the index read and the MGET
				continue
			}
			var r record
			if err := json.Unmarshal([]byte(v), &r); err != nil {
				return nil, fmt.Errorf("load sessions of %s: decode %s: %w", tenant, keys[i], err)
			}
			out = append(out, Session{SessionID: r.SessionID, Tenant: r.Tenant, Project: r.Project, Identity: r.Identity,
				Surface: r.Surface, MachineID: r.MachineID, RegisteredAt: time.UnixMilli(r.RegisteredMs),
				LastHeartbeat: time.UnixMilli(part[i].score).Add(-s.ttl)})
		}
	}
	return out, nil
}

func (s *SessionStore) loadMasters(ctx context.Context, tenant string, sessions []Session) (map[RouteKey]string, error) {
	live := map[string]bool{}
	projects := map[string]bool{}
	for _, x := range sessions {
		live[x.SessionID] = true
		projects[x.Project] = true
	}
	names := make([]string, 0, len(projects))
	for p := range projects {
		names = append(names, p)
	}
	sort.Strings(names)
	out := map[RouteKey]string{}
	for start := 0; start < len(names); start += mgetChunk {
		part := names[start:min(start+mgetChunk, len(names))]
		keys := make([]string, len(part))
		for i, p := range part {
			keys[i] = s.MasterKey(tenant, p)
		}
		//slotgate:same-slot every MasterKey of one tenant carries the tenant's hash tag {tenant}
		reply, err := s.pool.Do(ctx, client.NewCmd("MGET", keys))
		if err != nil {
			return nil, fmt.Errorf("load masters of %s: %w", tenant, err)
		}
		vals, isNil, err := client.AsStrings(reply)
		if err != nil {
			return nil, fmt.Errorf("load masters of %s: %w", tenant, err)
		}
		for i, v := range vals {
			if !isNil[i] && live[v] { // a master that is gone holds nothing
				out[RouteKey{Tenant: tenant, Project: part[i], Identity: MasterIdentity}] = v
			}
		}
	}
	return out, nil
}

type scored struct {
	member string
	score  int64
}

// withScores reads a ZRANGE … WITHSCORES reply in both shapes: RESP2's
// flat [member, score, …] and RESP3's [[member, score], …].
func withScores(reply any) ([]scored, error) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("read scores from %T: %w", reply, client.ErrUnexpectedReply)
	}
	var out []scored
	add := func(m, sc any) error {
		member, err := client.AsString(m)
		if err != nil {
			return err
		}
		var f float64
		switch v := sc.(type) {
		case float64:
			f = v
		case int64:
			f = float64(v)
		case string:
			if f, err = strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("score %q: %w", v, client.ErrUnexpectedReply)
			}
		default:
			return fmt.Errorf("score %T: %w", sc, client.ErrUnexpectedReply)
		}
		out = append(out, scored{member: member, score: int64(f)})
		return nil
	}
	if len(arr) > 0 {
		if _, nested := arr[0].([]any); nested {
			for _, e := range arr {
				pair, ok := e.([]any)
				if !ok || len(pair) != 2 {
					return nil, fmt.Errorf("score pair %v: %w", e, client.ErrUnexpectedReply)
				}
				if err := add(pair[0], pair[1]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	if len(arr)%2 != 0 {
		return nil, fmt.Errorf("odd WITHSCORES reply: %w", client.ErrUnexpectedReply)
	}
	for i := 0; i < len(arr); i += 2 {
		if err := add(arr[i], arr[i+1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
