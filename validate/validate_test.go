package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every known-bad fixture names, on its first line, the rule it must trip; each must be
// flagged, and only with that rule (a fixture that trips something else is mislabelled).
func TestValidateBadCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad fixtures: %v", err)
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		want, ok := strings.CutPrefix(first, "-- want: ")
		if !ok {
			t.Errorf("%s: first line must be `-- want: <rule>`, got %q", path, first)
			continue
		}
		want = strings.TrimSpace(want)
		got := CheckLua(path, string(src), 1)
		if len(got) == 0 {
			t.Errorf("%s: want %s, got no finding", path, want)
		}
		for _, f := range got {
			if string(f.Rule) != want {
				t.Errorf("%s: want only %s, got %s", path, want, f)
			}
		}
	}
}

// The shipped scripts (A/B legitimately declare four keys) and Lua embedded in impl's Go
// must be clean: the validator may not cry wolf on the system under test.
func TestValidateImplClean(t *testing.T) {
	start := time.Now()
	res, err := Dirs([]string{"../impl"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("impl: %d files in %s", res.Files, time.Since(start))
	if res.Files == 0 {
		t.Fatal("no files examined under ../impl")
	}
	for _, f := range res.Findings {
		t.Errorf("false positive: %s", f)
	}
}

// Patterns that are provably declared keys must pass.
func TestValidateGoodPatterns(t *testing.T) {
	good := []string{
		`return redis.call('GET', KEYS[1])`,
		`local k = KEYS[1] return redis.call('DEL', k)`,
		"local a, b = KEYS[1], KEYS[2]\nreturn redis.call('MGET', a, b)",
		"for _, k in ipairs({KEYS[3], KEYS[1]}) do redis.call('DEL', k) end",
		"for _, k in ipairs(KEYS) do redis.call('DEL', k) end",
		"for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end",
		`return redis.call('DEL', unpack(KEYS))`,
		`return redis.call('MSET', KEYS[1], ARGV[1], KEYS[2], ARGV[2])`,
		`return redis.call('SET', KEYS[#KEYS], ARGV[1], 'PX', ARGV[2])`,
		`return redis.call('PING')`,
		`return redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])`,
		"local x = [[redis.call('GET', ARGV[1])]] -- redis.call('GET', 'lit')\nreturn x",
	}
	for _, src := range good {
		if got := CheckLua("good.lua", src, 1); len(got) != 0 {
			t.Errorf("%q: unexpected %v", src, got)
		}
	}
}

// A missing directory is bad input, not a clean run.
func TestValidateUnknownDir(t *testing.T) {
	if _, err := Dirs([]string{"testdata/nope"}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("want ErrBadInput, got %v", err)
	}
}

// Lua embedded in Go strings is checked and reported at the Go line.
func TestValidateGoEmbedded(t *testing.T) {
	src := "package x\n\nconst ok = `return redis.call('GET', KEYS[1])`\n\nconst bad = \"return redis.call('GET', ARGV[1])\"\n"
	got, err := CheckGo("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rule != RuleKeyFromARGV || got[0].Line != 5 {
		t.Fatalf("want one %s at x.go:5, got %v", RuleKeyFromARGV, got)
	}
}

// The SARIF log is valid JSON, version 2.1.0, one result per finding with its rule declared.
func TestValidateSARIF(t *testing.T) {
	fs := CheckLua("bad.lua", "return redis.call('GET', ARGV[1])", 1)
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, fs); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 ||
		log.Runs[0].Results[0].RuleID != string(RuleKeyFromARGV) || len(log.Runs[0].Tool.Driver.Rules) != len(Rules) {
		t.Fatalf("bad sarif: %s", buf.String())
	}
}

// Time the whole repository (testdata skipped) so a CI budget can be set from data.
func TestValidateWholeRepoRuntime(t *testing.T) {
	start := time.Now()
	res, err := Dirs([]string{".."})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("whole repo: %d files, %d findings in %s", res.Files, len(res.Findings), time.Since(start))
	for _, f := range res.Findings {
		t.Logf("  %s", f)
	}
}

// The Go rule flags an un-annotated multi-key command and accepts one hash tag or an annotation.
func TestValidateGoMultiKeyCmd(t *testing.T) {
	src := `package x

import "github.com/slotgate/slotgate/impl/client"

var (
	bad  = client.NewCmd("MGET", []string{a, b})
	tag  = client.NewCmd("MGET", []string{"{s}:lease", "{s}:gen"})
	one  = client.NewCmd("GET", []string{a})
	lit  = client.Cmd{Prefix: []string{"MGET"}, Keys: []string{"x", "y"}}
	//slotgate:same-slot both from one fencing.NewKeys call
	ann  = client.NewCmd("MGET", []string{k.Lease, k.Gen})
	//slotgate:per-key-scatter
	why  = client.NewCmd("MGET", []string{a, b})
	//slotgate:per-key-scatter each key read alone, partial failure reported per key
	sc   = client.NewCmd("MGET", []string{a, b})
)
`
	got, err := CheckGo("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range got {
		if f.Rule != RuleMultiKeyCmd {
			t.Errorf("unexpected %s", f)
		}
		lines = append(lines, f.Line)
	}
	// bad (6), lit (9), and the scatter annotation without a reason (13).
	if want := []int{6, 9, 13}; len(lines) != len(want) || lines[0] != 6 || lines[1] != 9 || lines[2] != 13 {
		t.Fatalf("flagged lines %v, want %v: %v", lines, want, got)
	}
}
