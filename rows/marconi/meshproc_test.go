package marconi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// envMeshProc carries a meshProc as JSON: when set, this test binary is not
// a suite but one Marconi process — the mesh, its audit queue and its Redis
// Stream writer (spec 002 §2.4: both audit workers are in-process
// background tasks), serving the API on a loopback port. Killing it kills
// all three at once, as a crashed backend would. Re-running the suite's own
// binary needs no build step and cannot drift from the mesh the suite links.
const envMeshProc = "SLOTGATE_MARCONI_MESH_PROC"

// meshProc configures one mesh process.
type meshProc struct {
	Backend            client.Backend
	Addrs              []string
	Username, Password string
	// Prefix is the SessionStore's key prefix.
	Prefix string
	// WriterMutant is the Redis Stream writer's variant.
	WriterMutant audit.Mutant
	// URLFile receives the API's base URL once it serves.
	URLFile string
}

func TestMain(m *testing.M) {
	if js := os.Getenv(envMeshProc); js != "" {
		os.Exit(runMeshProc(js))
	}
	os.Exit(m.Run())
}

// runMeshProc is the mesh process's main: it serves until SIGTERM (exit
// 0) or an error (exit 1) — or until it is SIGKILLed.
func runMeshProc(js string) int {
	var s meshProc
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintf(os.Stderr, "mesh process: bad %s: %v\n", envMeshProc, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := serveMeshProc(ctx, s); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "mesh process: %v\n", err)
		return 1
	}
	return 0
}

func serveMeshProc(ctx context.Context, s meshProc) error {
	pool, err := client.NewPool(ctx, client.Options{Backend: s.Backend, Mode: client.ModeCluster, Addrs: s.Addrs, Username: s.Username, Password: s.Password,
		ClientName: "marconi-mesh-proc", DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("open pool: %w", err)
	}
	defer pool.Close()
	reg := prometheus.NewRegistry()
	metrics := audit.NewMetrics(reg)
	q, err := audit.NewQueue(audit.QueueOptions{Metrics: metrics})
	if err != nil {
		return fmt.Errorf("new queue: %w", err)
	}
	var mesh *marconi.Mesh
	w, err := audit.NewWriter(audit.WriterOptions{Pool: pool, Queue: q, Metrics: metrics, Mutant: s.WriterMutant,
		OnAppended: func(es []audit.Entry) { mesh.AuditAppended(es) }})
	if err != nil {
		return fmt.Errorf("new writer: %w", err)
	}
	mesh, err = marconi.New(marconi.Options{Pool: pool, Store: marconi.StoreOptions{Prefix: s.Prefix}, Sink: q, Flags: marconi.ShippedFlags(), Registry: reg,
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }})
	if err != nil {
		return fmt.Errorf("new mesh: %w", err)
	}
	if _, err := mesh.Start(ctx); err != nil {
		return err
	}
	defer mesh.Close()
	go func() { _ = w.Run(ctx) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: mesh.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	tmp := s.URLFile + ".tmp"
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()), 0o600); err != nil {
		return fmt.Errorf("write url: %w", err)
	}
	if err := os.Rename(tmp, s.URLFile); err != nil {
		return fmt.Errorf("write url: %w", err)
	}
	fmt.Fprintf(os.Stderr, "mesh process %d serving on %s (writer %q)\n", os.Getpid(), ln.Addr(), s.WriterMutant)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return ctx.Err()
}

// startMeshProc starts one mesh process and waits until it serves; the
// child is killed at the spec's end if still running.
func startMeshProc(ctx context.Context, b client.Backend, name string, mutant audit.Mutant) (*fixtures.Child, *marconi.Client, string) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	cred := cluster.Credentials()
	spec := meshProc{Backend: b, Addrs: cluster.Addrs(), Username: cred.Username, Password: cred.Password, Prefix: name,
		WriterMutant: mutant, URLFile: filepath.Join(dir, "url")}
	js, err := json.Marshal(spec)
	Expect(err).NotTo(HaveOccurred())
	self, err := fixtures.Self()
	Expect(err).NotTo(HaveOccurred())
	logPath := filepath.Join(dir, name+".log")
	c, err := fixtures.StartChild(fixtures.ChildSpec{Path: self, Args: []string{"-test.run=^$"}, Env: append(os.Environ(), envMeshProc+"="+string(js)), Out: logPath})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	var url []byte
	Eventually(ctx, func() error {
		if c.Exited() {
			log, _ := os.ReadFile(logPath)
			return StopTrying(fmt.Sprintf("mesh process exited: %v\n%s", c.ExitError(), log))
		}
		url, err = os.ReadFile(spec.URLFile)
		return err
	}).WithTimeout(20*time.Second).WithPolling(20*time.Millisecond).Should(Succeed(), "mesh process serving")
	api := &marconi.Client{BaseURL: string(url), HTTP: &http.Client{Timeout: 5 * time.Second}}
	return c, api, string(url)
}

var _ = Describe("marconi-restart sigkill", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "marconi-restart/sigkill-audit-loss/" + string(b), Row: report.RowMarconiRestart, Column: report.ColumnSilentlyWrong,
			Spec: "a mesh process SIGKILLed while its Redis Stream writer is cut off from the stream loses only what was in flight: no entry it had declared durable, no more than its last-scraped queue depth plus one writer batch, nothing twice (002 §6 in-flight loss at restart, §4.1 the durable boundary, §3.4 durability_status)",
			// The writer is cut off at the stream node's proxy: a fault only a
			// topology slotgate started can take.
			Run: harness.Requires(func() error { return cluster.Controllable() }, func(ctx SpecContext) report.Check { return judgeMeshKill(ctx, b) }),
		})
	}
})

// killSignals sizes the drill: signals streamed before the cut, then
// signals accepted with the writer cut off.
const killBefore, killDuring = 200, 100

func judgeMeshKill(ctx SpecContext, b client.Backend) report.Check {
	By("a mesh process with the reference writer: steady traffic, the stream's node cut off, more traffic, SIGKILL")
	ref := runMeshKill(ctx, b, "sigkilled", audit.MutantNone)
	By("the same on a mesh process whose writer announces entries before appending them")
	ctl := runMeshKill(ctx, b, "sigkilled-ctl", audit.MutantAnnounceBeforeAppend)
	result := judge.KillLoss.Judge(ref)
	variant := harness.Variant(string(audit.MutantAnnounceBeforeAppend),
		"the writer declares the entries it takes durable before its append: the SIGKILL loses entries the process had acknowledged", judge.KillLoss.Judge(ctl))
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Observed = append(ev.Observed, fmt.Sprintf("reference: %d accepted (%d with the writer cut off), %.0f declared durable, queue depth %.0f at the last scrape, %d in the stream after the kill; exit %s",
		len(ref.Accepted), ref.DuringOutage, ref.Acked, ref.Depth, len(ref.Streamed), ref.Exit))
	return harness.Check(report.RowMarconiRestart, report.ColumnSilentlyWrong, "", result, ev, variant)
}

// runMeshKill is the drill on one mesh process whose tenant is its name:
// sends until the stream holds them all and the process declared them
// durable; the tenant's node cut off (its proxy disabled); more sends,
// answered from memory; a scrape; SIGKILL; the node back; the stream read.
func runMeshKill(ctx context.Context, b client.Backend, tenant string, mutant audit.Mutant) judge.MeshKillRun {
	GinkgoHelper()
	c, api, url := startMeshProc(ctx, b, tenant, mutant)
	run := judge.MeshKillRun{Tenant: tenant, Batch: audit.DefaultWriterBatch}
	readPool := newPool(ctx, b, tenant+"-reader")
	send := func(n int) {
		for i := range n {
			res, err := api.Send(ctx, marconi.SendRequest{Tenant: tenant, Project: "p", Recipient: "offline", Kind: "kill-drill",
				Payload: []byte(fmt.Sprintf("%d", i)), Obligation: &marconi.ObligationRequest{Kind: "ack", AckSLASeconds: 600, TerminalSLASeconds: 600}})
			Expect(err).NotTo(HaveOccurred(), "send to the mesh process")
			run.Accepted = append(run.Accepted, res.SignalID)
		}
	}
	durable := func(s history.TelemetryScrape) (acked, depth float64) {
		for _, x := range s.Samples {
			if x.Labels["tenant"] != tenant {
				continue
			}
			switch x.Name {
			case "marconi_obligations_durable_total":
				acked += x.Value
			case "marconi_audit_queue_depth":
				depth += x.Value
			}
		}
		return acked, depth
	}
	send(killBefore)
	Eventually(ctx, func() float64 {
		a, _ := durable(traffic.Scrape(ctx, http.DefaultClient, url+marconi.PathMetrics))
		return a
	}).WithTimeout(15*time.Second).WithPolling(50*time.Millisecond).Should(BeNumerically("==", killBefore), "the process declared every steady-state entry durable")

	owner, err := cluster.NodeForSlot(ctx, slot.Of("{"+tenant+"}"))
	Expect(err).NotTo(HaveOccurred())
	owner.DisableProxy()
	DeferCleanup(owner.EnableProxy) // heals even if the drill fails mid-outage (idempotent)
	send(killDuring)
	run.DuringOutage = killDuring
	// The writer takes a batch and tries it against the cut node: the
	// queue then holds fewer than the sends of the outage. Waited for, not
	// slept on: a writer still idle at the kill holds nothing, and a
	// writer that announces before appending would have announced nothing.
	var s history.TelemetryScrape
	Eventually(ctx, func() float64 {
		s = traffic.Scrape(ctx, http.DefaultClient, url+marconi.PathMetrics)
		_, depth := durable(s)
		return depth
	}).WithTimeout(15*time.Second).WithPolling(20*time.Millisecond).Should(BeNumerically("<", killDuring), "the writer took a batch of the outage's entries")
	// The scrape judged is a later one: whatever the writer does on taking
	// a batch (announcing it, in the variant) is in it.
	s = traffic.Scrape(ctx, http.DefaultClient, url+marconi.PathMetrics)
	run.ScrapeErr = s.Err
	run.Acked, run.Depth = durable(s)
	c.Kill()
	<-c.Done()
	run.Exit = fmt.Sprint(c.ExitError())
	var ee *exec.ExitError
	if errors.As(c.ExitError(), &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			run.Killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
		}
	}
	Expect(owner.EnableProxy()).To(Succeed())
	Eventually(ctx, func() error {
		run.Streamed, err = traffic.ReadAuditStream(ctx, readPool, tenant)
		return err
	}).WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(), "read the stream once the node is back")
	return run
}
