package fencing

import "testing"

// Each lease mutant replaces exactly its own phase's renew or release: the
// other operations stay the set's, so a control judges one changed script.
func TestWithLeaseMutant(t *testing.T) {
	for _, m := range LeaseMutants {
		p, err := LeaseMutantPhase(m)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Embedded().WithLeaseMutant(m)
		if err != nil {
			t.Fatal(err)
		}
		want := ForPhase(p)
		if sc.Phase != p || sc.Name != string(p)+"+"+string(m) {
			t.Fatalf("%s: phase %s name %s", m, sc.Phase, sc.Name)
		}
		changed := 0
		for _, pair := range [][2]string{{sc.Acquire.SHA1, want.Acquire.SHA1}, {sc.Renew.SHA1, want.Renew.SHA1}, {sc.Release.SHA1, want.Release.SHA1}, {sc.Lookup.SHA1, want.Lookup.SHA1}, {sc.Validate.SHA1, want.Validate.SHA1}} {
			if pair[0] != pair[1] {
				changed++
			}
		}
		if changed != 1 {
			t.Fatalf("%s changes %d scripts of phase %s, want 1", m, changed, p)
		}
	}
	if _, err := Embedded().WithLeaseMutant("no-such"); err == nil {
		t.Fatal("an unknown lease mutant was accepted")
	}
}
