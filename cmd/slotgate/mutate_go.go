//go:build !gomut

package main

// The Go-mutant adapter. mutate/gomut (branch mutate-go) is not part of this
// build: --kind go says so. Once it is merged, build with -tags gomut (or
// drop this file and the build tag of mutate_gomut.go).

import (
	"context"
	"errors"
	"io"

	"github.com/slotgate/slotgate/mutate"
	"github.com/slotgate/slotgate/report"
)

var errNoGoMutants = errors.New("this build has no Go mutants (mutate/gomut): rebuild with -tags gomut once it is merged")

func generateGo(root string, rows []report.RowID, seed int64) ([]mutate.Mutant, error) {
	return nil, errNoGoMutants
}

func runGo(ctx context.Context, root string, m mutate.Mutant, profile, outDir string, log io.Writer) mutate.Result {
	return mutate.Result{Mutant: m, Status: mutate.Error, Reason: errNoGoMutants.Error()}
}
