package client

import (
	"strings"
	"testing"
)

// A test binary has no dependency build info: the version comes from what
// the build recorded (-ldflags -X, LinkFlags), or says it is unknown —
// never a version written by hand.
func TestVersionFromTheBuild(t *testing.T) {
	saved := linkedGoRedis
	t.Cleanup(func() { linkedGoRedis = saved })
	linkedGoRedis = ""
	if v := backendVersion(BackendGoRedis); !strings.Contains(v, unknownVersion) {
		t.Errorf("no recorded version: %q, want it unknown", v)
	}
	linkedGoRedis = "v9.1.0"
	if v := backendVersion(BackendGoRedis); v != "go-redis v9.1.0" {
		t.Errorf("recorded version: %q", v)
	}
	if f := LinkFlags(map[string]string{goRedisModule: "v9.1.0", valkeyGoModule: "v1.0.50"}); f != "-X github.com/slotgate/slotgate/impl/client.linkedGoRedis=v9.1.0 -X github.com/slotgate/slotgate/impl/client.linkedValkeyGo=v1.0.50" {
		t.Errorf("LinkFlags: %q", f)
	}
}

// The linked go-redis (go.mod's) has Cmder.NoRetry, so its label carries no
// warning; a build without it says so in every label.
func TestVersionLabelWarnsWithoutNoRetry(t *testing.T) {
	if !goRedisHonorsNoRetry {
		t.Skip("this build links a go-redis without Cmder.NoRetry")
	}
	if v := backendVersion(BackendGoRedis); strings.Contains(v, goRedisNoRetryMissing) {
		t.Errorf("label %q warns though NoRetry exists", v)
	}
	goRedisHonorsNoRetry = false
	t.Cleanup(func() { goRedisHonorsNoRetry = true })
	if v := backendVersion(BackendGoRedis); !strings.Contains(v, goRedisNoRetryMissing) {
		t.Errorf("label %q does not warn", v)
	}
}
