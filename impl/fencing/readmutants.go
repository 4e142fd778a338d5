package fencing

// WithReadMutant returns s with read mutant m applied when m touches s's
// phase; otherwise s unchanged. It composes with ForPhaseMutant (the write
// mutants replace acquire only).
func WithReadMutant(s Scripts, m ReadMutant) Scripts {
	p := s.Phase
	if p == "" {
		p = C
	}
	if !m.Applies(p) {
		return s
	}
	dual := p.Dual()
	s.Name += "+" + string(m)
	switch m {
	case ReadLookupOneKeyspace:
		s.Lookup = mustScript("mutants/read/lookup_one_keyspace.lua")
	case ReadKnownMin:
		s.Lookup = mustScript("mutants/read/known_min.lua")
	case ReadValidateOnePair:
		s.Validate = mustScript("mutants/read/validate_one_pair.lua")
	case ReadValidateOffByOne:
		if dual {
			s.Validate = mustScript("mutants/read/validate_off_by_one_dual.lua")
		} else {
			s.Validate = mustScript("mutants/read/validate_off_by_one.lua")
		}
	case ReadKnownFromLease:
		s.Lookup = mustScript("mutants/read/known_from_lease.lua")
	}
	return s
}
