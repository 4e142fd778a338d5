package workload

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel writes it.
	line := "4242 (valkey (x) 1) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 5 0 100 0 0"
	got, err := parseStat(line)
	if err != nil || got != 3800*time.Millisecond {
		t.Fatalf("parseStat = %v, %v; want 3.8s", got, err)
	}
	if _, err := parseStat("4242 valkey S 1"); err == nil {
		t.Errorf("a line without a command name must not parse")
	}
	if _, err := parseStat("4242 (v) S 1 2"); err == nil {
		t.Errorf("a short line must not parse")
	}
}

func TestProcessCPUOfSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := ProcessCPU(0); err == nil {
		t.Errorf("pid 0 must be refused")
	}
}
