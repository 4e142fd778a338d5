package marconi

// reasonStoreUnavailable is marconi_invalidator_errors_total's reason for
// an on_session_expired source that could not read or update the
// SessionStore (a Redis outage).
const reasonStoreUnavailable = "store_unavailable"

// MutantExpiryErrorsUncounted is an expiry sweeper that swallows its
// SessionStore errors: through a Redis outage it cannot learn which
// sessions expired, logs nothing and counts nothing, so
// marconi_invalidator_errors_total stays 0 while on_session_expired is
// blind (spec 002 §9: "non-fatal hook errors; non-zero in steady state is
// a paging incident" — this one never pages). Once Redis is back it
// catches up; only the count is missing.
const MutantExpiryErrorsUncounted Mutant = "expiry-errors-uncounted"

// expiryFailed counts a failure of the on_session_expired source (the
// expiry sweeper's SessionStore read or unroute) as a hook error of
// on_session_expired (§5 KeyspaceReaper is that hook's call site) and in
// the listener's own counter.
func (m *Mesh) expiryFailed(what string, err error) {
	if m.opts.Mutant == MutantExpiryErrorsUncounted {
		return
	}
	m.m.expiryListenErrs.Inc()
	m.m.hookErrors.WithLabelValues(string(HookSessionExpired), reasonStoreUnavailable).Inc()
	m.opts.Logf("marconi: expiry sweeper: %s: %v", what, err)
}
