package mutate

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
