package marconiaudit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// envArchiverProc carries an archiverProc as JSON: when set, this test
// binary is not a suite but one PG archiver process (spec 002 §4.2, Stage 4
// "a FastAPI in-process background task": here the process is nothing but
// that task, so killing it kills the archiver and nothing else). Re-running
// the suite's own binary needs no build step and cannot drift from the
// archiver the suite links.
const envArchiverProc = "SLOTGATE_MARCONI_ARCHIVER_PROC"

// archiverProc configures one archiver process.
type archiverProc struct {
	Backend                                   client.Backend
	Addrs                                     []string
	Username, Password                        string
	DSN, Schema                               string
	Tenants                                   []string
	Consumer                                  string
	Targets                                   audit.Targets
	Mutant                                    audit.Mutant
	Block, ClaimMinIdle, ClaimEvery, RetryMax time.Duration
	// KillAt, when set, makes the process SIGKILL itself the first time it
	// reaches that crash point after it began KillAfter entries: a real
	// OS kill at a chosen instant (between commit and XACK, say), which a
	// kill from outside at an arbitrary moment hits only by chance.
	KillAt    audit.CrashPoint
	KillAfter int
}

func TestMain(m *testing.M) {
	if js := os.Getenv(envArchiverProc); js != "" {
		os.Exit(runArchiverProc(js))
	}
	os.Exit(m.Run())
}

// runArchiverProc is the archiver process's main: it archives until
// SIGTERM (exit 0) or an error (exit 1) — or until it is SIGKILLed.
func runArchiverProc(js string) int {
	var s archiverProc
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintf(os.Stderr, "archiver process: bad %s: %v\n", envArchiverProc, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var mu sync.Mutex
	began := 0
	a, err := audit.NewArchiver(audit.ArchiverOptions{
		Dial: func(ctx context.Context) (client.Pool, error) {
			return client.NewPool(ctx, client.Options{Backend: s.Backend, Mode: client.ModeCluster, Addrs: s.Addrs,
				Username: s.Username, Password: s.Password, ClientName: "marconi-archiver-proc"})
		},
		PostgresDSN: s.DSN, Schema: s.Schema, Tenants: s.Tenants, Consumer: s.Consumer, Targets: s.Targets,
		Block: s.Block, ClaimMinIdle: s.ClaimMinIdle, ClaimEvery: s.ClaimEvery, RetryMax: s.RetryMax, Mutant: s.Mutant,
		Crash: func(p audit.CrashPoint, tenant, signalID string) bool {
			mu.Lock()
			defer mu.Unlock()
			if p == audit.CrashBeforeWrite {
				began++
			}
			if s.KillAt != "" && p == s.KillAt && began >= s.KillAfter {
				fmt.Fprintf(os.Stderr, "archiver process %d: SIGKILL myself at %s (%s, entry %d)\n", os.Getpid(), p, signalID, began)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the kernel ends this process before anything else runs
			}
			return false
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "archiver process: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "archiver process %d (%s) archiving %v\n", os.Getpid(), s.Consumer, s.Tenants)
	if err := a.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "archiver process: %v\n", err)
		return 1
	}
	return 0
}

// startArchiverProc starts one archiver process for p's tenants (primary
// mode, p's mutant), logging to dir; DeferCleanup kills it if the spec ends
// first.
func startArchiverProc(p *pipeline, consumer, dir string, killAt audit.CrashPoint, killAfter int) *fixtures.Child {
	GinkgoHelper()
	cred := cluster.Credentials()
	spec := archiverProc{
		Backend: p.backend, Addrs: cluster.Addrs(), Username: cred.Username, Password: cred.Password,
		DSN: pg.DSN(), Schema: p.spec.Schema, Tenants: p.spec.Tenants, Consumer: consumer,
		Targets: audit.Targets{Primary: true}, Mutant: mutantFor(p.spec.Mutant, "archiver"),
		Block: archiverBlock, ClaimMinIdle: claimMinIdle, ClaimEvery: claimEvery, RetryMax: archiverRetryMax,
		KillAt: killAt, KillAfter: killAfter,
	}
	js, err := json.Marshal(spec)
	Expect(err).NotTo(HaveOccurred())
	self, err := fixtures.Self()
	Expect(err).NotTo(HaveOccurred())
	c, err := fixtures.StartChild(fixtures.ChildSpec{
		Path: self, Args: []string{"-test.run=^$"}, Env: append(os.Environ(), envArchiverProc+"="+string(js)),
		Out: filepath.Join(dir, consumer+".log"),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	return c
}

// childLog is the tail of an archiver process's log, for failure messages.
func childLog(dir, consumer string) string {
	b, _ := os.ReadFile(filepath.Join(dir, consumer+".log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
