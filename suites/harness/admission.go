package harness

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
)

// Admission is one raw-client judgement a suite records next to the check
// whose runs it reuses (spec 000 §Client Architecture: a client is admitted
// by G2, never assumed).
type Admission struct {
	Backend     client.Backend
	Requirement report.Requirement
	// Client is the library and version ("go-redis v9.23.0").
	Client string
	// Path names the library code the raw run exercised ("go-redis
	// ClusterClient.Pipeline"): what an admission is a statement about.
	Path string
	// Raw is the requirement's checker over the raw client's run: Pass
	// means the library met it on its own. Unknown or inconclusive means
	// the run could not decide: not assessed.
	Raw check.Result
	// Wrapped is the same checker over impl's path on the same client.
	Wrapped check.Result
	// Wrapper names impl's code between the application and the library.
	Wrapper string
	// Evidence says what the raw run was and what it showed.
	Evidence string
}

// Admit records a raw client's verdict (report.AdmissionTable folds it into
// the admission table). It asserts nothing: admission is next to the gate,
// never part of it.
func Admit(a Admission) {
	GinkgoHelper()
	AddReportEntry(report.AdmissionEntryName, a.entry())
}

// entry decides the verdict: a raw pass admits; a raw failure needs the
// wrapper when the wrapped path passed and refuses the client when it
// failed too; anything the run could not decide is not assessed.
func (a Admission) entry() report.Admission {
	v := report.NotAssessed
	switch {
	case a.Raw.Status == check.Pass:
		v = report.Admitted
	case a.Raw.Status == check.Fail && (a.Wrapped.Status == check.Pass || a.Wrapped.Status == check.Fail):
		v = report.AdmissionOf(false, a.Wrapped.Status == check.Pass)
	}
	e := report.Admission{Backend: string(a.Backend), Requirement: a.Requirement, Verdict: v, Client: a.Client, Path: a.Path,
		Evidence: fmt.Sprintf("%s Raw client: %s: %s.", a.Evidence, a.Raw.Status, a.Raw.Message)}
	if v != report.Admitted && a.Wrapper != "" {
		e.Evidence += fmt.Sprintf(" Through %s: %s: %s.", a.Wrapper, a.Wrapped.Status, a.Wrapped.Message)
	}
	if v == report.AdmittedWithWrapper {
		e.Wrapper = a.Wrapper
	}
	return e
}

// LibraryPath names the library code a raw run exercised on backend b: the
// go-redis path or the valkey-go one (Admission.Path).
func LibraryPath(b client.Backend, goRedis, valkeyGo string) string {
	switch b {
	case client.BackendGoRedis:
		return "go-redis " + goRedis
	case client.BackendValkeyGo:
		return "valkey-go " + valkeyGo
	}
	return string(b)
}
