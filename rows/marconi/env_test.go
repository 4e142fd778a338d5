package marconi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
)

// tenant is every scenario's tenant: one hash tag, so the SessionStore keys
// and the Marconi Cache stream of a scenario share one slot of the cluster.
const tenant = "acme"

// meshScale sizes the rows by profile.
type meshScale struct {
	// Hot path: receivers attached, senders × per-sender sends per burst,
	// and the sends of each negative-control burst.
	Receivers, Senders, PerSender, ControlPerSender int
	// Cache lifecycle: SessionStore TTL, churn length and pace, identities,
	// senders, sessions left to expire, warm sessions.
	TTL, ChurnFor, ControlChurnFor, ChurnEvery, HeartbeatEvery, SendEvery time.Duration
	Identities, ChurnSenders, Expire, WarmSessions, MinReads              int
	// Restart: receivers and sends per burst.
	RestartReceivers, RestartPerSender int
}

func scaleOf() meshScale {
	s := meshScale{
		Receivers: 50, Senders: 8, PerSender: 50, ControlPerSender: 4,
		TTL: 2 * time.Second, ChurnFor: 5 * time.Second, ControlChurnFor: 2500 * time.Millisecond,
		ChurnEvery: 40 * time.Millisecond, HeartbeatEvery: 300 * time.Millisecond, SendEvery: 5 * time.Millisecond,
		Identities: 12, ChurnSenders: 4, Expire: 2, WarmSessions: 20, MinReads: 500,
		RestartReceivers: 20, RestartPerSender: 10,
	}
	if cfg.Profile == "full" {
		// NOTE: ~1,000 churn ticks (re-registrations, master flips, lapses):
		// 40 s at one every 40 ms.
		s.Receivers, s.PerSender = 200, 500
		s.ChurnFor, s.ControlChurnFor, s.Expire, s.WarmSessions, s.MinReads = 40*time.Second, 5*time.Second, 6, 200, 5000
		s.RestartReceivers, s.RestartPerSender = 100, 50
	}
	return s
}

// newPool opens a cluster command pool of backend, counted at the seam,
// with short timeouts: a legacy send path stuck on an unreachable node
// fails in seconds instead of the clients' 5 s default. The dial timeout
// is 1 s, not less: valkey-go bounds a new connection's whole handshake
// (HELLO, CLIENT SETNAME, SETINFO) by it, and on a loaded 2-core machine
// 300 ms failed a warm-up's first command with "context deadline
// exceeded" (an unreachable node refuses at once: the proxies are
// disabled, not blackholed). The read timeout is 2 s, not 500 ms: at load
// 16–38 the mesh's own heartbeat and register reads took longer and
// answered "500 internal … i/o timeout" inside the session TTL — a
// deadline that ignored load, failing cache-lifecycle's errors cell.
func newPool(ctx context.Context, b client.Backend, name string) *marconi.CountingPool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second}))
	Expect(err).NotTo(HaveOccurred(), "open %s pool", b)
	DeferCleanup(p.Close)
	return marconi.Count(p)
}

// meshEnv is one running Marconi instance behind a real HTTP server.
type meshEnv struct {
	mesh *marconi.Mesh
	srv  *httptest.Server
	api  *marconi.Client
	url  string
	warm marconi.Warmup
	once sync.Once
}

// startMesh builds, warms up and serves a mesh with the shipped flags
// unless o names others; it stops with the spec.
func startMesh(ctx context.Context, o marconi.Options) *meshEnv {
	GinkgoHelper()
	if !o.Flags.HotPathSend && !o.Flags.RoutingTableReads {
		o.Flags = marconi.ShippedFlags()
	}
	return startMeshAs(ctx, o)
}

// startMeshAs is startMesh with o.Flags as given (all off is spec 002
// §8's default, not "unset").
func startMeshAs(ctx context.Context, o marconi.Options) *meshEnv {
	GinkgoHelper()
	o.Logf = func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, format+"\n", args...) }
	m, err := marconi.New(o)
	Expect(err).NotTo(HaveOccurred())
	w, err := m.Start(ctx)
	Expect(err).NotTo(HaveOccurred(), "start mesh")
	e := &meshEnv{mesh: m, warm: w}
	e.srv = httptest.NewServer(m.Handler())
	e.url = e.srv.URL
	e.api = &marconi.Client{BaseURL: e.url, HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Second}}
	DeferCleanup(e.stop)
	return e
}

// stop ends the instance as a process exit would.
func (e *meshEnv) stop() {
	e.once.Do(func() {
		_ = e.mesh.Close()
		e.srv.CloseClientConnections()
		e.srv.Close()
	})
}

// pipeline is the audit fan-out of one instance (package audit): the
// queue the mesh offers to, the Redis Stream writer and (optionally) the
// PG archiver, each through counted pools.
type pipeline struct {
	queue       *audit.Queue
	writerPool  *marconi.CountingPool
	writer      *audit.Writer
	archPools   []*marconi.CountingPool
	archiver    *audit.Archiver
	mu          sync.Mutex
	stopWriter  func()
	stopArchive func()
}

func startPipeline(ctx context.Context, b client.Backend, reg prometheus.Registerer, name string, archive bool, queueMutant audit.Mutant) *pipeline {
	GinkgoHelper()
	metrics := audit.NewMetrics(reg)
	q, err := audit.NewQueue(audit.QueueOptions{Metrics: metrics, Mutant: queueMutant})
	Expect(err).NotTo(HaveOccurred())
	p := &pipeline{queue: q, writerPool: newPool(ctx, b, name+"-writer")}
	p.writer, err = audit.NewWriter(audit.WriterOptions{Pool: p.writerPool, Queue: q, Metrics: metrics})
	Expect(err).NotTo(HaveOccurred())
	if archive {
		p.archiver, err = audit.NewArchiver(audit.ArchiverOptions{
			Dial: func(ctx context.Context) (client.Pool, error) {
				cp, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name + "-archiver"}))
				if err != nil {
					return nil, err
				}
				counted := marconi.Count(cp)
				p.mu.Lock()
				p.archPools = append(p.archPools, counted)
				p.mu.Unlock()
				return counted, nil
			},
			PostgresDSN: pg.DSN(), Tenants: []string{tenant}, Consumer: name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36),
			Targets: audit.Targets{Primary: true}, Metrics: metrics, Block: 200 * time.Millisecond, Timeout: time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
	}
	p.resume()
	DeferCleanup(func() {
		p.pause()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, cp := range p.archPools {
			_ = cp.Close()
		}
	})
	return p
}

// run starts f in the background; the returned stop cancels it and waits
// for it to return.
func run(f func(context.Context) error) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f(ctx)
	}()
	return func() { cancel(); <-done }
}

// resume starts the workers.
func (p *pipeline) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopWriter == nil {
		p.stopWriter = run(p.writer.Run)
	}
	if p.archiver != nil && p.stopArchive == nil {
		p.stopArchive = run(p.archiver.Run)
	}
}

// pause stops the workers and returns once they returned.
func (p *pipeline) pause() {
	p.mu.Lock()
	sw, sa := p.stopWriter, p.stopArchive
	p.stopWriter, p.stopArchive = nil, nil
	p.mu.Unlock()
	if sw != nil {
		sw()
	}
	if sa != nil {
		sa()
	}
}

// pools are the workers' counted pools (the archiver dials its own).
func (p *pipeline) pools() []*marconi.CountingPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*marconi.CountingPool{p.writerPool}, p.archPools...)
}

// counts sums what the workers' pools sent.
func (p *pipeline) counts() marconi.IOCounts { return sumCounts(p.pools()...) }

func sumCounts(pools ...*marconi.CountingPool) marconi.IOCounts {
	out := marconi.IOCounts{ByCommand: map[string]int64{}, HotPathByCommand: map[string]int64{}}
	for _, p := range pools {
		c := p.Counts()
		out.Total += c.Total
		out.HotPath += c.HotPath
		for k, v := range c.ByCommand {
			out.ByCommand[k] += v
		}
		for k, v := range c.HotPathByCommand {
			out.HotPathByCommand[k] += v
		}
	}
	return out
}

// registerReceivers registers n sessions of tenant/project and attaches
// their sockets; it returns their routing keys.
func registerReceivers(ctx context.Context, rec *workload.MeshRecorder, recv *workload.MeshReceivers, project string, n int, attach bool) ([]marconi.RouteKey, []marconi.Session) {
	GinkgoHelper()
	keys := make([]marconi.RouteKey, n)
	sessions := make([]marconi.Session, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer GinkgoRecover()
			defer func() { <-sem }()
			s, err := rec.Register(ctx, marconi.Session{SessionID: fmt.Sprintf("%s-r%03d", project, i), Tenant: tenant, Project: project, Identity: fmt.Sprintf("r%03d", i), Surface: "receiver"})
			Expect(err).NotTo(HaveOccurred())
			keys[i], sessions[i] = s.Route(), s
		})
	}
	wg.Wait()
	if attach {
		ids := make([]string, n)
		for i, s := range sessions {
			ids[i] = s.SessionID
		}
		Expect(recv.ConnectAll(ctx, ids, 16)).To(Succeed())
	}
	return keys, sessions
}

// Server-side accounting (spec 002 §2.1, counted on the servers).

// serverNoise are the commands a node counts whatever clients do, with why:
// the measuring INFO itself; REPLCONF ACK, the replica's once-a-second
// replication offset report; PING, the replication link's keepalive and
// valkey-go's once-a-second keepalive on every idle connection
// (docs/FINDINGS.md). A send's I/O would show as any other command.
var serverNoise = map[string]bool{"info": true, "replconf": true, "ping": true}

// commandStats reads INFO commandstats calls per "node:command" on every
// node of the cluster, over the admin connection (never the proxies).
func commandStats(ctx context.Context) map[string]int64 {
	GinkgoHelper()
	out := map[string]int64{}
	for _, n := range cluster.Nodes() {
		info, err := n.Info(ctx, "commandstats")
		Expect(err).NotTo(HaveOccurred())
		for k, v := range info {
			name, ok := strings.CutPrefix(k, "cmdstat_")
			if !ok {
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			c, err := strconv.ParseInt(calls, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "commandstats %s=%s", k, v)
			out[n.Name()+":"+name] = c
		}
	}
	return out
}

// statDelta splits after−before into counted commands and the noise.
func statDelta(before, after map[string]int64) (counted, noise map[string]int64) {
	counted, noise = map[string]int64{}, map[string]int64{}
	for k, v := range after {
		d := v - before[k]
		if d == 0 {
			continue
		}
		_, cmd, _ := strings.Cut(k, ":")
		if serverNoise[cmd] {
			noise[cmd] += d
		} else {
			counted[k] = d
		}
	}
	return counted, noise
}

// waitReplicated waits until every replica has applied its primary's whole
// replication stream (Topology.ReplicasCaughtUp). NOTE: a replica counts the
// commands it applies from its primary in its own commandstats; under load
// the audit writers' last writes of burst 1 reached p2r0 during the paused
// burst (xadd ×148, multi/exec ×14, …) and were scored as the sends' I/O. A
// send's own write still shows: its primary counts it. Not caught up in 10 s,
// the scenario is inconclusive: the measurement's premise did not hold,
// which says nothing of the sends.
func waitReplicated(ctx context.Context) {
	GinkgoHelper()
	if err := wait.Within(ctx, 10*time.Second, 20*time.Millisecond, cluster.ReplicasCaughtUp); err != nil {
		harness.MustConfirm(&fault.NotConfirmedError{Fault: "replicas-caught-up", Err: fmt.Errorf("before the paused burst: %w", err)}, cfg.Seed)
	}
}

// waitUnblocked waits until no client is blocked on any node: a paused
// archiver's XREADGROUP … BLOCK is counted when it returns, which must not
// fall into a measured window.
func waitUnblocked(ctx context.Context) {
	GinkgoHelper()
	Eventually(ctx, func() int {
		total := 0
		for _, n := range cluster.Nodes() {
			info, err := n.Info(ctx, "clients")
			if err != nil {
				return -1
			}
			b, _ := strconv.Atoi(info["blocked_clients"])
			total += b
		}
		return total
	}).WithTimeout(5*time.Second).WithPolling(10*time.Millisecond).Should(BeZero(), func() string { return blockedClients(ctx) })
}

// blockedClients names the clients blocked on every node (CLIENT LIST
// flags containing b), for the failure message of waitUnblocked.
func blockedClients(ctx context.Context) string {
	var out []string
	for _, n := range cluster.Nodes() {
		v, err := n.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "flags=") && strings.Contains(f, "b") {
					out = append(out, n.Name()+": "+line)
				}
			}
		}
	}
	return "blocked clients: " + strings.Join(out, "; ")
}

// pgBackend is one client backend in pg_stat_activity.
type pgBackend struct {
	pid                     int
	app, query              string
	started, queried, state time.Time
}

// pgActivity snapshots the client backends (the probe's own excluded).
// PostgreSQL statement counts: pg_stat_statements is not installed, and
// pg_stat_database's xact/tup counters are flushed by each backend at most
// once a second and by an idle one only after ~10 s (PG 15 pgstat
// PGSTAT_MIN_INTERVAL / PGSTAT_IDLE_INTERVAL), so a delta over a
// sub-second burst is neither complete nor exact. pg_stat_activity's
// query_start and state_change are written in shared memory when a
// statement starts and ends, unbatched: any statement in the window moves
// them, and any new connection shows a new backend_start.
func pgActivity(ctx context.Context, conn *pgx.Conn) map[int]pgBackend {
	GinkgoHelper()
	rows, err := conn.Query(ctx, `SELECT pid, coalesce(application_name, ''), coalesce(left(query, 120), ''),
		backend_start, coalesce(query_start, 'epoch'), coalesce(state_change, 'epoch')
		FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	Expect(err).NotTo(HaveOccurred())
	out := map[int]pgBackend{}
	for rows.Next() {
		var b pgBackend
		Expect(rows.Scan(&b.pid, &b.app, &b.query, &b.started, &b.queried, &b.state)).To(Succeed())
		out[b.pid] = b
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	return out
}

// pgActiveDuring lists the backends that started or ran a statement
// between two snapshots.
func pgActiveDuring(before, after map[int]pgBackend) []string {
	var out []string
	for pid, a := range after {
		b, ok := before[pid]
		switch {
		case !ok || !a.started.Equal(b.started):
			out = append(out, fmt.Sprintf("pid %d (%s) connected: %s", pid, a.app, a.query))
		case !a.queried.Equal(b.queried) || !a.state.Equal(b.state):
			out = append(out, fmt.Sprintf("pid %d (%s) ran: %s", pid, a.app, a.query))
		}
	}
	sort.Strings(out)
	return out
}

// probePG is a direct (unproxied) connection for the measurements.
func probePG(ctx context.Context) *pgx.Conn {
	GinkgoHelper()
	conn, err := pgx.Connect(ctx, pg.DirectDSN())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func prefixed(prefix string, m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[prefix+k] = v
	}
	return out
}

func okSends(rec *workload.MeshRecorder) int {
	n := 0
	for _, s := range rec.History().Sends {
		if s.OK() {
			n++
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// histogramQuantile reads q from a histogram on reg as the upper bound of
// the bucket holding it (summed over label values).
func histogramQuantile(reg prometheus.Gatherer, name string, q float64) float64 {
	families, err := reg.Gather()
	if err != nil {
		return 0
	}
	bounds := map[float64]uint64{}
	var total uint64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			total += h.GetSampleCount()
			for _, b := range h.GetBucket() {
				bounds[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	if total == 0 {
		return 0
	}
	keys := make([]float64, 0, len(bounds))
	for k := range bounds {
		keys = append(keys, k)
	}
	sort.Float64s(keys)
	for _, k := range keys {
		if float64(bounds[k]) >= q*float64(total) {
			return k
		}
	}
	return keys[len(keys)-1]
}
