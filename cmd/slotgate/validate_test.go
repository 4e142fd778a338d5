package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// validate exits 0 on the shipped scripts, 1 on the known-bad corpus, 2 on an unknown dir.
func TestValidateExitCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		out  string // fragment stdout must contain
	}{
		{"impl clean", []string{"validate", "../../impl"}, exitPass, ""},
		{"bad corpus", []string{"validate", "../../validate/testdata/bad"}, exitGateFail, "lua/key-from-argv"},
		{"unknown dir", []string{"validate", "/nonexistent/dir"}, exitUsage, ""},
		{"bad flag", []string{"validate", "--nope"}, exitUsage, ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := runValidateForTest(c.args, &out, &errb)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr=%s", c.name, code, c.code, errb.String())
		}
		if !strings.Contains(out.String(), c.out) {
			t.Errorf("%s: stdout lacks %q: %s", c.name, c.out, out.String())
		}
	}
}

// --sarif writes one SARIF 2.1.0 log to stdout.
func TestValidateSARIFFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runValidateForTest([]string{"validate", "--sarif", "../../validate/testdata/bad"}, &out, &errb); code != exitGateFail {
		t.Fatalf("exit %d, want %d: %s", code, exitGateFail, errb.String())
	}
	var log struct {
		Version string            `json:"version"`
		Runs    []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("bad sarif (%v): %s", err, out.String())
	}
}

// runValidateForTest dispatches like main.go's run would once `case "validate":` is wired,
// so these tests do not depend on that one-line edit.
func runValidateForTest(args []string, stdout, stderr *bytes.Buffer) int {
	err := cmdValidate(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, errUsage):
		return exitUsage
	default:
		return exitGateFail
	}
}

// The command table comes from a server: a throwaway valkey-server by default, --server
// when given; --hand, or a server that cannot be reached, falls back to the hand table
// and says so.
func TestValidateCommandTableSource(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // fragment stderr must contain
	}{
		{"hand", []string{"validate", "--hand", "../../impl"}, "command table: hand (fallback: --hand)"},
		{"unreachable server", []string{"validate", "--server", "127.0.0.1:1", "../../impl"}, "using the hand table"},
		{"no valkey-server binary", []string{"validate", "--valkey-server", "/nonexistent/valkey-server", "../../impl"}, "using the hand table"},
	}
	if _, err := exec.LookPath("valkey-server"); err == nil {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"throwaway server", []string{"validate", "../../impl"}, "command table: server 127.0.0.1:"})
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := runValidateForTest(c.args, &out, &errb); code != exitPass {
			t.Errorf("%s: exit %d; stderr=%s", c.name, code, errb.String())
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: stderr lacks %q: %s", c.name, c.want, errb.String())
		}
		if strings.Contains(errb.String(), "disagrees") {
			t.Errorf("%s: %s", c.name, errb.String())
		}
	}
}
