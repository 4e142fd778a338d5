package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockName is the lock file `slotgate run` holds in its --out directory for
// the whole run: two runs on one directory would delete each other's Ginkgo
// files and overwrite each other's report.
const lockName = ".slotgate.lock"

// outLock is a held lock on an --out directory.
type outLock struct{ f *os.File }

// openOut makes the --out directory dir (absolute) and locks it: every
// command that writes a report there opens it this way.
func openOut(dir string) (abs string, lock *outLock, err error) {
	if abs, err = filepath.Abs(dir); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", nil, fmt.Errorf("%w: cannot create --out %s: %v", errUsage, abs, err)
	}
	lock, err = lockOut(abs)
	return abs, lock, err
}

// lockOut takes an exclusive flock on dir's lock file without waiting, and
// writes this process's pid and start time into it. When another process
// holds it, the usage error names that holder's pid. The kernel drops the
// lock when its holder dies, SIGKILL included, so a stale file never blocks.
func lockOut(dir string) (*outLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot lock --out %s: %v", errUsage, dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := make([]byte, 256)
		n, _ := f.ReadAt(holder, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: --out %s is in use by another slotgate run (%s); wait for it to finish or choose another --out",
				errUsage, dir, describeHolder(string(holder[:n])))
		}
		return nil, fmt.Errorf("%w: cannot lock --out %s: %v", errUsage, dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d started %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
	}
	return &outLock{f: f}, nil
}

// describeHolder renders the lock file's content ("pid N started T").
func describeHolder(content string) string {
	content = strings.TrimSpace(content)
	if f := strings.Fields(content); len(f) >= 2 && f[0] == "pid" {
		if _, err := strconv.Atoi(f[1]); err == nil {
			return content
		}
	}
	return "holder unknown: its pid is not written yet"
}

// release unlocks; the file stays (removing it would let a third run lock a
// new file while a second still waits on the old one).
func (l *outLock) release() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		_ = l.f.Close()
	}
}
