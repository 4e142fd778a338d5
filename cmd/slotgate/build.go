package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// suiteBinDir is where `slotgate run` keeps the compiled suite binaries,
// under the module root: one <name>.test per suite package, kept between
// runs, because `go test -c -o` does not relink a binary whose build ID is
// already current. A warm run then pays ≈ 1 CPU-second for all suites
// instead of a link per suite (≈ 3 CPU-seconds each, 13 in smoke) that
// Ginkgo redid every run when it compiled the suite itself and removed the
// binary after.
const suiteBinDir = "bin/suites"

// suiteBinaries are the compiled suites of one run: a private snapshot (hard
// links) of the shared binaries, so a concurrent run in the same tree that
// rebuilds them after a source change never swaps a binary under this run.
type suiteBinaries struct {
	dir  string            // bin/suites/run.<pid>
	bins map[string]string // package → absolute path of its .test
}

// path is pkg's compiled binary, or pkg itself when it was not built here
// (Ginkgo then compiles it, as before, and reports a compile error per suite).
func (b *suiteBinaries) path(pkg string) string {
	if b != nil {
		if p, ok := b.bins[pkg]; ok {
			return p
		}
	}
	return pkg
}

// remove drops the run's snapshot; the shared binaries stay for the next run.
func (b *suiteBinaries) remove() {
	if b != nil && b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// clientLinkFlags asks the go command which client library versions the
// module in root links (go list -m) and returns the -ldflags that record
// them in the suites (client.LinkFlags), so every label names the version
// tested; "" when the go command cannot tell (labels then say unknown).
func clientLinkFlags(root string, env []string) string {
	cmd := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}"}, client.ClientModules...)...)
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			versions[f[0]] = f[len(f)-1] // a replacement's version when there is one
		}
	}
	return client.LinkFlags(versions)
}

// buildSuites compiles every package's test binary in one `go test -c`, so
// the go command compiles their shared dependencies once and links them in
// parallel, before any suite runs: no compile sits on a suite's wall time or
// takes CPU from a timed suite beside it. The shared directory is locked
// while the go command writes it (two runs in one tree, e.g. two shards).
// A failed build is not fatal: the output is shown and Ginkgo compiles each
// suite itself, so a suite that does not compile fails on its own rows —
// unless pinned (--client): then the suites not compiling against the
// pinned releases is the answer, a usage error naming them.
func buildSuites(root string, pkgs []string, env []string, ldflags string, pinned bool, stdout, stderr io.Writer) (*suiteBinaries, error) {
	if len(pkgs) == 0 {
		return nil, nil
	}
	shared := filepath.Join(root, suiteBinDir)
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return nil, fmt.Errorf("suite binaries: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(shared, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("suite binaries: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("suite binaries: lock %s: %w", shared, err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	sweepSnapshots(shared)

	began := time.Now()
	args := append([]string{"test", "-c", "-ldflags=" + ldflags, "-o", shared + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, env, &out, &out
	if err := cmd.Run(); err != nil {
		if pinned {
			return nil, fmt.Errorf("%w: --client: the suites do not compile against the pinned client releases in %s: %s", errUsage, root, firstLines(out.Bytes(), 8))
		}
		fmt.Fprintf(stderr, "slotgate: compiling the suites failed (%v); each suite compiles on its own instead:\n%s", err, out.Bytes())
		return nil, nil
	}
	fmt.Fprintf(stdout, "slotgate: %d suites compiled in %s (cpu %s)\n", len(pkgs), time.Since(began).Round(100*time.Millisecond),
		(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Round(100*time.Millisecond))

	b := &suiteBinaries{dir: filepath.Join(shared, "run."+strconv.Itoa(os.Getpid())), bins: map[string]string{}}
	_ = os.RemoveAll(b.dir) // a dead run's with our pid
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		return nil, fmt.Errorf("suite binaries: %w", err)
	}
	for _, pkg := range pkgs {
		name := path.Base(pkg) + ".test"
		src, dst := filepath.Join(shared, name), filepath.Join(b.dir, name)
		if err := os.Link(src, dst); err != nil {
			b.remove()
			fmt.Fprintf(stderr, "slotgate: cannot snapshot the suite binaries (%v); each suite compiles on its own instead\n", err)
			return nil, nil
		}
		b.bins[pkg] = dst
	}
	return b, nil
}

// sweepSnapshots removes the snapshots of runs that are gone (a SIGKILLed
// run cannot remove its own). Caller holds the lock.
func sweepSnapshots(shared string) {
	dirs, _ := filepath.Glob(filepath.Join(shared, "run.*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "run."))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(d)
		}
	}
}
