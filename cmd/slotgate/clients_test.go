package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// olderGoRedis is a go-redis release older than go.mod's that impl builds
// against and the module proxy serves.
const olderGoRedis = "v9.17.3"

// A run pinned to an older go-redis builds its suites in a module copy and
// labels every cell, admission entry, the meta and the JUnit file with the
// version linked — never go.mod's; the working tree's go.mod is untouched.
func TestRunClientPinLabelsTheLinkedVersion(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	goMod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--client", "go-redis@" + olderGoRedis, "--row", "protocol", "--backend", "go-redis",
		"--profile", "smoke", "--out", out, "--quiet"}, &stdout, &stderr)
	if code != exitPass {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	want := "go-redis " + olderGoRedis
	for _, name := range []string{"results.json", "junit.xml", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not name %q", name, want)
		}
		for _, wrong := range []string{"go-redis v9.23", "version unknown"} {
			if strings.Contains(string(b), wrong) {
				t.Errorf("%s names %q: not the version linked", name, wrong)
			}
		}
	}
	// v9.17.3 has no Cmder.NoRetry: its label says impl cannot keep a
	// timed-out write from being re-sent there.
	if b, _ := os.ReadFile(filepath.Join(out, "results.json")); !strings.Contains(string(b), "no Cmder.NoRetry") {
		t.Error("results.json does not warn that go-redis v9.17.3 re-sends timed-out writes")
	}
	if after, _ := os.ReadFile(filepath.Join(root, "go.mod")); !bytes.Equal(after, goMod) {
		t.Error("--client changed the working tree's go.mod")
	}
}

// A release the module proxy does not serve exits 2 naming it.
func TestRunClientUnservedVersionExitsTwo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--client", "go-redis@v9.999.0", "--row", "protocol", "--backend", "go-redis",
		"--profile", "smoke", "--out", t.TempDir(), "--quiet"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "go-redis@v9.999.0") {
		t.Fatalf("exit %d, want %d naming the version\nstderr: %s", code, exitUsage, stderr.String())
	}
}

func TestParseClients(t *testing.T) {
	pins, err := parseClients("go-redis@v9.17.3,v9.23.0, valkey-go@v1.0.79", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := pinList(pins); got != "go-redis@v9.17.3,go-redis@v9.23.0,valkey-go@v1.0.79" {
		t.Errorf("admit's list: %s", got)
	}
	if _, err := parseClients("go-redis@v9.17.3,v9.23.0", false); err == nil {
		t.Error("a run took two versions of one library")
	}
	a := clientModuleDir("/r", []clientPin{{Name: "valkey-go", Version: "v1.0.79"}, {Name: "go-redis", Version: "v9.17.3"}})
	b := clientModuleDir("/r", []clientPin{{Name: "go-redis", Version: "v9.17.3"}, {Name: "valkey-go", Version: "v1.0.79"}})
	if a != b {
		t.Errorf("one version set, two copies: %s, %s", a, b)
	}
}

// The copy follows the tree: a changed file is copied, a removed one goes,
// build output and reports stay out.
func TestSyncTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("a/a.go", "package a\n")
	write("a/gone.go", "package a\n")
	write("bin/big.test", "binary")
	write("slotgate-report/results.json", "{}")
	write("elsewhere/out/"+lockName, "")
	write("elsewhere/out/results.json", "{}")
	if err := syncTree(src, dst); err != nil {
		t.Fatal(err)
	}
	write("a/a.go", "package a // changed\n")
	if err := os.Remove(filepath.Join(src, "a/gone.go")); err != nil {
		t.Fatal(err)
	}
	if err := syncTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a/a.go")); string(b) != "package a // changed\n" {
		t.Errorf("changed file not copied: %q", b)
	}
	for _, rel := range []string{"a/gone.go", "bin/big.test", "slotgate-report/results.json", "elsewhere/out/results.json"} {
		if fileExists(filepath.Join(dst, rel)) {
			t.Errorf("%s is in the copy", rel)
		}
	}
}

// The failure-drills naive-topology controls are naive by their own
// setting (client.Options.StaticSlotMap), not by a library default: on an
// older go-redis, whose own slot-map reload would recover within the halt
// budget, the pinned pool still sends every command of a moved slot to its
// old owner. Run in the module copy that links that release.
func TestNaiveTopologyControlOnAnOlderRelease(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	pins, err := parseClients("go-redis@"+olderGoRedis, false)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := prepareClientModule(root, pins, os.Environ(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := goCommand(dir, os.Environ(), "list", "-m", "-f", "{{.Version}}", clientLibraries["go-redis"]); err != nil || strings.TrimSpace(string(out)) != olderGoRedis {
		t.Fatalf("the copy links %q (%v), want %s", out, err, olderGoRedis)
	}
	out, err := goCommand(dir, os.Environ(), "test", "-count=1", "-run", "^TestStaticSlotMapKeepsTheOldOwner$", "./impl/client/")
	if err != nil {
		t.Fatalf("on go-redis %s:\n%s", olderGoRedis, out)
	}
	if !strings.Contains(string(out), "ok ") {
		t.Fatalf("the test did not run:\n%s", out)
	}
}
