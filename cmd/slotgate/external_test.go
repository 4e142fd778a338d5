package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/report"
)

// The external provider, proved end to end: slotgate attaches to a 3×1 cluster, a
// standalone node and a PostgreSQL it did not start (here started by this
// test, then handed over by address only) and runs the rows that need no
// control of them.
// The rows that can run pass in both columns; the rows that cannot are not
// run, with the reason in every renderer; the servers are the same
// processes with the same layout afterwards, and the target was flushed.
func TestRunExternal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers and runs suites")
	}
	if _, err := exec.LookPath("valkey-server"); err != nil {
		t.Skip("valkey-server not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cluster := startFixture(t, ctx, fixtures.ClusterSpec(3, 1))
	standalone := startFixture(t, ctx, fixtures.StandaloneSpec())
	pg, err := fixtures.RunPostgres(ctx)
	t.Cleanup(func() { _ = pg.Close() })
	if err != nil {
		if errors.Is(err, fixtures.ErrMissingBinary) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, n := range append(cluster.Nodes(), standalone.Nodes()...) {
		pids[n.Name()] = n.PID()
	}
	if _, err := standalone.Nodes()[0].Do(ctx, "SET", "someone-elses-key", "v"); err != nil {
		t.Fatal(err)
	}

	bin := buildBinaries(t)
	out := t.TempDir()
	rows := []report.RowID{report.RowProtocol, report.RowLocality, report.RowMarconiRestart, report.RowFencingScripts, report.RowRegistry}
	args := []string{"run", "--provider", "external", "--allow-flush",
		"--endpoint", cluster.Nodes()[0].Addr(), "--standalone", standalone.Nodes()[0].Addr(), "--postgres", pg.DirectDSN(),
		"--row", joinRows(rows), "--profile", "smoke", "--seed", "8", "--out", out, "--quiet"}
	began := time.Now()
	output, code := runBinary(t, bin, args...)
	t.Logf("slotgate %s: exit %d in %v\n%s", strings.Join(args, " "), code, time.Since(began).Round(time.Millisecond), output)
	if code != exitGateFail {
		t.Fatalf("exit %d, want %d: fencing-scripts and registry were requested and cannot run", code, exitGateFail)
	}

	f, err := os.Open(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	card, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if card.Meta.Provider != string(fixtures.ProviderExternal) {
		t.Errorf("provider %q", card.Meta.Provider)
	}
	wantNotRun := map[report.RowID]string{
		report.RowFencingScripts: "restarts a primary",
		report.RowRegistry:       "fails primaries over",
	}
	for _, id := range rows {
		for _, col := range report.Columns {
			c := card.Cell(id, col)
			if want, skipped := wantNotRun[id]; skipped {
				if c.Status != report.StatusNotRun || !strings.HasPrefix(c.Summary, "not run: ") || !strings.Contains(c.Summary, want) {
					t.Errorf("%s/%s: %s %q, want not run naming %q", id, col, c.Status, c.Summary, want)
				}
				continue
			}
			// Partial: a scenario that needs a fault only a started
			// topology can take is skipped, and the cell passes on what ran.
			if c.Status != report.StatusPass && c.Status != report.StatusPartial {
				t.Errorf("%s/%s on the external target: %s — %s", id, col, c.Status, c.Summary)
			}
		}
	}
	if servers := strings.Join(card.Meta.Servers, "; "); !strings.Contains(servers, "external cluster:3x1") ||
		!strings.Contains(servers, "external standalone") || !strings.Contains(servers, pg.Version()+" (external)") {
		t.Errorf("report names the servers %q, not the external target", servers)
	}
	for _, want := range []string{"fencing-scripts not run on this target: restarts a primary", "registry/errors: not-run — not run: fails primaries over"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(html), "not run: restarts a primary") {
		t.Errorf("report.html does not say why fencing-scripts did not run (%v)", err)
	}

	// Nothing was controlled: the same processes, healthy in the built
	// layout; only the data is gone.
	for _, n := range append(cluster.Nodes(), standalone.Nodes()...) {
		if n.PID() != pids[n.Name()] {
			t.Errorf("%s: pid %d, was %d", n.Name(), n.PID(), pids[n.Name()])
		}
	}
	if pg.PID() == 0 {
		t.Error("PostgreSQL is gone after the external run")
	}
	if err := cluster.WaitHealthy(ctx); err != nil {
		t.Errorf("cluster after the external run: %v", err)
	}
	if v, err := standalone.Nodes()[0].Do(ctx, "EXISTS", "someone-elses-key"); err != nil || v != int64(0) {
		t.Errorf("the key on the target survived --allow-flush: %v %v", v, err)
	}

	// A standalone node is not a cluster endpoint: exit 2 before any suite.
	var stderr bytes.Buffer
	clearExternalEnv(t)
	if code := run([]string{"run", "--provider", "external", "--allow-flush", "--endpoint", standalone.Nodes()[0].Addr()}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "not cluster-enabled") {
		t.Errorf("standalone as --endpoint: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"run", "--provider", "external", "--allow-flush", "--standalone", standalone.Nodes()[0].Addr(),
		"--postgres", "postgres://nobody@" + deadAddr(t) + "/db?connect_timeout=2"}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--postgres") || !strings.Contains(stderr.String(), "unreachable") {
		t.Errorf("unreachable --postgres: exit %d: %s", code, stderr.String())
	}
}

// Bad input to an external run exits 2 with a message that says what to
// fix, before anything is flushed.
func TestRunExternalBadInput(t *testing.T) {
	clearExternalEnv(t)
	dead := deadAddr(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --allow-flush", []string{"--endpoint", dead}, "pass --allow-flush"},
		{"no endpoint", []string{"--allow-flush"}, "no endpoint"},
		{"not host:port", []string{"--allow-flush", "--endpoint", "cache.example"}, "is not host:port"},
		{"unreachable endpoint", []string{"--allow-flush", "--endpoint", dead}, "unreachable"},
		{"TLS files without --tls", []string{"--allow-flush", "--endpoint", dead, "--cacert", "ca.pem"}, "without --tls"},
		{"unreadable CA", []string{"--allow-flush", "--endpoint", dead, "--tls", "--cacert", "/nonexistent/ca.pem"}, "read CA certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"run", "--provider", "external", "--profile", "smoke"}, c.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("message %q does not contain %q", stderr.String(), c.want)
			}
		})
	}
}

// Without --row only the rows the target can run are requested; the rest
// are listed with their reasons but do not fail the gate. A row named with
// --row stays requested and fails it.
func TestSplitExternalRows(t *testing.T) {
	target := report.ExternalTarget{Cluster: true}
	all, err := parseRows("")
	if err != nil {
		t.Fatal(err)
	}
	requested, run, notRun := splitExternalRows(all, false, target)
	if !slices.Equal(requested, run) || !slices.Contains(run, report.RowProtocol) || slices.Contains(run, report.RowRegistry) {
		t.Errorf("default selection: requested %v, run %v", requested, run)
	}
	if notRun[report.RowRegistry] == "" || notRun[report.RowLocality] == "" || len(run)+len(notRun) != len(all) {
		t.Errorf("default selection: not run %v", notRun)
	}
	explicit := []report.RowID{report.RowProtocol, report.RowRegistry}
	requested, run, notRun = splitExternalRows(explicit, true, target)
	if !slices.Equal(requested, explicit) || !slices.Equal(run, []report.RowID{report.RowProtocol}) || notRun[report.RowRegistry] == "" {
		t.Errorf("explicit rows: requested %v, run %v, not run %v", requested, run, notRun)
	}
}

func startFixture(t *testing.T, ctx context.Context, spec fixtures.Spec) *fixtures.Topology {
	t.Helper()
	topo, err := fixtures.Run(ctx, spec)
	t.Cleanup(func() { _ = topo.Close() })
	if err != nil {
		if errors.Is(err, fixtures.ErrMissingBinary) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return topo
}

// buildBinaries is the slotgate binary, with the ginkgo it runs next to it:
// the pair slotgateBinaries builds once per test binary, not a fresh build
// (two links of ~40 MB each) per test.
func buildBinaries(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(slotgateBinaries(t, root), "slotgate")
}

// runBinary runs slotgate from the module root with no SLOTGATE_* variable
// of this process: only its flags say what the target is.
func runBinary(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var output bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &output, &output
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLOTGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return output.String(), 0
	case errors.As(err, &exit):
		return output.String(), exit.ExitCode()
	}
	t.Fatalf("run slotgate: %v\n%s", err, output.String())
	return "", 0
}

// clearExternalEnv keeps this process's SLOTGATE_* target variables from
// reaching an in-process run.
func clearExternalEnv(t *testing.T) {
	for _, name := range []string{fixtures.EnvEndpoint, fixtures.EnvStandalone, fixtures.EnvPostgresDSN, fixtures.EnvUser,
		fixtures.EnvPassword, fixtures.EnvTLS, fixtures.EnvCACert, fixtures.EnvCert, fixtures.EnvKey, fixtures.EnvTLSInsecure, fixtures.EnvAllowFlush} {
		t.Setenv(name, "")
	}
}

// deadAddr is a loopback address nobody listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// On a target that needs a password every suite's pools take the
// target's credentials, so protocol and the Marconi rows run and pass there
// instead of "not run"; and the rows' PostgreSQL tables and schemas live in
// a database of the run's own, dropped at the end: the target's PostgreSQL
// holds exactly what it held before.
func TestRunExternalSecured(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers and runs suites")
	}
	if _, err := exec.LookPath("valkey-server"); err != nil {
		t.Skip("valkey-server not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	app := fixtures.ACLUser{Name: "relay-app", Password: "app-secret", Rules: []string{"~*", "&*", "+@all"}}
	cluster, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 1), fixtures.WithACL(app))
	t.Cleanup(func() { _ = cluster.Close() })
	if err != nil {
		if errors.Is(err, fixtures.ErrMissingBinary) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	pg, err := fixtures.RunPostgres(ctx)
	t.Cleanup(func() { _ = pg.Close() })
	if err != nil {
		if errors.Is(err, fixtures.ErrMissingBinary) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, pg.DirectDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	catalogue := func() string {
		var s string
		q := `SELECT coalesce(string_agg(x, ','), '') FROM (
			SELECT 'db:' || datname AS x FROM pg_database UNION ALL
			SELECT 'schema:' || nspname FROM pg_namespace UNION ALL
			SELECT 'table:' || schemaname || '.' || tablename FROM pg_tables ORDER BY 1) c`
		if err := admin.QueryRow(ctx, q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := catalogue()

	bin := buildBinaries(t)
	out := t.TempDir()
	rows := []report.RowID{report.RowProtocol, report.RowMarconiRestart, report.RowMarconiAuditCompleteness}
	args := []string{"run", "--provider", "external", "--allow-flush", "--endpoint", cluster.Nodes()[0].Addr(),
		"--user", app.Name, "--password", app.Password, "--postgres", pg.DirectDSN(),
		"--row", joinRows(rows), "--profile", "smoke", "--seed", "13", "--out", out, "--quiet"}
	began := time.Now()
	output, code := runBinary(t, bin, args...)
	t.Logf("exit %d in %v\n%s", code, time.Since(began).Round(time.Millisecond), output)
	if code != exitPass {
		t.Errorf("exit %d, want %d: every requested row can run on a password-protected target", code, exitPass)
	}
	f, err := os.Open(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	card, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range rows {
		for _, col := range report.Columns {
			// Partial: a scenario that needs a fault only a started
			// topology can take (a proxy cut) is skipped here, and the
			// cell passes on what ran.
			if c := card.Cell(id, col); c.Status != report.StatusPass && c.Status != report.StatusPartial {
				t.Errorf("%s/%s on a password-protected target: %s — %s", id, col, c.Status, c.Summary)
			}
		}
	}
	if after := catalogue(); after != before {
		t.Errorf("the run left objects in the target's PostgreSQL:\nbefore %s\nafter  %s", before, after)
	}
}
