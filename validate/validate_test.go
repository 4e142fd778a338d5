package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every known-bad fixture names, on its first line, the rule(s) it must trip; each must trip
// exactly those (a fixture that trips something else is mislabelled, one that trips nothing
// is a blind spot of the validator).
func TestValidateBadCorpus(t *testing.T) {
	entries, err := Corpus("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	var lua, goFiles int
	for _, e := range entries {
		if strings.HasSuffix(e.File, ".go") {
			goFiles++
		} else {
			lua++
		}
		if !e.Flagged() {
			t.Errorf("%s: want exactly %v, got %v", e.File, e.Want, e.Got)
		}
	}
	t.Logf("bad corpus: %d fixtures (%d Lua, %d Go), all flagged with their named rules", len(entries), lua, goFiles)
	// Every rule has at least one fixture that trips it.
	for _, r := range Rules {
		found := false
		for _, e := range entries {
			found = found || slices.Contains(e.Want, r.ID)
		}
		if !found {
			t.Errorf("rule %s has no bad fixture", r.ID)
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

// The Go rule: what it must flag and what it must accept, line by line.
func TestValidateGoRule(t *testing.T) {
	src := `package x

import (
	"fmt"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/presence"
)

var (
	bad = client.NewCmd("MGET", []string{a, b})
	tag = client.NewCmd("MGET", []string{"{s}:lease", "{s}:gen"})
	one = client.NewCmd("GET", []string{a})
	lit = client.Cmd{Prefix: []string{"MGET"}, Keys: []string{"x", "y"}}
	//slotgate:same-slot both from one fencing.NewKeys call
	ann = client.NewCmd("MGET", []string{k.Lease, k.Gen})
)

func f(ctx context.Context, p client.Pool, s *client.Script, keys []string, c, id string) {
	client.RunScript(ctx, p, s, keys)
	client.RunScript(ctx, p, s, []string{"{" + c + ":" + id + "}:lease", "{" + c + ":" + id + "}:generation"})
	client.RunScript(ctx, p, s, []string{fmt.Sprintf("t:{c:%s}:lease", id), fmt.Sprintf("t:{c:%s}:gen", id)})
	client.RunScript(ctx, p, s, []string{fmt.Sprintf("t:{c:%s}:lease", id), fmt.Sprintf("t:{c}:%s:gen", id)})
	pair := []string{"a", "b"}
	client.RunScript(ctx, p, s, pair)
	//slotgate:disabled-mode-only backfill runs only with cluster mode disabled (spec 000 §The protocol)
	client.RunScript(ctx, p, s, pair)
	made := make([]string, 2)
	made[0], made[1] = "a", "b"
	p.Do(ctx, client.NewCmd("DEL", made))
	presence.MGet(ctx, p, keys)
	p.Do(ctx, client.NewCmd("MGET", []string{id, id}))
	p.Do(ctx, client.NewCmd("EVAL", []string{"x", "y"}))
}
`
	got, err := CheckGo("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]Rule{
		11: RuleMultiKeyCmd, // bad: two names, nothing proves one slot
		14: RuleMultiKeyCmd, // lit: two literals of different slots
		20: RuleRuntimeKeys, // keys is a parameter: built at run time by some caller
		30: RuleRuntimeKeys, // made to length and written element by element
		21: RuleScriptKeys,  // "{" + c: c may start with "}", and an empty tag hashes the whole key
		23: RuleScriptKeys,  // the mis-tagged pair
		25: RuleScriptKeys,  // followed through a variable
		33: RuleScriptKeys,  // NewCmd("EVAL", …) is a script call
	}
	gotLines := map[int]Rule{}
	for _, f := range got {
		gotLines[f.Line] = f.Rule
	}
	for line, rule := range want {
		if gotLines[line] != rule {
			t.Errorf("line %d: want %s, got %q", line, rule, gotLines[line])
		}
	}
	for _, f := range got {
		if want[f.Line] == "" {
			t.Errorf("unexpected %s", f)
		}
	}
}

// Pipelines may be declared per-key scatters; one command and a transaction may not.
func TestValidateGoScatter(t *testing.T) {
	src := `package x

import "github.com/redis/go-redis/v9"

func f(ctx context.Context, rdb redis.UniversalClient, a, b string) {
	//slotgate:per-key-scatter every GET's error is read from its own Cmd
	rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, a)
		p.Get(ctx, b)
		return nil
	})
	rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "{u1}:n")
		p.Expire(ctx, "{u1}:n", 0)
		return nil
	})
	//slotgate:per-key-scatter no
	rdb.MGet(ctx, a, b)
}
`
	got, err := CheckGo("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Rule != RuleGoAnnotation || got[0].Line != 17 || got[1].Rule != RuleMultiKeyCmd || got[1].Line != 18 {
		t.Fatalf("want a misplaced annotation at 17 and the MGet at 18, got %v", got)
	}
}

// The slot proofs: equal only when the hash tags provably are.
func TestSlotProof(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`"{s}:a"`, `"{s}:b"`, true},
		{`"x"`, `"y"`, false},
		{`"{s}:a"`, `"q{s}"`, true},
		{`"t:{" + c + "}:a"`, `"t:{" + c + "}:b"`, false}, // c may be empty
		{`"t:{x" + c + "}:a"`, `"t:{x" + c + "}:b"`, true},
		{`"t:{x" + c + "}:a"`, `"t:{x" + d + "}:b"`, false},
		{`fmt.Sprintf("t:{c:%s}:a", id)`, `"t:{c:" + id + "}:b"`, true},
		{`fmt.Sprintf("%s:{c}:a", id)`, `"{c}"`, false}, // id may hold a "{"
		{`fmt.Sprintf("t:{c}:%s", id)`, `"{c}:z"`, true},
		{`k.Lease`, `k.Lease`, true},
		{`k.Lease`, `k.Gen`, false},
		{`f()`, `f()`, false},
	} {
		a, err := parser.ParseExpr(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parser.ParseExpr(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := sameSlot([]ast.Expr{a, b}); got != tc.same {
			t.Errorf("%s, %s: sameSlot %t, want %t", tc.a, tc.b, got, tc.same)
		}
	}
}

// The key table the runtime twin shares.
func TestCommandKeys(t *testing.T) {
	for _, tc := range []struct {
		wire  []string
		keys  []string
		known bool
	}{
		{[]string{"MGET", "a", "b"}, []string{"a", "b"}, true},
		{[]string{"set", "k", "v", "PX", "10"}, []string{"k"}, true},
		{[]string{"MSET", "a", "1", "b", "2"}, []string{"a", "b"}, true},
		{[]string{"EVALSHA", "abc", "2", "k1", "k2", "arg"}, []string{"k1", "k2"}, true},
		{[]string{"EVAL", "src", "0", "arg"}, nil, true},
		{[]string{"EVAL", "src", "3", "k"}, nil, false},
		{[]string{"PUBLISH", "ch", "m"}, nil, true},
		{[]string{"SCAN", "0"}, nil, false},
	} {
		keys, known := CommandKeys(tc.wire)
		if known != tc.known || !slices.Equal(keys, tc.keys) {
			t.Errorf("%v: got %v %t, want %v %t", tc.wire, keys, known, tc.keys, tc.known)
		}
	}
}

// A Lua declaration waives only what the validator cannot see, and only with a reason.
func TestValidateLuaAnnotation(t *testing.T) {
	ok := "-- slotgate:allow lua/unknown-command OBJECT FREQ reads KEYS[1] only\nreturn redis.call('OBJECT', 'FREQ', KEYS[1])"
	if got := CheckLua("ok.lua", ok, 1); len(got) != 0 {
		t.Fatalf("declared unknown command: unexpected %v", got)
	}
	same := "return redis.call('OBJECT', 'FREQ', KEYS[1]) -- slotgate:allow lua/unknown-command reads KEYS[1] only"
	if got := CheckLua("same.lua", same, 1); len(got) != 0 {
		t.Fatalf("same-line declaration: unexpected %v", got)
	}
	far := "-- slotgate:allow lua/unknown-command reads KEYS[1] only\n\nreturn redis.call('OBJECT', 'FREQ', KEYS[1])"
	if got := CheckLua("far.lua", far, 1); len(got) != 1 || got[0].Rule != RuleUnknownCommand {
		t.Fatalf("a declaration two lines above applies to nothing: got %v", got)
	}
}
