package harness

import (
	"fmt"
	"os"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
)

// providerFromEnv reads the provider and its images.
func (c *Config) providerFromEnv() error {
	c.Provider = fixtures.ProviderLocal
	if v := os.Getenv(EnvProvider); v != "" {
		p, err := ParseProvider(v)
		if err != nil {
			return err
		}
		c.Provider = p
	}
	c.ValkeyImage = os.Getenv(EnvValkeyImage)
	c.PostgresImage = os.Getenv(EnvPostgresImage)
	if c.Provider == fixtures.ProviderExternal {
		// The target's endpoints, credentials and --allow-flush, under the
		// names slotgate run and preflight set (fixtures.Env*).
		ext, err := fixtures.ExternalFromEnv()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadConfig, err)
		}
		if err := ext.Validate(); err != nil {
			return fmt.Errorf("%w: %s=external: %v", ErrBadConfig, EnvProvider, err)
		}
		c.External = ext
	}
	return nil
}

// ProviderOptions are the fixtures options that put c's servers where c
// says: Start passes them to fixtures.Run, and a suite that starts its own
// PostgreSQL passes them to fixtures.RunPostgres, so a row runs unchanged
// on any provider — on the external one Run and RunPostgres attach to the
// target's endpoints instead of starting servers.
func (c Config) ProviderOptions() []fixtures.Option {
	opts := []fixtures.Option{
		fixtures.WithProvider(c.Provider),
		fixtures.WithValkeyImage(c.ValkeyImage),
		fixtures.WithPostgresImage(c.PostgresImage),
	}
	if c.Provider == fixtures.ProviderExternal {
		opts = append(opts, fixtures.WithExternal(c.External))
	}
	return opts
}

// Secure fills o's credentials and TLS from t (Topology.Credentials): an
// external target's user, password and TLS. Every pool and subscriber a
// suite opens goes through it (or through Pool), so a row runs unchanged on
// a target that needs a password; on a topology slotgate started
// it changes nothing. Credentials o already names win.
func Secure(t *fixtures.Topology, o client.Options) client.Options {
	if t == nil {
		return o
	}
	cred := t.Credentials()
	if o.Username == "" && o.Password == "" {
		o.Username, o.Password = cred.Username, cred.Password
	}
	if o.TLS == nil {
		o.TLS = cred.TLS
	}
	return o
}
