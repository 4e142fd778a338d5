package gomut

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/report"
)

// RunArgs says how to run one mutant.
type RunArgs struct {
	// Rows are the rows to run (usually Mutant.Rows); empty means every
	// row of the mutant.
	Rows []report.RowID
	// Profile is smoke or full; empty means smoke.
	Profile string
	// OutDir is where the copy's `slotgate run --out` writes; a relative
	// path is taken relative to the caller's working directory.
	OutDir string
	// Stdout and Stderr receive the build's and the run's output; nil
	// discards it.
	Stdout, Stderr io.Writer
	// ExtraArgs are appended to `slotgate run` (e.g. --seed, --backend).
	ExtraArgs []string
	// Slotgate, when set, is a slotgate binary to run in the copy instead
	// of building one there: the CLI runs no impl code itself (the rows
	// run in the Ginkgo suites, compiled from the copy), so one binary
	// built from the original tree serves every mutant and saves a link
	// per mutant. BuildSlotgate builds one.
	Slotgate string
}

// ErrRun wraps every failure of Run that is not the gate's verdict: the
// copy, the build (a mutant that does not compile), or a run that exits 2
// (bad input) or is interrupted.
var ErrRun = errors.New("run mutant")

// ErrBuild is a mutant whose suites did not compile in the copy: Generate's
// type check should make it impossible, so it means the copy was not what
// was generated against (the tree changed since), never a kill.
var ErrBuild = errors.New("suite did not compile")

// suiteBuildFailure reads a results.json for a suite that failed to
// compile. slotgate records that only as a run problem whose text is
// Ginkgo's "Failed to compile <suite>", so this matches that text: the one
// place the harness leaves no typed signal.
func suiteBuildFailure(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read results: %w", err)
	}
	var r struct{ Problems []string }
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("read results %s: %w", path, err)
	}
	for _, p := range r.Problems {
		if strings.Contains(p, "Failed to compile") {
			return strings.Join(strings.Fields(p), " "), nil
		}
	}
	return "", nil
}

// Run runs the rows of a.Rows (default m.Rows) against mutant m: it copies
// the module at root to a temporary directory (.git, bin and report
// directories skipped; the working tree is never written), writes the
// mutated file, and runs `slotgate run --profile P --row … --out OutDir`
// from inside the copy, so the suites are compiled from the mutated source.
// It returns the path of the copy run's results.json. Exit 1 (the gate
// failed) is not an error: it is how a mutant gets killed. The copy is
// removed when Run returns, also when ctx is cancelled (the run gets an
// interrupt first, so it tears its servers down).
//
// The copy lives at a fixed path per module root and slot (a lock file
// picks a free slot), not a fresh random directory: Go's build cache keys a
// package on its directory, so a fixed path means only the mutated package
// and its dependents recompile, not the whole module, on every mutant.
func Run(ctx context.Context, root string, m Mutant, a RunArgs) (string, error) {
	if a.Profile == "" {
		a.Profile = "smoke"
	}
	rows := a.Rows
	if len(rows) == 0 {
		rows = m.Rows
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("%w %s: no rows cover it", ErrRun, m.ID)
	}
	if a.OutDir == "" {
		return "", fmt.Errorf("%w %s: no OutDir", ErrRun, m.ID)
	}
	out, err := filepath.Abs(a.OutDir)
	if err != nil {
		return "", fmt.Errorf("%w %s: out dir: %w", ErrRun, m.ID, err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("%w %s: root: %w", ErrRun, m.ID, err)
	}
	stdout, stderr := orDiscard(a.Stdout), orDiscard(a.Stderr)

	dir, release, err := acquireCopyDir(root)
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
	}
	defer release()
	if err := copyTree(root, dir, out); err != nil {
		return "", fmt.Errorf("%w %s: copy module: %w", ErrRun, m.ID, err)
	}
	if err := writeMutant(dir, m); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
	}
	bin := a.Slotgate
	if bin == "" {
		bin = filepath.Join(dir, "bin", "slotgate")
		if err := goBuild(ctx, dir, bin, stdout, stderr); err != nil {
			return "", fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
		}
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = string(r)
	}
	args := append([]string{"run", "--profile", a.Profile, "--row", strings.Join(ids, ","), "--out", out}, a.ExtraArgs...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// An interrupt, not a kill: slotgate tears every server down on SIGINT
	// and exits 130; the kill is the fallback.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	err = cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%w %s: %w", ErrRun, m.ID, ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// The gate failed: the mutant may be killed; the caller reads why.
	default:
		return "", fmt.Errorf("%w %s: slotgate run: %w", ErrRun, m.ID, err)
	}
	res := filepath.Join(out, "results.json")
	if _, err := os.Stat(res); err != nil {
		return "", fmt.Errorf("%w %s: no results: %w", ErrRun, m.ID, err)
	}
	if why, err := suiteBuildFailure(res); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
	} else if why != "" {
		return "", fmt.Errorf("%w %s: %w: %s", ErrRun, m.ID, ErrBuild, why)
	}
	return res, nil
}

// BuildSlotgate builds the slotgate CLI from the module at root into dir
// (RunArgs.Slotgate) and returns its path.
func BuildSlotgate(ctx context.Context, root, dir string, stdout, stderr io.Writer) (string, error) {
	bin, err := filepath.Abs(filepath.Join(dir, "slotgate"))
	if err != nil {
		return "", err
	}
	if err := goBuild(ctx, root, bin, orDiscard(stdout), orDiscard(stderr)); err != nil {
		return "", err
	}
	return bin, nil
}

func goBuild(ctx context.Context, dir, bin string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/slotgate")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build slotgate: %w", err)
	}
	return nil
}

// writeMutant replaces the mutated file in the copy: unlinked first, so
// even a copy that shares inodes with the tree is never written through. A
// file the tree does not have (the embedded-Lua schemata's generated
// file) is created.
func writeMutant(dir string, m Mutant) error {
	p := filepath.Join(dir, filepath.FromSlash(m.File))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write mutant: %w", err)
	}
	if err := os.WriteFile(p, m.Content, 0o644); err != nil {
		return fmt.Errorf("write mutant: %w", err)
	}
	return nil
}

// copySlots bounds how many copies of one module run at once.
const copySlots = 16

// acquireCopyDir locks the first free slot of root's copy directories
// ($TMPDIR/slotgate-mutant-<hash of root>/<slot>) and empties it. The lock
// is an flock, released by the kernel if this process dies, so a crashed
// run's slot is reused (and its leftovers removed) by the next.
func acquireCopyDir(root string) (string, func(), error) {
	sum := sha256.Sum256([]byte(root))
	base := filepath.Join(os.TempDir(), "slotgate-mutant-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", nil, fmt.Errorf("copy dir: %w", err)
	}
	for slot := 0; slot < copySlots; slot++ {
		lf, err := os.OpenFile(filepath.Join(base, strconv.Itoa(slot)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return "", nil, fmt.Errorf("copy dir: %w", err)
		}
		if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			lf.Close()
			continue
		}
		dir := filepath.Join(base, strconv.Itoa(slot))
		if err := os.RemoveAll(dir); err != nil {
			lf.Close()
			return "", nil, fmt.Errorf("copy dir: clear %s: %w", dir, err)
		}
		release := func() {
			os.RemoveAll(dir)
			lf.Close() // releases the flock
		}
		return dir, release, nil
	}
	return "", nil, fmt.Errorf("copy dir: all %d slots under %s are in use", copySlots, base)
}

// skipDir reports directories a copy leaves out: VCS data, built binaries,
// reports (any slotgate-report* or slotgate-mutation* and the run's own out
// dir).
func skipDir(rel, name, out string, abs string) bool {
	if rel == "." {
		return false
	}
	if name == ".git" || name == "bin" || strings.HasPrefix(name, "slotgate-report") || strings.HasPrefix(name, "slotgate-mutation") || name == "node_modules" {
		return true
	}
	return abs == out
}

// copyTree copies root into dst. A real copy, not hard links: the module's
// sources are a few MB, and a hard-linked copy shares its files with the
// working tree — an editor that rewrites a file in place during a run
// would change the copy (and the run) under it.
func copyTree(root, dst, out string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if skipDir(rel, d.Name(), out, p) {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case !d.Type().IsRegular():
			return nil // sockets, fifos: nothing to build from
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	o, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Prepare copies the module at root to a copy slot (acquireCopyDir: a fixed
// path per root and slot, so the build cache recompiles only the mutated
// package and its dependents) and writes mutant m into it, for a caller
// that builds and runs the suites there itself (mutate.GoRunner). release
// removes the copy and frees the slot. The working tree is never written.
func Prepare(root string, m Mutant) (dir string, release func(), err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return "", nil, fmt.Errorf("%w %s: root: %w", ErrRun, m.ID, err)
	}
	dir, release, err = acquireCopyDir(root)
	if err != nil {
		return "", nil, fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
	}
	if err := copyTree(root, dir, ""); err != nil {
		release()
		return "", nil, fmt.Errorf("%w %s: copy module: %w", ErrRun, m.ID, err)
	}
	if err := writeMutant(dir, m); err != nil {
		release()
		return "", nil, fmt.Errorf("%w %s: %w", ErrRun, m.ID, err)
	}
	return dir, release, nil
}

// ModulePath is the module path in root/go.mod (coverage profiles name
// files by import path).
func ModulePath(root string) (string, error) { return modulePath(root) }

// PrepareSchemata copies the module at root to a copy slot (as Prepare)
// and writes the schemata's files into it: the tree one build per suite
// compiles every expressible mutant into (mutate.GoRunner). It adds
// nothing else: mutate/schema, which the files import, is part of the
// module. The working tree is never written.
func PrepareSchemata(root string, s *Schemata) (dir string, release func(), err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return "", nil, fmt.Errorf("%w schemata: root: %w", ErrRun, err)
	}
	dir, release, err = acquireCopyDir(root)
	if err != nil {
		return "", nil, fmt.Errorf("%w schemata: %w", ErrRun, err)
	}
	if err := copyTree(root, dir, ""); err != nil {
		release()
		return "", nil, fmt.Errorf("%w schemata: copy module: %w", ErrRun, err)
	}
	for rel, content := range s.Files {
		if err := writeMutant(dir, Mutant{ID: "schemata", File: rel, Content: content}); err != nil {
			release()
			return "", nil, fmt.Errorf("%w schemata: %w", ErrRun, err)
		}
	}
	return dir, release, nil
}
