package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The suites are built once and kept: a second run with nothing changed
// reuses the binary (the go command does not relink a current one), and
// each run executes its own hard-linked snapshot, removed after it.
func TestBuildSuitesKeepsCurrentBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a suite")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkg := "./rows/axioms"
	build := func() (*suiteBinaries, os.FileInfo) {
		t.Helper()
		b, err := buildSuites(root, []string{pkg}, os.Environ(), clientLinkFlags(root, os.Environ()), false, io.Discard, io.Discard)
		if err != nil || b == nil {
			t.Fatalf("build: %v (binaries %v)", err, b)
		}
		st, err := os.Stat(filepath.Join(root, suiteBinDir, "axioms.test"))
		if err != nil {
			t.Fatal(err)
		}
		return b, st
	}
	first, st1 := build()
	first.remove()
	if fileExists(first.dir) {
		t.Errorf("the run's snapshot %s outlived remove", first.dir)
	}
	second, st2 := build()
	defer second.remove()
	// A relink writes a new file (the go command removes the old one
	// first); a current binary is only touched.
	if ino1, ino2 := st1.Sys().(*syscall.Stat_t).Ino, st2.Sys().(*syscall.Stat_t).Ino; ino1 != ino2 {
		t.Errorf("the current binary was rewritten: inode %d then %d", ino1, ino2)
	}
	snap, err := os.Stat(second.path(pkg))
	if err != nil {
		t.Fatalf("the run's snapshot: %v", err)
	}
	if !os.SameFile(snap, st2) || filepath.Dir(second.path(pkg)) == filepath.Join(root, suiteBinDir) {
		t.Errorf("the run executes %s, not a snapshot of the shared binary", second.path(pkg))
	}
	if got := second.path("./suites/unbuilt"); got != "./suites/unbuilt" {
		t.Errorf("a package not built here runs as %q; want the package, for Ginkgo to compile", got)
	}
}

// The suites record the client versions the module links, as the go
// command reports them: a test binary carries no dependency build info.
func TestClientLinkFlagsNameTheLinkedVersions(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	flags := clientLinkFlags(root, os.Environ())
	for module, variable := range map[string]string{"github.com/redis/go-redis/v9": "linkedGoRedis", "github.com/valkey-io/valkey-go": "linkedValkeyGo"} {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "-X github.com/slotgate/slotgate/impl/client." + variable + "=" + strings.TrimSpace(string(out))
		if !strings.Contains(flags, want) {
			t.Errorf("link flags %q lack %q", flags, want)
		}
	}
}
