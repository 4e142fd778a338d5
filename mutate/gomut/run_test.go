package gomut

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCopyNeverWritesTheTree: the copy is hard links, and writing the
// mutant must unlink, not write through, or the working tree is mutated.
func TestCopyNeverWritesTheTree(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"go.mod": "module example.com/x\n", "a/a.go": "package a\n", "bin/tool": "x",
		".git/HEAD": "ref", "slotgate-report/results.json": "{}", "out/results.json": "{}",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir, release, err := acquireCopyDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dir2, release2, err := acquireCopyDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir == dir2 {
		t.Fatalf("two holders share %s", dir)
	}
	release2()
	if err := copyTree(root, dir, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin", ".git", "slotgate-report", "out"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("copy has %s", p)
		}
	}
	if err := writeMutant(dir, Mutant{File: "a/a.go", Content: []byte("package a // mutated\n")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a/a.go")); string(b) != "package a\n" {
		t.Fatalf("working tree written through the link: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/a.go")); string(b) != "package a // mutated\n" {
		t.Fatalf("copy not mutated: %q", b)
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("copy left behind: %v", err)
	}
	os.RemoveAll(filepath.Dir(dir))
}

// TestRunMeasure runs real mutants end to end (minutes each; not part of
// make test): GOMUT_RUN is a comma list of mutant IDs, or "sample:N:SEED"
// over DefaultTargets. It logs, per mutant, the wall time and the checks
// that failed (the kill), read from results.json.
func TestRunMeasure(t *testing.T) {
	spec := os.Getenv("GOMUT_RUN")
	if spec == "" {
		t.Skip("GOMUT_RUN not set")
	}
	root, _ := filepath.Abs("../..")
	var ms []Mutant
	if rest, ok := strings.CutPrefix(spec, "sample:"); ok {
		n, seed, _ := strings.Cut(rest, ":")
		max, _ := strconv.Atoi(n)
		s, _ := strconv.ParseInt(seed, 10, 64)
		var err error
		if ms, err = Generate(root, DefaultTargets, max, s); err != nil {
			t.Fatal(err)
		}
	} else {
		all, err := Generate(root, DefaultTargets, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range strings.Split(spec, ",") {
			for _, m := range all {
				if m.ID == id {
					ms = append(ms, m)
				}
			}
		}
	}
	logDir := os.Getenv("GOMUT_LOGS")
	if logDir == "" {
		logDir = t.TempDir()
	}
	ctx := context.Background()
	start := time.Now()
	bin, err := BuildSlotgate(ctx, root, t.TempDir(), nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slotgate built in %v", time.Since(start).Round(time.Second))
	for i, m := range ms {
		var log bytes.Buffer
		start := time.Now()
		out := filepath.Join(logDir, fmt.Sprintf("m%02d", i))
		res, err := Run(ctx, root, m, RunArgs{OutDir: out, Stdout: &log, Stderr: &log, Slotgate: bin,
			ExtraArgs: strings.Fields(os.Getenv("GOMUT_ARGS"))})
		os.WriteFile(out+".log", log.Bytes(), 0o644)
		took := time.Since(start).Round(time.Second)
		if err != nil {
			t.Errorf("%s: %v (%v)", m.ID, err, took)
			continue
		}
		by, err := failedChecks(res)
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		verdict := "SURVIVED"
		if len(by) > 0 {
			verdict = "KILLED by " + strings.Join(by, "; ")
		}
		t.Logf("%s (%s, rows %v) %v: %s\n%s", m.ID, m.Operator, m.Rows, took, verdict, m.Diff)
	}
}

// failedChecks reads a results.json for the checks whose own verdict is
// fail (a blind control is not a kill). The mutate package's Killed is the
// real reader; this is the measurement test's.
func failedChecks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r struct {
		Cells []struct {
			Row, Column, Status string
			Checks              []struct {
				Scenario, Status, Message string
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range r.Cells {
		for _, k := range c.Checks {
			if k.Status == "fail" {
				msg := k.Message
				if len(msg) > 160 {
					msg = msg[:160] + "…"
				}
				out = append(out, c.Row+"/"+c.Column+"/"+k.Scenario+": "+msg)
			}
		}
	}
	return out, nil
}
