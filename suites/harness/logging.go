package harness

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	"github.com/redis/go-redis/v9"
)

// go-redis logs dial failures and pool events to stderr through one
// process-wide logger. During a kill or a partition that is hundreds of
// lines a second in the run's progress output; they belong to the spec
// that caused them, so they go to GinkgoWriter (shown with -v and in a
// failed spec's output) instead.
func init() { redis.SetLogger(ginkgoLogger{}) }

type ginkgoLogger struct{}

func (ginkgoLogger) Printf(_ context.Context, format string, v ...any) {
	fmt.Fprintf(GinkgoWriter, "go-redis: "+format+"\n", v...)
}
