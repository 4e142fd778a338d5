package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/report"
)

// `slotgate run --provider external`: the suites run against
// endpoints slotgate did not start. The flags and their environment
// variables are the ones `slotgate preflight` takes.

// externalFlags are the run flags that name an external target.
type externalFlags struct {
	ext       fixtures.External
	endpoints listFlag
	envErr    error // a malformed SLOTGATE_* boolean, reported once the provider is known
}

// register adds the external target's flags to fs, defaulting to the
// environment (flags win).
func (x *externalFlags) register(fs *flag.FlagSet) {
	env, err := fixtures.ExternalFromEnv()
	x.envErr = err
	x.ext = env
	x.endpoints = listFlag{vals: env.Endpoints}
	fs.Var(&x.endpoints, "endpoint", "external: `host:port` of a node or the configuration endpoint of the target cluster; repeatable or comma list (env "+fixtures.EnvEndpoint+")")
	fs.StringVar(&x.ext.Standalone, "standalone", env.Standalone, "external: `host:port` of a standalone (disabled-mode) primary, for the rows that run on one (env "+fixtures.EnvStandalone+")")
	fs.StringVar(&x.ext.PostgresDSN, "postgres", env.PostgresDSN, "external: PostgreSQL `DSN`, for the rows that need PostgreSQL (env "+fixtures.EnvPostgresDSN+", preferred: a DSN may hold a password)")
	fs.StringVar(&x.ext.Username, "user", env.Username, "external: ACL user (env "+fixtures.EnvUser+")")
	fs.StringVar(&x.ext.Password, "password", env.Password, "external: password (env "+fixtures.EnvPassword+", preferred: a flag is visible in the process list)")
	fs.BoolVar(&x.ext.TLS, "tls", env.TLS, "external: connect with TLS (env "+fixtures.EnvTLS+")")
	fs.StringVar(&x.ext.CACert, "cacert", env.CACert, "external: CA certificate `file` to verify the servers (env "+fixtures.EnvCACert+"; default system roots)")
	fs.StringVar(&x.ext.Cert, "cert", env.Cert, "external: client certificate `file` for mutual TLS (env "+fixtures.EnvCert+")")
	fs.StringVar(&x.ext.Key, "key", env.Key, "external: client key `file` for mutual TLS (env "+fixtures.EnvKey+")")
	fs.BoolVar(&x.ext.InsecureSkipVerify, "insecure-skip-verify", env.InsecureSkipVerify, "external: do not verify the server certificate — test targets only (env "+fixtures.EnvTLSInsecure+")")
	fs.BoolVar(&x.ext.AllowFlush, "allow-flush", env.AllowFlush, "external: required — lets every scenario start by FLUSHALL, SCRIPT FLUSH and FUNCTION FLUSH on the target, deleting ALL its data (env "+fixtures.EnvAllowFlush+")")
}

// target is the validated external settings with the endpoints.
func (x *externalFlags) target() fixtures.External {
	e := x.ext
	e.Endpoints = x.endpoints.vals
	return e
}

// probeTimeout bounds reaching every endpoint before any suite runs.
const probeTimeout = 30 * time.Second

// validateExternal refuses an external run that would flush without
// consent, has bad settings, or whose endpoints do not answer (all exit 2,
// before any suite starts), and returns what the target offers and the
// servers it found.
func validateExternal(x *externalFlags) (report.ExternalTarget, []string, error) {
	var target report.ExternalTarget
	usage := func(format string, args ...any) (report.ExternalTarget, []string, error) {
		return target, nil, fmt.Errorf("%w: --provider external: "+format, append([]any{errUsage}, args...)...)
	}
	if x.envErr != nil {
		return usage("%v", x.envErr)
	}
	e := x.target()
	if !e.AllowFlush {
		return usage("every scenario starts by flushing the target (FLUSHALL, SCRIPT FLUSH, FUNCTION FLUSH on every primary), " +
			"which deletes ALL of its data; pass --allow-flush (or " + fixtures.EnvAllowFlush + "=1) to confirm, and never point it at production")
	}
	if err := e.Validate(); err != nil {
		return usage("%v", err)
	}
	if _, err := e.TLSConfig(); err != nil {
		return usage("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var servers []string
	// Each endpoint is attached once, read-only, to prove it answers and is
	// of the kind its flag says; the suites attach again themselves.
	attach := func(flagName string, seeds []string, wantCluster bool) error {
		probe := e
		probe.Endpoints = seeds
		t, err := fixtures.Attach(ctx, probe)
		defer t.Close()
		if err != nil {
			return fmt.Errorf("%s %s: %v", flagName, strings.Join(seeds, ","), err)
		}
		if t.Spec.IsCluster() != wantCluster {
			kind := map[bool]string{true: "cluster-enabled (pass it as --endpoint)", false: "not cluster-enabled (pass a standalone node as --standalone)"}[t.Spec.IsCluster()]
			return fmt.Errorf("%s %s is %s", flagName, strings.Join(seeds, ","), kind)
		}
		servers = append(servers, fmt.Sprintf("%s (external %s at %s)", t.ServerVersion(), t.Spec, strings.Join(seeds, ",")))
		return nil
	}
	if len(e.Endpoints) > 0 {
		if err := attach("--endpoint", e.Endpoints, true); err != nil {
			return usage("%v", err)
		}
		target.Cluster = true
	}
	if e.Standalone != "" {
		if err := attach("--standalone", []string{e.Standalone}, false); err != nil {
			return usage("%v", err)
		}
		target.Standalone = true
	}
	if e.PostgresDSN != "" {
		pg, err := fixtures.RunPostgres(ctx, fixtures.WithProvider(fixtures.ProviderExternal), fixtures.WithExternal(e))
		if err != nil {
			return usage("--postgres: %v", err)
		}
		servers = append(servers, pg.Version()+" (external)")
		_ = pg.Close()
		target.Postgres = true
	}
	target.Secured = e.Username != "" || e.Password != "" || e.TLS
	return target, servers, nil
}

// externalEnv hands the target to the suites (harness.ConfigFromEnv reads
// it back with fixtures.ExternalFromEnv). Every variable is set, empty or
// not, so the suites see exactly what was validated, not a stale value
// from slotgate's own environment.
func externalEnv(e fixtures.External) []string {
	b := strconv.FormatBool
	return []string{
		fixtures.EnvEndpoint + "=" + strings.Join(e.Endpoints, ","),
		fixtures.EnvStandalone + "=" + e.Standalone,
		fixtures.EnvPostgresDSN + "=" + e.PostgresDSN,
		fixtures.EnvUser + "=" + e.Username,
		fixtures.EnvPassword + "=" + e.Password,
		fixtures.EnvTLS + "=" + b(e.TLS),
		fixtures.EnvCACert + "=" + e.CACert,
		fixtures.EnvCert + "=" + e.Cert,
		fixtures.EnvKey + "=" + e.Key,
		fixtures.EnvTLSInsecure + "=" + b(e.InsecureSkipVerify),
		fixtures.EnvAllowFlush + "=" + b(e.AllowFlush),
	}
}

// splitExternalRows decides which rows run on the target. A row that cannot
// gets its reason in notRun. Rows the user named stay requested, so the
// gate fails on them (a row asked for and not scored is not a pass); from
// the default selection they are dropped from the request and shown with
// their reason, and the headline says the catalogue was not cleared.
func splitExternalRows(rows []report.RowID, explicit bool, target report.ExternalTarget) (requested, run []report.RowID, notRun map[report.RowID]string) {
	notRun = map[report.RowID]string{}
	for _, id := range rows {
		reason := ""
		if implemented(id) {
			reason = report.ExternalReason(id, target)
		}
		if reason == "" {
			requested, run = append(requested, id), append(run, id)
			continue
		}
		notRun[id] = reason
		if explicit {
			requested = append(requested, id)
		}
	}
	return requested, run, notRun
}
