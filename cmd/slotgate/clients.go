package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Spec 000 §Client Architecture admits a client version by test, never by
// assumption. `--client go-redis@v9.20.0,valkey-go@v1.0.75` runs the suites
// built against those releases: in a copy of the module (never the working
// tree), its go.mod moved to the pinned versions, one copy per version set
// kept under bin/clients so the go command's caches serve the next run.
// Every label then names the version linked (clientLinkFlags reads the
// copy's go.mod).

// clientLibraries maps a --client name to its module path.
var clientLibraries = map[string]string{
	"go-redis":  "github.com/redis/go-redis/v9",
	"valkey-go": "github.com/valkey-io/valkey-go",
}

// clientPin is one library pinned to one release.
type clientPin struct {
	Name, Module, Version string
}

func (c clientPin) String() string { return c.Name + "@" + c.Version }

// semverRE is the shape of a module version the proxy can serve
// (v1.2.3, v1.2.3-rc.1, a pseudo-version).
var semverRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// parseClients reads --client: a comma list of name@version, at most one per
// library. A name may carry several versions only for `slotgate admit`
// (multi): "go-redis@v9.17.3,v9.23.0" is two versions of go-redis.
func parseClients(s string, multi bool) ([]clientPin, error) {
	var pins []clientPin
	last := ""
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, version, ok := strings.Cut(part, "@")
		if !ok {
			if !multi || last == "" {
				return nil, fmt.Errorf("%w: --client %q: want name@version, e.g. go-redis@v9.20.0 (names: %s)", errUsage, part, clientNames())
			}
			name, version = last, part
		}
		module, known := clientLibraries[name]
		if !known {
			return nil, fmt.Errorf("%w: --client %q: unknown client library %q (names: %s)", errUsage, part, name, clientNames())
		}
		if !semverRE.MatchString(version) {
			return nil, fmt.Errorf("%w: --client %q: %q is not a module version (want vMAJOR.MINOR.PATCH, e.g. v9.20.0)", errUsage, part, version)
		}
		pin := clientPin{Name: name, Module: module, Version: version}
		if slices.Contains(pins, pin) {
			return nil, fmt.Errorf("%w: --client names %s twice", errUsage, pin)
		}
		if !multi && slices.ContainsFunc(pins, func(p clientPin) bool { return p.Name == name }) {
			return nil, fmt.Errorf("%w: --client names %s twice (one version per library in a run; slotgate admit compares versions)", errUsage, name)
		}
		pins = append(pins, pin)
		last = name
	}
	if len(pins) == 0 {
		return nil, fmt.Errorf("%w: --client is empty: want name@version, e.g. go-redis@v9.20.0", errUsage)
	}
	return pins, nil
}

func clientNames() string {
	var names []string
	for n := range clientLibraries {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// clientModuleDir is where the module copy of one version set lives.
func clientModuleDir(root string, pins []clientPin) string {
	var key []string
	for _, p := range pins {
		key = append(key, p.String())
	}
	slices.Sort(key)
	sum := sha256.Sum256([]byte(strings.Join(key, ",")))
	return filepath.Join(root, "bin", "clients", strings.Join(key, "+")+"-"+hex.EncodeToString(sum[:4]))
}

// prepareClientModule brings the copy for pins up to date with root's
// sources and moves its go.mod to the pinned versions. A version the module
// proxy cannot serve, or that impl does not compile against, is a usage
// error naming it (exit 2).
func prepareClientModule(root string, pins []clientPin, env []string, stdout io.Writer) (string, error) {
	began := time.Now()
	dir := clientModuleDir(root, pins)
	// Two runs with one version set (two shards in one tree) share the
	// copy: one prepares it at a time.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("--client: %w", err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("--client: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("--client: lock %s: %w", dir, err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if err := syncTree(root, dir); err != nil {
		return "", fmt.Errorf("--client: copy the module to %s: %w", dir, err)
	}
	args := []string{"get"}
	for _, p := range pins {
		args = append(args, p.Module+"@"+p.Version)
	}
	if out, err := goCommand(dir, env, args...); err != nil {
		_ = os.RemoveAll(dir) // nothing worth keeping for a version set that cannot be had
		return "", fmt.Errorf("%w: --client %s: the go command cannot get it (is the version served by the module proxy?): %s", errUsage, pinList(pins), firstLines(out, 6))
	}
	// go get may move a pinned module on when another pin requires a newer
	// release; the run must link exactly what was asked.
	for _, p := range pins {
		out, err := goCommand(dir, env, "list", "-m", "-f", "{{.Version}}", p.Module)
		if got := strings.TrimSpace(string(out)); err != nil || got != p.Version {
			return "", fmt.Errorf("%w: --client %s: the module resolves to %s instead (another pin requires it)", errUsage, p, got)
		}
	}
	if out, err := goCommand(dir, env, "build", "./impl/..."); err != nil {
		return "", fmt.Errorf("%w: --client %s: impl does not compile against it (that release lacks an API impl uses): %s", errUsage, pinList(pins), firstLines(out, 6))
	}
	fmt.Fprintf(stdout, "slotgate: clients %s: module copy %s ready in %s\n", pinList(pins), dir, time.Since(began).Round(100*time.Millisecond))
	return dir, nil
}

func pinList(pins []clientPin) string {
	var s []string
	for _, p := range pins {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

func goCommand(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func firstLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n  ")
}

// skipInCopy says which entries of the module stay out of a copy: build
// output, reports (any directory a run or admit locked as its --out),
// VCS data, nested modules.
func skipInCopy(path, rel string, d fs.DirEntry) bool {
	top, _, _ := strings.Cut(rel, string(filepath.Separator))
	return top == "bin" || top == ".git" || strings.HasPrefix(top, "slotgate-report") || strings.HasPrefix(top, "slotgate-admission") ||
		(d.IsDir() && (fileExists(filepath.Join(path, "go.mod")) || fileExists(filepath.Join(path, lockName))))
}

// syncTree makes dst a copy of src's sources: files whose size or mtime
// differ are copied (keeping mtime, so the go command's caches still hit),
// files gone from src are removed. go.mod and go.sum are copied whenever src's
// changed; prepareClientModule then moves the copy's to the pins.
func syncTree(src, dst string) error {
	seen := map[string]bool{}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel != "." && skipInCopy(path, rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		seen[rel] = true
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if rel == "go.mod" || rel == "go.sum" {
			// The copy's own go.mod differs from src's by the pins: keep a
			// stamp of src's to know when src changed.
			stamp := filepath.Join(dst, ".src."+rel)
			if old, err := os.ReadFile(stamp); err == nil {
				if cur, err := os.ReadFile(path); err == nil && bytes.Equal(old, cur) && fileExists(target) {
					return nil
				}
			}
			if err := copyFile(path, target, info); err != nil {
				return err
			}
			return copyFile(path, stamp, info)
		}
		if t, err := os.Stat(target); err == nil && t.Size() == info.Size() && t.ModTime().Equal(info.ModTime()) {
			return nil
		}
		return copyFile(path, target, info)
	})
	if err != nil {
		return err
	}
	// Remove what src no longer has (a deleted test would still run).
	return filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dst, path)
		if rel == "." || strings.HasPrefix(rel, ".src.") || rel == "bin" {
			if rel == "bin" {
				return filepath.SkipDir // the copy's own suite binaries
			}
			return nil
		}
		if !seen[rel] {
			if err := os.RemoveAll(path); err != nil {
				return err
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
}

func copyFile(src, dst string, info fs.FileInfo) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}
