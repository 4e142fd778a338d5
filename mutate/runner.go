package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/report"
)

// Why suites run as prebuilt test binaries: a Lua mutant changes no Go code,
// only the script set the suites load at run time (SLOTGATE_SCRIPTS), so one
// `go test -c` per suite package serves every Lua mutant. Compiling a suite
// costs minutes on a loaded 2-core runner; starting its binary and its
// topology costs seconds (measured in docs/MUTATION.md). The topology is still
// brought up per mutant: a mutant's scripts and the keys they wrote never
// reach the next mutant's run.

// Stage is one invocation of a suite binary: the rows it scores and an
// optional Ginkgo focus. A row may run in two stages, its strongest
// scenario first, so a mutant that scenario kills costs only that.
type Stage struct {
	Pkg   string // ./rows/fencingmigration
	Rows  []report.RowID
	Focus string // --ginkgo.focus regexp ("" = every spec of the rows)
	Skip  string // --ginkgo.skip regexp
	// KeepGoing runs every selected spec even after one fails (no
	// --ginkgo.fail-fast): a blind spec fails in Ginkgo without killing,
	// and must not stop the specs that could kill.
	KeepGoing bool
}

func (s Stage) String() string {
	rows := make([]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = string(r)
	}
	out := strings.Join(rows, ",")
	if s.Focus != "" {
		out += " [" + s.Focus + "]"
	}
	if s.Skip != "" {
		out += " [rest]"
	}
	return out
}

// Suites holds the compiled suite binaries.
type Suites struct {
	Root string // module root
	Dir  string // where the binaries are
	bins map[string]string
}

// BuildSuites compiles each package's test binary once (go test -c).
func BuildSuites(ctx context.Context, root, dir string, pkgs []string, stderr io.Writer) (*Suites, error) {
	return buildSuites(ctx, root, dir, pkgs, nil, stderr)
}

// buildSuites is BuildSuites with extra `go test` flags (-cover …). The
// packages compile in one `go test -c -o <dir>/` (as `slotgate run`'s
// build, cmd/slotgate/build.go): the go command builds their shared
// dependencies once and links the binaries in parallel, where one command
// per suite linked them one after another. Two suites with the same last
// path element would land on one <name>.test, so those build one by one.
func buildSuites(ctx context.Context, root, dir string, pkgs, flags []string, stderr io.Writer) (*Suites, error) {
	s := &Suites{Root: root, Dir: dir, bins: map[string]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build suites: %w", err)
	}
	if together(pkgs) {
		args := append(append([]string{"test", "-c", "-o", dir + string(filepath.Separator)}, flags...), pkgs...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, stderr, stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build suites %s: %w", strings.Join(pkgs, " "), err)
		}
		for _, pkg := range pkgs {
			s.bins[pkg] = filepath.Join(dir, path.Base(pkg)+".test")
		}
		return s, nil
	}
	for _, pkg := range pkgs {
		bin := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(pkg, "./"), "/", "_")+".test")
		args := append(append([]string{"test", "-c", "-o", bin}, flags...), pkg)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, stderr, stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build suite %s: %w", pkg, err)
		}
		s.bins[pkg] = bin
	}
	return s, nil
}

// together reports whether pkgs can share one `go test -c -o <dir>/`: more
// than one, and no two with the same last path element (the binary's name).
func together(pkgs []string) bool {
	seen := map[string]bool{}
	for _, p := range pkgs {
		if seen[path.Base(p)] {
			return false
		}
		seen[path.Base(p)] = true
	}
	return len(pkgs) > 1
}

// RunArgs configures one stage run.
type RunArgs struct {
	Env     []string // SLOTGATE_* (scripts, profile, seed, server, backends)
	JSON    string   // where the Ginkgo JSON report goes
	Log     io.Writer
	Timeout time.Duration
	// Args are extra arguments to the suite binary (-test.gocoverdir).
	Args []string
	// Order, when not 0, is Ginkgo's --ginkgo.seed: the order it shuffles
	// the top-level containers in. Without it every run draws its own, so
	// which of two failing specs comes first under fail-fast — the killer
	// a report names — varies between runs of one mutant.
	Order int64
}

// Run runs one stage and scores it. --ginkgo.fail-fast (unless KeepGoing)
// stops the suite at the first failed spec: one failed check kills the
// mutant.
func (s *Suites) Run(ctx context.Context, st Stage, a RunArgs) (*report.Scorecard, error) {
	bin, ok := s.bins[st.Pkg]
	if !ok {
		return nil, fmt.Errorf("suite %s was not built", st.Pkg)
	}
	labels := make([]string, len(st.Rows))
	for i, r := range st.Rows {
		labels[i] = string(r)
	}
	args := []string{"--ginkgo.label-filter=" + strings.Join(labels, " || "), "--ginkgo.json-report=" + a.JSON, "--ginkgo.timeout=" + a.Timeout.String()}
	if !st.KeepGoing {
		args = append(args, "--ginkgo.fail-fast")
	}
	if a.Order != 0 {
		args = append(args, fmt.Sprintf("--ginkgo.seed=%d", a.Order))
	}
	if st.Focus != "" {
		args = append(args, "--ginkgo.focus="+st.Focus)
	}
	if st.Skip != "" {
		args = append(args, "--ginkgo.skip="+st.Skip)
	}
	args = append(args, a.Args...)
	_ = os.Remove(a.JSON)
	cctx, cancel := context.WithTimeout(ctx, a.Timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Dir = filepath.Join(s.Root, filepath.FromSlash(strings.TrimPrefix(st.Pkg, "./")))
	cmd.Env = append(os.Environ(), a.Env...)
	tail := &tailBuffer{max: 64 << 10}
	var out io.Writer = tail
	if a.Log != nil {
		out = io.MultiWriter(a.Log, tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// The suite's servers die with it; it dies with us.
	// Its own process group: a terminal Ctrl-C reaches slotgate only, which
	// interrupts the suite once (cmd.Cancel); a second interrupt would make
	// Ginkgo skip its cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, fmt.Errorf("run suite %s: %w", st.Pkg, runErr)
	}
	reports, err := report.LoadGinkgoJSON(a.JSON)
	if err != nil {
		if exit != nil {
			if p := panicOf(tail.String()); p != "" {
				return nil, &SuiteCrash{Pkg: st.Pkg, Panic: p}
			}
		}
		return nil, fmt.Errorf("suite %s wrote no report (exit: %v): %w", st.Pkg, runErr, err)
	}
	card, err := report.FromGinkgo(reports, report.Meta{Rows: st.Rows})
	if err != nil {
		return nil, fmt.Errorf("score suite %s: %w", st.Pkg, err)
	}
	return card, nil
}

// SuiteCrash is a suite process that died of a panic before Ginkgo wrote its
// report: a panic in a goroutine the code under test started (no spec can
// recover it) takes the whole process down with exit status 2.
type SuiteCrash struct {
	Pkg   string
	Panic string // "panic: …" and the goroutine's stack, as printed
}

func (e *SuiteCrash) Error() string {
	first, _, _ := strings.Cut(e.Panic, "\n")
	return fmt.Sprintf("suite %s %s: %s", e.Pkg, crashedNote, first)
}

// crashedNote is what a SuiteCrash says of its suite; Kill.Crashed finds
// it in the kill a crash decided.
const crashedNote = "crashed before writing its report"

// Crashed reports whether k was decided by a suite process that crashed
// (SuiteCrash) rather than by a check: the process ran no cleanup, so its
// servers and directory are left for its parent to remove.
func (k Kill) Crashed() bool {
	return k.Check == "suite" && strings.Contains(k.Message, crashedNote)
}

// In reports whether the crashing goroutine's stack runs through the
// module-relative package dir (e.g. "impl/presence"): a frame's function
// is printed as <module>/<dir>.<func>.
func (e *SuiteCrash) In(dir string) bool {
	return strings.Contains(e.Panic, "/"+strings.Trim(dir, "/")+".")
}

// panicOf returns the runtime's panic report in out ("panic: " up to the
// end of the first goroutine's stack), or "".
func panicOf(out string) string {
	i := strings.Index(out, "\npanic: ")
	if i < 0 {
		if !strings.HasPrefix(out, "panic: ") {
			return ""
		}
		i = -1
	}
	p := out[i+1:]
	if j := strings.Index(p, "\n\n"); j >= 0 {
		if k := strings.Index(p[j+2:], "\n\n"); k >= 0 { // "panic: …\n\ngoroutine N […]:\n<frames>\n\n"
			p = p[:j+2+k]
		}
	}
	return p
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
