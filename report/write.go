package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Paths are the files WriteAll wrote.
type Paths struct {
	JSON     string // results.json, the input of `slotgate report`
	JUnit    string // junit.xml, for CI
	Markdown string // summary.md, for a PR comment
	HTML     string // report.html, what reviewers sign off on
}

// WriteAll writes results.json, junit.xml, summary.md and report.html into
// dir, creating it if needed. On error, Paths names the files written so far.
func WriteAll(dir string, s *Scorecard) (Paths, error) {
	var p Paths
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p, fmt.Errorf("create report dir: %w", err)
	}
	for _, f := range []struct {
		name  string
		dst   *string
		write func(io.Writer, *Scorecard) error
	}{
		{"results.json", &p.JSON, WriteJSON},
		{"junit.xml", &p.JUnit, WriteJUnit},
		{"summary.md", &p.Markdown, WriteMarkdown},
		{"report.html", &p.HTML, WriteHTML},
	} {
		path := filepath.Join(dir, f.name)
		if err := writeFile(path, s, f.write); err != nil {
			return p, err
		}
		*f.dst = path
	}
	return p, nil
}

func writeFile(path string, s *Scorecard, write func(io.Writer, *Scorecard) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	b := bufio.NewWriter(f)
	if err := write(b, s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
