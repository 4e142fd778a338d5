package mutate

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/report"
)

// TestBuildSuites: suites build in one go command into <dir>/<name>.test,
// or one by one when two share a last path element; either way each
// package's binary is its own (it lists its own test).
func TestBuildSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles three test binaries")
	}
	root := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/m\n\ngo 1.21\n",
		"s/a/a_test.go":   "package a\n\nimport \"testing\"\n\nfunc TestInA(t *testing.T) {}\n",
		"s/b/b_test.go":   "package b\n\nimport \"testing\"\n\nfunc TestInB(t *testing.T) {}\n",
		"s/c/a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestInCA(t *testing.T) {}\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pkgs []string
		want map[string]string
	}{
		{[]string{"./s/a", "./s/b"}, map[string]string{"./s/a": "TestInA", "./s/b": "TestInB"}},
		{[]string{"./s/a", "./s/c/a"}, map[string]string{"./s/a": "TestInA", "./s/c/a": "TestInCA"}},
	} {
		s, err := buildSuites(context.Background(), root, filepath.Join(t.TempDir(), "bin"), tc.pkgs, []string{"-vet=off"}, io.Discard)
		if err != nil {
			t.Fatalf("build %v: %v", tc.pkgs, err)
		}
		for pkg, test := range tc.want {
			out, err := exec.Command(s.bins[pkg], "-test.list", ".").Output()
			if err != nil || strings.TrimSpace(string(out)) != test {
				t.Errorf("%v: %s's binary %s lists %q (%v), want %s", tc.pkgs, pkg, s.bins[pkg], out, err, test)
			}
		}
	}
	if together([]string{"./s/a"}) || together([]string{"./s/a", "./s/c/a"}) || !together([]string{"./s/a", "./s/b"}) {
		t.Error("together: one package, or two named a, must build one by one")
	}
}

// A suite process that dies of a panic before writing its report is a
// SuiteCrash carrying the panic and its stack, so the Go runner can score
// a crash in the mutated package (confirmed by a second run) as a kill; a
// process that dies without a panic stays a plain error.
func TestSuiteCrash(t *testing.T) {
	dir := t.TempDir()
	crash := filepath.Join(dir, "crash.sh")
	script := "#!/bin/sh\necho 'Running Suite: presence'\necho 'panic: runtime error: invalid memory address or nil pointer dereference' >&2\n" +
		"echo '[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6a1b2c]' >&2\necho >&2\n" +
		"echo 'goroutine 812 [running]:' >&2\necho 'github.com/slotgate/slotgate/impl/presence.(*Store).readPart(0xc000, {0x0, 0x0})' >&2\n" +
		"echo '\t/tmp/copy/impl/presence/presence.go:201 +0x1c' >&2\nexit 2\n"
	silent := filepath.Join(dir, "silent.sh")
	for p, body := range map[string]string{crash: script, silent: "#!/bin/sh\necho 'killed'\nexit 2\n"} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &Suites{Root: dir, bins: map[string]string{"./crash": crash, "./silent": silent}}
	for _, pkg := range []string{"./crash", "./silent"} {
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := RunArgs{JSON: filepath.Join(dir, "report.json"), Timeout: time.Minute}
	_, err := s.Run(context.Background(), Stage{Pkg: "./crash", Rows: []report.RowID{report.RowPresenceMGet}}, args)
	var c *SuiteCrash
	if !errors.As(err, &c) {
		t.Fatalf("a panicking suite: %v, want a SuiteCrash", err)
	}
	if !c.In("impl/presence") || c.In("impl/registry") || c.In("impl/pres") {
		t.Errorf("SuiteCrash.In: presence %v, registry %v, pres %v; want true, false, false\n%s", c.In("impl/presence"), c.In("impl/registry"), c.In("impl/pres"), c.Panic)
	}
	if !strings.Contains(c.Error(), "invalid memory address") {
		t.Errorf("error %q does not name the panic", c.Error())
	}
	if k := (Kill{Check: "suite", Message: c.Error()}); !k.Crashed() {
		t.Errorf("the kill a crash decides (%q) does not read as a crash", c.Error())
	}
	if k := (Kill{Check: "suite", Message: "suite ./crash: a spec failed"}); k.Crashed() {
		t.Error("a suite-level failure reads as a crash")
	}
	_, err = s.Run(context.Background(), Stage{Pkg: "./silent", Rows: []report.RowID{report.RowPresenceMGet}}, args)
	if err == nil || errors.As(err, &c) {
		t.Fatalf("a suite that died without a panic: %v, want a plain error", err)
	}
}
