package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/impl/marconi"
)

// TestForbiddenMarconiFlagsExitTwo: a MARCONI_* combination spec 002 §8
// forbids exits 2 at start, naming the rule; an allowed one (or none)
// passes the check.
func TestForbiddenMarconiFlagsExitTwo(t *testing.T) {
	cases := map[string]map[string]string{
		marconi.RuleStage5NeedsArchiverPrimary: {"MARCONI_HOT_PATH_SEND": "1", "MARCONI_AUDIT_QUEUE_WRITE": "1", "MARCONI_REDIS_STREAM_WRITER": "1"},
		marconi.RuleStage5NeedsAuditPipeline:   {"MARCONI_HOT_PATH_SEND": "1", "MARCONI_PG_ARCHIVER_PRIMARY": "1"},
		marconi.RuleTableReadsNeedStage2Hooks:  {"MARCONI_ROUTING_TABLE_READS": "on", "MARCONI_SESSION_EXPIRY": "off"},
		marconi.RuleArchiverShadowXorPrimary:   {"MARCONI_PG_ARCHIVER_SHADOW": "1", "MARCONI_PG_ARCHIVER_PRIMARY": "1"},
		marconi.RuleCrossInstanceReserved:      {"MARCONI_CROSS_INSTANCE_FORWARD": "yes"},
	}
	for rule, env := range cases {
		t.Run(rule, func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{"run", "--profile", "smoke", "--row", "marconi-stage-flags"}, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), "rule "+rule) {
				t.Errorf("message %q does not name rule %s", stderr.String(), rule)
			}
		})
	}
	environ := []string{"MARCONI_ROUTING_TABLE_READS=1"}
	get := func(k string) string {
		if k == "MARCONI_ROUTING_TABLE_READS" {
			return "1"
		}
		return ""
	}
	if err := validateMarconiEnv(get, environ); err != nil {
		t.Errorf("allowed combination refused: %v", err)
	}
}
