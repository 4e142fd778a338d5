package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI reads the suites' results and the row catalogue, never their test
// framework: only suites/ assert (issue 16), and a binary that links Ginkgo
// and Gomega drags their init-time flags and globals into every command.
func TestCLILinksNoGinkgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "onsi/ginkgo") || strings.Contains(dep, "onsi/gomega") || strings.HasSuffix(dep, "/suites/harness") {
			t.Errorf("cmd/slotgate links %s", dep)
		}
	}
}

// The one-way import rule of docs/ARCHITECTURE.md, checked over the whole
// module so the picture stays true: the code under test (impl) links
// nothing of the harness, the persisted format and the checkers reach no
// workload, fault or fixture, workloads never judge, and a row's own
// checker package links no client library (it must judge a stored history
// offline, with nothing of the system under test).
func TestImportRules(t *testing.T) {
	const mod = "github.com/slotgate/slotgate/"
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	// A failing go list (an import cycle a forbidden import made, say)
	// fails the rule check, never skips it.
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	harness := []string{"check", "history", "report", "traffic", "fault", "fixtures", "runenv", "suites", "rows", "model", "validate", "mutate", "recheck", "sizing", "cmd"}
	rules := []struct {
		pkg        string   // a package and the packages under it
		transitive bool     // judge Deps, not only direct Imports
		forbidden  []string // module-relative prefixes, or a module path
	}{
		{"impl", true, harness},
		{"history", false, []string{"check", "traffic", "fault", "fixtures", "report", "suites", "rows", "recheck"}},
		{"check", false, []string{"traffic", "fault", "fixtures", "report", "suites", "rows", "recheck"}},
		{"report", false, []string{"impl", "check", "traffic", "fault", "fixtures", "suites", "rows", "recheck"}},
		{"traffic", false, []string{"check", "suites", "rows", "report"}},
		{"fault", false, []string{"check", "traffic", "suites", "rows", "report"}},
		{"fixtures", false, []string{"check", "history", "traffic", "fault", "suites", "rows", "report"}},
		{"rows/clientsurface/judge", true, []string{"github.com/redis/go-redis", "github.com/valkey-io/valkey-go", "impl"}},
	}
	under := func(path, prefix string) bool {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	checked := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			continue
		}
		pkg := strings.TrimPrefix(parts[0], mod)
		for _, r := range rules {
			if !under(pkg, r.pkg) {
				continue
			}
			checked[r.pkg] = true
			deps := strings.Fields(parts[1])
			if r.transitive {
				deps = strings.Fields(parts[2])
			}
			for _, d := range deps {
				rel := strings.TrimPrefix(d, mod)
				for _, f := range r.forbidden {
					if under(rel, f) || strings.HasPrefix(d, f) {
						t.Errorf("%s imports %s (rule: %s must not reach %s)", pkg, d, r.pkg, f)
					}
				}
			}
		}
	}
	for _, r := range rules {
		if !checked[r.pkg] {
			t.Errorf("rule for %s matched no package: the rule is stale", r.pkg)
		}
	}
}
