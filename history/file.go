package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxBytes is the per-scenario cap on a stored history, compressed. Above it
// Cap thins the ok operations deterministically; fault windows, spans,
// samples, judgements (the checkers' inputs, which `check --from` needs
// whole) and every operation that did not succeed are always kept — a
// scenario whose checker inputs alone pass MaxBytes/2 may exceed the cap by
// them (see Cap).
const MaxBytes = 2 << 20

// Ext is a stored history's file extension.
const Ext = ".jsonl.gz"

// line is one JSON line of a stored history: exactly one field is set.
type line struct {
	Header    *header      `json:"history,omitempty"`
	Op        *Op          `json:"op,omitempty"`
	Fault     *FaultWindow `json:"fault,omitempty"`
	Span      *Span        `json:"span,omitempty"`
	Sample    *Sample      `json:"sample,omitempty"`
	Judgement *Judgement   `json:"judgement,omitempty"`
}

type header struct {
	Scenario string `json:"scenario"`
	Seed     int64  `json:"seed"`
	Began    string `json:"began"`
	Dropped  int    `json:"dropped,omitempty"`
	Crashed  string `json:"crashed,omitempty"`
}

// Encode writes h as gzipped JSON Lines: a header line, then one line per
// operation (ordered by start), fault window, span, sample and judgement.
func Encode(w io.Writer, h History) error {
	zw := gzip.NewWriter(w)
	enc := json.NewEncoder(zw)
	put := func(l line) error {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("encode history %s: %w", h.Scenario, err)
		}
		return nil
	}
	began, err := h.Began.MarshalText()
	if err != nil {
		return fmt.Errorf("encode history %s: %w", h.Scenario, err)
	}
	if err := put(line{Header: &header{Scenario: h.Scenario, Seed: h.Seed, Began: string(began), Dropped: h.Dropped, Crashed: h.Crashed}}); err != nil {
		return err
	}
	ops := sortedOps(h.Ops)
	for i := range ops {
		if err := put(line{Op: &ops[i]}); err != nil {
			return err
		}
	}
	for i := range h.Faults {
		if err := put(line{Fault: &h.Faults[i]}); err != nil {
			return err
		}
	}
	for i := range h.Spans {
		if err := put(line{Span: &h.Spans[i]}); err != nil {
			return err
		}
	}
	for i := range h.Samples {
		if err := put(line{Sample: &h.Samples[i]}); err != nil {
			return err
		}
	}
	for i := range h.Judgements {
		if err := put(line{Judgement: &h.Judgements[i]}); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode history %s: %w", h.Scenario, err)
	}
	return nil
}

// sortedOps orders operations by start, then client and kind, so a file's
// order (and Cap's choice) does not depend on goroutine scheduling.
func sortedOps(ops []Op) []Op {
	out := append([]Op(nil), ops...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Client != b.Client {
			return a.Client < b.Client
		}
		return a.Kind < b.Kind
	})
	return out
}

// Decode reads a history Encode wrote.
func Decode(r io.Reader) (History, error) {
	var h History
	zr, err := gzip.NewReader(r)
	if err != nil {
		return h, fmt.Errorf("decode history: %w", err)
	}
	defer zr.Close()
	// A decoder, not a line scanner: one judgement's stored checker input
	// can run to hundreds of megabytes on one line (the full routing row's),
	// past any fixed line limit.
	dec := json.NewDecoder(bufio.NewReaderSize(zr, 1<<20))
	seen := false
	for n := 1; ; n++ {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return h, fmt.Errorf("decode history: line %d: %w", n, err)
		}
		switch {
		case l.Header != nil:
			seen = true
			h.Scenario, h.Seed, h.Dropped, h.Crashed = l.Header.Scenario, l.Header.Seed, l.Header.Dropped, l.Header.Crashed
			if err := h.Began.UnmarshalText([]byte(l.Header.Began)); err != nil {
				return h, fmt.Errorf("decode history: line %d: %w", n, err)
			}
		case l.Op != nil:
			h.Ops = append(h.Ops, *l.Op)
		case l.Fault != nil:
			h.Faults = append(h.Faults, *l.Fault)
		case l.Span != nil:
			h.Spans = append(h.Spans, *l.Span)
		case l.Sample != nil:
			h.Samples = append(h.Samples, *l.Sample)
		case l.Judgement != nil:
			h.Judgements = append(h.Judgements, *l.Judgement)
		default:
			return h, fmt.Errorf("decode history: line %d: no known record", n)
		}
	}
	if !seen {
		return h, errors.New("decode history: no header line")
	}
	return h, nil
}

// Cap returns h encoded within max bytes where it can be: when the whole
// history is larger, it keeps every fault window, span, sample, judgement
// and operation that did not succeed, and every k-th ok operation (in start
// order) for the smallest power of two k that fits; Dropped counts the rest.
// What a checker or a reviewer needs is never cut: when the kept records
// alone pass max/2 (large checker inputs), the ok operations still get
// max/2 on top of them rather than being thinned to nothing.
func Cap(h History, max int) ([]byte, History, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		return nil, h, err
	}
	if buf.Len() <= max {
		return buf.Bytes(), h, nil
	}
	ops := sortedOps(h.Ops)
	thin := func(k int) (History, int) {
		t := h
		t.Ops = nil
		okSeen := 0
		for _, op := range ops {
			if op.Outcome != OK {
				t.Ops = append(t.Ops, op)
				continue
			}
			if k > 0 && okSeen%k == 0 {
				t.Ops = append(t.Ops, op)
			}
			okSeen++
		}
		t.Dropped = h.Dropped + len(h.Ops) - len(t.Ops)
		return t, okSeen
	}
	kept, okSeen := thin(0)
	buf.Reset()
	if err := Encode(&buf, kept); err != nil {
		return nil, h, err
	}
	limit := max
	if base := buf.Len(); base > max/2 {
		limit = base + max/2
	}
	for k := 2; ; k *= 2 {
		t, _ := thin(k)
		buf.Reset()
		if err := Encode(&buf, t); err != nil {
			return nil, h, err
		}
		if buf.Len() <= limit || k > okSeen {
			return buf.Bytes(), t, nil
		}
	}
}

// FileName is the path of scenario's history under a run's histories
// directory: the scenario's slash path, each segment made file-safe.
func FileName(scenario string) string {
	segs := strings.Split(scenario, "/")
	for i, s := range segs {
		s = strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '+':
				return r
			}
			return '_'
		}, s)
		if s == "" || s == "." || s == ".." {
			s = "_" + s
		}
		segs[i] = s
	}
	return filepath.Join(segs...) + Ext
}

// Write stores h under dir (dir/FileName(h.Scenario)) within MaxBytes.
func Write(dir string, h History) (string, error) {
	b, _, err := Cap(h, MaxBytes)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, FileName(h.Scenario))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("write history %s: %w", h.Scenario, err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", fmt.Errorf("write history %s: %w", h.Scenario, err)
	}
	return p, nil
}

// Read loads the history stored at path.
func Read(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return History{}, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	h, err := Decode(f)
	if err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// ReadDir loads every history stored under dir, keyed by scenario.
func ReadDir(dir string) (map[string]History, error) {
	out := map[string]History{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, Ext) {
			return nil
		}
		h, err := Read(p)
		if err != nil {
			return err
		}
		if _, dup := out[h.Scenario]; dup {
			return fmt.Errorf("read histories: two files for scenario %q", h.Scenario)
		}
		out[h.Scenario] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read histories %s: %w", dir, err)
	}
	return out, nil
}
