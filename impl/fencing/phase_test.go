package fencing

import (
	"strings"
	"testing"
)

func TestForPhaseKeyRules(t *testing.T) {
	s := Session{Community: "c", ID: "s1"}
	for _, p := range Phases {
		d := New(nil, Options{Scripts: ForPhase(p)})
		keys := d.KeyList(s)
		want := 2
		if p.Dual() {
			want = 4
		}
		if len(keys) != want || d.Phase() != p {
			t.Fatalf("%s: keys %v", p, keys)
		}
		switch p {
		case O:
			if keys[0] != OldKeys(s).Lease {
				t.Fatalf("O addresses %v", keys)
			}
		case A, B:
			if keys[0] != OldKeys(s).Lease || keys[3] != NewKeys(s).Generation {
				t.Fatalf("%s addresses %v", p, keys)
			}
		case C:
			if keys[0] != NewKeys(s).Lease {
				t.Fatalf("C addresses %v", keys)
			}
		}
	}
	if d := New(nil, Options{}); d.Phase() != C {
		t.Fatalf("zero options run %s, want C", d.Phase())
	}
}

func TestForPhaseMutant(t *testing.T) {
	for _, m := range MigrationMutants {
		for _, p := range Phases {
			s := ForPhaseMutant(p, m)
			applied := s.Acquire.SHA1 != ForPhase(p).Acquire.SHA1
			want := (m == M1 || m == M3) && p == B || (m == M2 || m == M5) && p == A
			if applied != want || applied != strings.Contains(s.Name, "+") {
				t.Fatalf("%s on %s: applied=%v want %v", m, p, applied, want)
			}
		}
		if m.Trips() == "" {
			t.Fatalf("%s trips nothing", m)
		}
	}
}

func TestPhaseGauge(t *testing.T) {
	m := NewPodMetrics("pod-0")
	for _, p := range Phases {
		m.SetPhase(p)
		got, err := m.ReadPhase()
		if err != nil || got != p {
			t.Fatalf("gauge read %s, %v; want %s", got, err, p)
		}
	}
}

func TestParseSession(t *testing.T) {
	s := Session{Community: "tunnel-x", ID: "s7-ab"}
	for _, k := range []Keyspace{KeyspaceOld, KeyspaceNew} {
		key := OldKeys(s).Generation
		if k == KeyspaceNew {
			key = NewKeys(s).Generation
		}
		got, ok := parseSession(k, key)
		if !ok || got != s {
			t.Fatalf("%s: parsed %v from %s", k, got, key)
		}
	}
}

func TestWithReadMutant(t *testing.T) {
	for _, m := range ReadMutants {
		applied := 0
		for _, p := range Phases {
			base := ForPhase(p)
			s := WithReadMutant(base, m)
			changed := s.Lookup.SHA1 != base.Lookup.SHA1 || s.Validate.SHA1 != base.Validate.SHA1
			if changed != m.Applies(p) || s.Acquire != base.Acquire || s.Renew != base.Renew || s.Release != base.Release {
				t.Fatalf("%s on %s: changed=%v applies=%v", m, p, changed, m.Applies(p))
			}
			if changed {
				applied++
			}
		}
		if applied == 0 || m.Op() == "" {
			t.Fatalf("%s applies to no phase", m)
		}
	}
	if s := WithReadMutant(ForPhase(A), ReadCorrect); s.Name != "A" {
		t.Fatalf("the correct read variant renamed A to %s", s.Name)
	}
}
