package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// slotgate mutate refuses bad input with exit 2 and a message naming it,
// before compiling or starting anything.
func TestMutateBadInputExitsTwo(t *testing.T) {
	badManifest := t.TempDir()
	if err := os.WriteFile(filepath.Join(badManifest, "manifest.json"), []byte(`{"scripts":[{"file":"x.lua","op":"acquire","phase":"c"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown row", []string{"mutate", "--row", "nope"}, `unknown row "nope"`},
		{"row without scripts", []string{"mutate", "--row", "axioms"}, "runs the fencing scripts"},
		{"missing dir", []string{"mutate", "--scripts", "/nonexistent/set"}, "no such file"},
		{"no manifest", []string{"mutate", "--scripts", t.TempDir()}, "manifest.json"},
		{"bad manifest", []string{"mutate", "--scripts", badManifest}, "phase c is incomplete"},
		{"bad kind", []string{"mutate", "--kind", "rust"}, `--kind "rust"`},
		{"bad min-kill", []string{"mutate", "--min-kill", "2"}, "--min-kill"},
		{"missing server", []string{"mutate", "--server", "/nonexistent/valkey-server"}, "find server"},
		{"unknown id", []string{"mutate", "--list", "--id", "c/acquire.lua:1:x:000000"}, "no such mutant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want 2\nstderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("message %q does not contain %q", stderr.String(), c.want)
			}
		})
	}
}

// --list generates every Lua mutant of the embedded set, deterministically,
// and the smoke profile samples 40 of them.
func TestMutateList(t *testing.T) {
	var a, b, stderr bytes.Buffer
	if code := run([]string{"mutate", "--list", "--profile", "full"}, &a, &stderr); code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	run([]string{"mutate", "--list", "--profile", "full"}, &b, &stderr)
	if a.String() != b.String() || !strings.Contains(a.String(), "c/acquire.lua:") {
		t.Fatal("mutant list is empty or not deterministic")
	}
	var smoke bytes.Buffer
	run([]string{"mutate", "--list"}, &smoke, &stderr)
	if !strings.Contains(smoke.String(), "40 mutants") {
		t.Fatalf("smoke sample: %s", smoke.String()[max(0, smoke.Len()-80):])
	}
	if err := run([]string{"mutate", "--help"}, &smoke, &stderr); err != exitPass {
		t.Fatal("mutate --help did not exit 0")
	}
}

// TestGenerateGoReportsSchemataFailure: a module without the targets must
// fail the generation loudly, with or without schemata (the schemata
// branch once lost GenerateSchemata's error to a shadowed err and returned
// zero mutants).
func TestGenerateGoReportsSchemataFailure(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/empty\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, schemata := range []bool{true, false} {
		if ms, _, err := generateGo(root, []report.RowID{report.RowRegistry}, 1, schemata); err == nil {
			t.Errorf("generateGo(schemata=%v) on a module without the targets = %d mutants, nil error; want an error", schemata, len(ms))
		}
	}
}
