package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The CLI reads the suites' results and the row catalogue, never their test
// framework: only suites/ assert, and a binary that links Ginkgo
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
	clientLibraries := []string{"github.com/redis/go-redis", "github.com/valkey-io/valkey-go"}
	harness := []string{"check", "history", "report", "traffic", "fault", "fixtures", "runenv", "suites", "rows", "model", "validate", "mutate", "recheck", "sizing", "cmd"}
	rules := []struct {
		pkg        string   // a package and the packages under it
		transitive bool     // judge Deps, not only direct Imports
		forbidden  []string // module-relative prefixes, or a module path
	}{
		{"impl", true, harness},
		{"history", false, []string{"check", "traffic", "fault", "fixtures", "report", "suites", "rows", "recheck", "model"}},
		{"check", false, []string{"traffic", "fault", "fixtures", "report", "suites", "rows", "recheck"}},
		{"report", false, []string{"impl", "check", "traffic", "fault", "fixtures", "suites", "rows", "recheck"}},
		{"traffic", false, []string{"check", "suites", "rows", "report"}},
		{"fault", false, []string{"check", "traffic", "suites", "rows", "report"}},
		{"fixtures", false, []string{"check", "history", "traffic", "fault", "suites", "rows", "report"}},
		{"rows/clientsurface/judge", true, append([]string{"fixtures", "fault", "traffic", "suites", "impl/client", "impl/fencing/lua"}, clientLibraries...)},
		{"rows/routing/judge", true, append([]string{"fixtures", "fault", "traffic", "suites", "impl/client", "impl/routing"}, clientLibraries...)},
		{"rows/failuredrills/judge", true, append([]string{"fixtures", "fault", "traffic", "suites", "impl/client", "impl/routing", "impl/pubsub"}, clientLibraries...)},
		{"rows/fencingmigration/judge", true, append([]string{"fixtures", "fault", "traffic", "suites", "impl/client", "impl/fencing/lua"}, clientLibraries...)},
		// The judging core links no client library: what it judges is
		// the stored history, and the protocol's vocabulary it needs is
		// impl/fencing/protocol's plain values.
		{"history", true, clientLibraries},
		{"check", true, clientLibraries},
		{"model", true, clientLibraries},
		{"recheck", true, clientLibraries},
		{"report", true, clientLibraries},
		{"impl/gate", true, clientLibraries},
		{"impl/fencing/protocol", true, clientLibraries},
		// The one poll loop is a leaf: the standard library only.
		{"internal/wait", true, append([]string{"impl", "github.com/"}, harness...)},
		// Every row's judge: "*" stands for one path element.
		{"rows/*/judge", true, clientLibraries},
	}
	under := func(path, prefix string) bool {
		if strings.Contains(prefix, "*") {
			n := strings.Count(prefix, "/") + 1
			if parts := strings.SplitN(path, "/", n+1); len(parts) >= n {
				if ok, _ := filepath.Match(prefix, strings.Join(parts[:n], "/")); ok {
					return true
				}
			}
			return false
		}
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

// TestCLILinksEveryRowJudge: a row's checkers are defined by its judge
// package, so a judge the CLI does not link leaves that row's stored
// judgements unreplayable offline ("not registered for replay").
func TestCLILinksEveryRowJudge(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	judges, err := filepath.Glob(filepath.Join("..", "..", "rows", "*", "judge"))
	if err != nil || len(judges) == 0 {
		t.Fatalf("no rows/*/judge packages (%v)", err)
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, j := range judges {
		pkg := "github.com/slotgate/slotgate/rows/" + filepath.Base(filepath.Dir(j)) + "/judge"
		if !slices.Contains(deps, pkg) {
			t.Errorf("slotgate does not link %s: import it in cmd/slotgate/judges.go", pkg)
		}
	}
}
