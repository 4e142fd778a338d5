package harness

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/report"
)

func TestAdmissionVerdicts(t *testing.T) {
	r := func(s check.Status) check.Result { return check.Result{Status: s, Message: string(s)} }
	for _, c := range []struct {
		raw, wrapped check.Status
		want         report.AdmissionVerdict
	}{
		{check.Pass, check.Pass, report.Admitted},
		{check.Pass, check.Unknown, report.Admitted},
		{check.Fail, check.Pass, report.AdmittedWithWrapper},
		{check.Fail, check.Fail, report.Refused},
		{check.Fail, check.Unknown, report.NotAssessed},
		{check.Fail, check.Inconclusive, report.NotAssessed},
		{check.Unknown, check.Pass, report.NotAssessed},
		{check.Inconclusive, check.Pass, report.NotAssessed},
	} {
		e := Admission{Backend: "go-redis", Requirement: report.RequirementRedirects, Raw: r(c.raw), Wrapped: r(c.wrapped), Wrapper: "impl/x"}.entry()
		if e.Verdict != c.want {
			t.Errorf("raw %s, wrapped %s: %s, want %s", c.raw, c.wrapped, e.Verdict, c.want)
		}
		if (e.Wrapper != "") != (c.want == report.AdmittedWithWrapper) {
			t.Errorf("raw %s, wrapped %s: wrapper %q named on a %s verdict", c.raw, c.wrapped, e.Wrapper, e.Verdict)
		}
	}
}
