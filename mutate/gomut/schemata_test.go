package gomut

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureSchemaPkg is mutate/schema as the fixture module would import it
// (the test copies its source there).
func fixtureSchemaPkg(t *testing.T) SchemaPkg {
	t.Helper()
	dir, err := filepath.Abs("../schema")
	if err != nil {
		t.Fatal(err)
	}
	return SchemaPkg{Path: "example.com/fixture/slotgateschema", Dir: dir}
}

// TestSchemataFixture: every fixture mutant but the removed LIMIT clause
// (an argument count no expression can switch) compiles into the schemata,
// each operator as its schema, and the ids are Generate's.
func TestSchemataFixture(t *testing.T) {
	ms, sch, err := GenerateSchemata(fixture(t), []Target{fixtureTarget}, 0, 1, fixtureSchemaPkg(t))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Generate(fixture(t), []Target{fixtureTarget}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != len(ms) {
		t.Fatalf("GenerateSchemata gave %d mutants, Generate %d", len(ms), len(plain))
	}
	for i := range ms {
		if ms[i].ID != plain[i].ID {
			t.Errorf("mutant %d: id %s, Generate's %s", i, ms[i].ID, plain[i].ID)
		}
	}
	var fallback []string
	for i, m := range ms {
		label := siteLabel(ms, i)
		if why, ok := sch.Fallback[m.ID]; ok {
			fallback = append(fallback, label)
			t.Logf("fallback %s: %s", label, why)
			continue
		}
		if !sch.In[m.ID] {
			t.Errorf("%s neither in the schemata nor a fallback", label)
		}
	}
	if strings.Join(fallback, ",") != "Query:drop-bound#2" {
		t.Errorf("fallbacks %v, want only the LIMIT removal Query:drop-bound#2", fallback)
	}
	src := string(sch.Files["guard/guard.go"])
	for _, want := range []string{
		`package guard; import slotgatemutant "example.com/fixture/slotgateschema"`,
		`if slotgatemutant.Not("guard:Admit:negate-cond:`,
		`slotgatemutant.Lt("guard:Admit:swap-cmp:`,
		`slotgatemutant.Ne("guard:Admit:swap-cmp:`,
		`if (err != nil) && !slotgatemutant.On("guard:Load:drop-err-return:`,
		`slotgatemutant.Pick("guard:Query:drop-bound:`,
		`slotgatemutant.Pick[time.Duration]("guard:Renew:ttl-off-by-one:`,
		`if slotgatemutant.On("guard:Notify:chan-drop:`,
		`if Mutant == "open" {`, // a control stays as it is
	} {
		if !strings.Contains(src, want) {
			t.Errorf("schema lacks %q:\n%s", want, src)
		}
	}
	// No line moves (the import sits on the package clause's line, only
	// chan-drop's schemata span lines), and a located span starts at the
	// same code as the original's: coverage of the schemata build is read
	// against it.
	for _, m := range ms {
		if !sch.In[m.ID] {
			continue
		}
		loc := sch.Locate(m)
		orig := lineOf(t, fixture(t), m.File, m.Span.StartLine)
		got := strings.Split(src, "\n")[loc.Span.StartLine-1]
		if m.Operator != OpChanDrop && loc.Span.StartLine != m.Span.StartLine {
			t.Errorf("%s: moved from line %d to %d", m.ID, m.Span.StartLine, loc.Span.StartLine)
		}
		if a, b := orig[m.Span.StartCol-1:], got[loc.Span.StartCol-1:]; a[0] != b[0] {
			t.Errorf("%s: located at %q, the original at %q", m.ID, b, a)
		}
	}
}

func lineOf(t *testing.T, root, file string, line int) string {
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")[line-1]
}

// TestRenderNests: two schemata wrapping one literal (ttl ±1) nest, and a
// region's closing text comes before a later region's opening at one offset.
func TestRenderNests(t *testing.T) {
	src := []byte("x := a<b")
	es := []sedit{
		{at: 5, end: 5, text: "P1(", open: true, rs: 5, re: 8, seq: 1},
		{at: 8, end: 8, text: ")", rs: 5, re: 8, seq: 1},
		{at: 5, end: 5, text: "P2(", open: true, rs: 5, re: 8, seq: 2},
		{at: 8, end: 8, text: "]", rs: 5, re: 8, seq: 2},
		{at: 6, end: 7, text: ", ", seq: 2},
		{at: 5, end: 5, text: "Q(", open: true, rs: 5, re: 6, seq: 3},
		{at: 6, end: 6, text: ")", rs: 5, re: 6, seq: 3},
	}
	out, off := render(src, es)
	if want := "x := P1(P2(Q(a), b])"; string(out) != want {
		t.Fatalf("render = %q, want %q", out, want)
	}
	if out[off[5]] != 'a' || out[off[7]] != 'b' || off[8] != len(out) {
		t.Errorf("offsets %v do not map a, b and the end", off)
	}
	p := &posMap{origLines: lineStarts(src), newLines: lineStarts(out), off: off}
	if s := p.span(Span{1, 6, 1, 9}); s != (Span{1, 14, 1, 19}) {
		t.Errorf("span of a<b in the schema = %+v, want 1.14–1.19 (a … b)", s)
	}
}

// TestSchemataBehaveAsMutants is the schemata's own mutation check, on the
// fixture: a driver that calls every fixture function prints the same
// with SLOTGATE_MUTANT=<id> as the mutant built on its own, and with no
// mutant active the same as the original build. A schema that switched the
// wrong code, or nothing, or changed the code with every mutant off fails
// here. It compiles the fixture ~15 times (a few seconds; skipped in
// -short).
func TestSchemataBehaveAsMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture once per mutant")
	}
	sp := fixtureSchemaPkg(t)
	ms, sch, err := GenerateSchemata(fixture(t), []Target{fixtureTarget}, 0, 1, sp)
	if err != nil {
		t.Fatal(err)
	}
	// One copy of the fixture for the schemata, one per build on its own.
	build := func(name string, files map[string][]byte) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := copyTree(fixture(t), dir, ""); err != nil {
			t.Fatal(err)
		}
		schemaSrc, err := os.ReadFile(filepath.Join(sp.Dir, "schema.go"))
		if err != nil {
			t.Fatal(err)
		}
		files["slotgateschema/schema.go"] = schemaSrc
		files["drive/main.go"] = []byte(driver)
		for rel, b := range files {
			p := filepath.Join(dir, rel)
			_ = os.Remove(p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(dir, "drive.bin")
		cmd := exec.Command("go", "build", "-o", bin, "./drive")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	run := func(bin, active string) string {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "SLOTGATE_MUTANT="+active)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %s (%s): %v\n%s", bin, active, err, out.String())
		}
		return out.String()
	}
	schemata := build("schemata", func() map[string][]byte {
		m := map[string][]byte{}
		for k, v := range sch.Files {
			m[k] = v
		}
		return m
	}())
	original := run(build("original", map[string][]byte{}), "")
	if got := run(schemata, ""); got != original {
		t.Fatalf("schemata with no mutant active:\n%s\nwant the original's:\n%s", got, original)
	}
	if got := run(schemata, "guard:no-such:negate-cond:00000000"); got != original {
		t.Errorf("schemata with an unknown mutant active differ from the original")
	}
	seen := 0
	for i, m := range ms {
		if !sch.In[m.ID] {
			continue
		}
		alone := run(build("m"+strings.ReplaceAll(siteLabel(ms, i), ":", "_"), map[string][]byte{m.File: m.Content}), "")
		if alone != original {
			seen++
		}
		if got := run(schemata, m.ID); got != alone {
			t.Errorf("%s: schemata with it active:\n%s\nbuilt on its own:\n%s", m.ID, got, alone)
		}
	}
	// The driver must tell the mutants from the original, or the
	// comparison above proves nothing.
	if seen < len(sch.In)-1 {
		t.Errorf("the driver tells only %d of %d mutants from the original", seen, len(sch.In))
	}
}

// driver exercises every function of the fixture's guard package.
const driver = `package main

import (
	"fmt"
	"time"

	"example.com/fixture/guard"
)

func main() {
	for _, c := range []struct {
		n, l int
		s    string
	}{{1, 2, "a"}, {2, 2, "a"}, {3, 2, "a"}, {1, 2, ""}} {
		fmt.Println("Admit", c, guard.Admit(c.n, c.l, c.s))
	}
	for _, s := range []string{"", "abc"} {
		n, err := guard.Load(s)
		fmt.Println("Load", s, n, err)
	}
	fmt.Println("Query", guard.Query("k", "5"))
	fmt.Println("Renew", guard.Renew(12*time.Second))
	fmt.Println("Wrap", guard.Wrap(""), guard.Wrap("x"))
	full := func() chan int { ch := make(chan int, 1); ch <- 0; return ch }
	fmt.Println("Notify returns on a full channel", returns(func() { guard.Notify(full(), 1) }))
	fmt.Println("Wait returns on a full channel", returns(func() { guard.Wait(full(), make(chan struct{})) }))
	fmt.Println("Count", guard.Count([]int{1, 2, 3}))
}

func returns(f func()) bool {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(100 * time.Millisecond):
		return false
	}
}
`

// TestDefaultTargetsSchemata: every mutant of DefaultTargets compiles into
// the schemata (a fallback is built on its own: ~30 s, not ~0 s).
func TestDefaultTargetsSchemata(t *testing.T) {
	root, _ := filepath.Abs("../..")
	sp, err := DefaultSchemaPkg(root)
	if err != nil {
		t.Fatal(err)
	}
	ms, sch, err := GenerateSchemata(root, DefaultTargets, 0, 1, sp)
	if err != nil {
		t.Fatal(err)
	}
	for id, why := range sch.Fallback {
		t.Errorf("fallback %s: %s", id, why)
	}
	if len(sch.In)+len(sch.Fallback) != len(ms) {
		t.Errorf("%d in schemata + %d fallbacks, want %d mutants", len(sch.In), len(sch.Fallback), len(ms))
	}
	t.Logf("%d mutants, %d in %d schema files", len(ms), len(sch.In), len(sch.Files))
}
