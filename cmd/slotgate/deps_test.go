package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI reads the suites' results and the row catalogue, never their test
// framework: only suites/ assert (issue 16), and a binary that links Ginkgo
// and Gomega drags their init-time flags and globals into every command.
func TestCLILinksNoGinkgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "onsi/ginkgo") || strings.Contains(dep, "onsi/gomega") || strings.HasSuffix(dep, "/suites/harness") {
			t.Errorf("cmd/slotgate links %s", dep)
		}
	}
}
