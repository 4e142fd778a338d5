package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Schema names the results-file format; ReadJSON refuses any other.
// v2: controls carry their kind and whether they were exercised; a v1 file
// would re-fold every pass as blind, so it is refused with that reason.
const Schema = "slotgate.results/v2"

// ErrSchema is returned by ReadJSON for a results file of another format.
var ErrSchema = errors.New("unknown results schema")

// results is the results file: the scorecard plus the gate, so a consumer
// (jq, a dashboard) need not re-fold cells to know the verdict.
type results struct {
	Schema string `json:"schema"`
	Gate   gate   `json:"gate"`
	*Scorecard
	// Admission shadows Scorecard.Admission so the file always has the
	// full table (every pair, not assessed included).
	Admission []AdmissionRow `json:"admission"`
}

type gate struct {
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons,omitempty"`
}

// WriteJSON writes the results file `slotgate report` re-renders from.
func WriteJSON(w io.Writer, s *Scorecard) error {
	pass, reasons := s.Gate()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(results{Schema: Schema, Gate: gate{pass, reasons}, Scorecard: s, Admission: s.admissionRows()}); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// ReadJSON reads a results file. Cells are re-folded from their checks
// against the rows the file was scored with, so the verdict always follows
// the checks, never a stored status.
func ReadJSON(r io.Reader) (*Scorecard, error) {
	in := results{Scorecard: &Scorecard{}}
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	if in.Schema == "slotgate.results/v1" {
		return nil, fmt.Errorf("read results: %w: %q was written by an older slotgate whose controls carry no kind (variant or self-test) and no exercised flag — re-run it with this build", ErrSchema, in.Schema)
	}
	if in.Schema != Schema {
		return nil, fmt.Errorf("read results: %w: %q, want %q", ErrSchema, in.Schema, Schema)
	}
	var checks []Check
	for _, c := range in.Cells {
		checks = append(checks, c.Checks...)
	}
	checks = append(checks, in.Unscored...)
	s := build(in.Meta, in.Rows, checks)
	s.Admission = AdmissionTable(admissionEntries(in.Admission))
	s.Problems = in.Problems
	if in.Departures != nil {
		s.Departures = in.Departures // as the run was scored
	}
	return s, nil
}

// Refold scores checks against the rows and meta s was scored with, keeping
// its admission table and problems — what ReadJSON does on load — for a
// caller that replaced the checks (`slotgate check --from`).
func (s *Scorecard) Refold(checks []Check) *Scorecard {
	out := build(s.Meta, s.Rows, checks)
	out.Admission, out.Problems = s.Admission, s.Problems
	return out
}

// Checks lists every check of s: the cells' in order, then the unscored.
func (s *Scorecard) Checks() []Check {
	var out []Check
	for _, c := range s.Cells {
		out = append(out, c.Checks...)
	}
	return append(out, s.Unscored...)
}
