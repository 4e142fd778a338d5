package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestOutLockRefusesASecondHolder: flock locks belong to open file
// descriptions, so a second lockOut in this process conflicts exactly as a
// second slotgate would; the refusal is a usage error naming the holder.
func TestOutLockRefusesASecondHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := lockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockOut(dir)
	if !errors.Is(err, errUsage) {
		t.Fatalf("second lock: %v, want a usage error", err)
	}
	if want := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not name the holder (%s)", err, want)
	}
	first.release()
	again, err := lockOut(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.release()
}
