package main

import (
	"bytes"
	"fmt"
	"github.com/slotgate/slotgate/report"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input gets a clear message and exit code 2, before anything starts.
func TestBadInputExitsTwo(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // a fragment the message must contain
	}{
		{"no command", nil, "Usage"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown row", []string{"run", "--row", "fencing-scripts,nope"}, `unknown row "nope"`},
		{"bad topology", []string{"run", "--topology", "cluster:0x1"}, "primaries"},
		{"bad provider", []string{"run", "--provider", "docker"}, "want local or containers"},
		{"not a cluster topology", []string{"run", "--topology", "standalone"}, "multi-shard"},
		{"bad replicated topology", []string{"run", "--topology", "cluster:3x1,replicated:0"}, "replica"},
		{"bad timing", []string{"run", "--timing", "fast"}, `unknown timing "fast"`},
		{"two cluster topologies", []string{"run", "--topology", "cluster:3x1,cluster:2x1"}, "two cluster topologies"},
		{"bad profile", []string{"run", "--profile", "medium"}, `unknown profile "medium"`},
		{"bad backend", []string{"run", "--backend", "jedis"}, `unknown client backend "jedis"`},
		{"missing server", []string{"run", "--server", "/nonexistent/valkey-server"}, "find server"},
		{"not a server", []string{"run", "--server", "/bin/true"}, "parse /bin/true --version"},
		{"stray argument", []string{"run", "extra"}, "unexpected argument"},
		{"client without a version", []string{"run", "--client", "go-redis"}, "want name@version"},
		{"unknown client library", []string{"run", "--client", "jedis@v5.0.0"}, `unknown client library "jedis"`},
		{"client version not a version", []string{"run", "--client", "go-redis@9.1"}, "is not a module version"},
		{"stability with a bad client", []string{"stability", "--client", "go-redis@latest"}, "is not a module version"},
		{"admit without --client", []string{"admit"}, "admit needs --client"},
		{"admit an unknown row", []string{"admit", "--client", "go-redis@v9.17.3", "--row", "nope"}, `unknown row "nope"`},
		{"admit a bad run flag", []string{"admit", "--client", "go-redis@v9.17.3", "--run-args", "--backend go-redis"}, "--run-args"},
		{"one library twice", []string{"run", "--client", "go-redis@v9.17.3,go-redis@v9.18.0"}, "names go-redis twice"},
		{"bad flag", []string{"run", "--nope"}, "flag provided but not defined"},
		{"bad port range", []string{"run", "--ports", "30000-20000"}, "bad port range"},
		{"port clash", []string{"run", "--ports", occupied(t)}, "port clash"},
		{"report without --from", []string{"report"}, "--from is required"},
		{"report from missing file", []string{"report", "--from", "/nonexistent.json"}, "cannot read /nonexistent.json"},
		{"report from garbage", []string{"report", "--from", writeFile(t, "{not json")}, "not a slotgate results.json"},
		{"check without --from", []string{"check"}, "want --from DIR"},
		{"check from an empty dir", []string{"check", "--from", t.TempDir()}, "results.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("message %q does not contain %q", stderr.String(), c.want)
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"run", "--help"}, {"report", "--help"}, {"rows", "--help"}, {"check", "--help"}, {"help", "run"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitPass {
			t.Errorf("%v: exit %d, want 0\n%s", args, code, stderr.String())
		}
		if stdout.Len()+stderr.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
	}
}

func TestRowsListsCatalogue(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"rows"}, &stdout, &stderr); code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, r := range report.Catalogue {
		if !strings.Contains(stdout.String(), string(r.ID)) {
			t.Errorf("rows output lacks %q:\n%s", r.ID, stdout.String())
		}
	}
	if !strings.Contains(stdout.String(), "implemented") {
		t.Errorf("rows output marks no row implemented:\n%s", stdout.String())
	}
}

// occupied binds one port for the test's lifetime and returns it as a
// one-port range: taken, and far too small for any topology.
func occupied(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	return fmt.Sprintf("%d-%d", port, port)
}

func writeFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
