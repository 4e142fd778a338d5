package judge

// MeshKillRun is a mesh process SIGKILLed with audit entries in flight: the
// Redis Stream writer cut off from the tenant's stream, the hot path still
// accepting (spec 002 §6: in-flight audit-queue entries not yet in the
// stream at restart are lost; §4.1: the stream is the durable boundary).
type MeshKillRun struct {
	Tenant string
	// Accepted are the signal ids the process answered 200, in order; the
	// last DuringOutage of them were sent while the writer was cut off.
	Accepted     []string
	DuringOutage int
	// Acked is marconi_obligations_durable_total for the tenant at the last
	// scrape before the kill: how many entries the process had declared
	// durable (every send carried an obligation, and an obligation is
	// durable once the writer announces its entry appended).
	Acked float64
	// Depth is marconi_audit_queue_depth for the tenant at that scrape;
	// Batch the writer's batch, the most entries it holds outside the queue.
	Depth float64
	Batch int
	// SentAfterScrape counts sends between the last scrape and the kill.
	SentAfterScrape int
	// ScrapeErr is the last scrape's error, if any.
	ScrapeErr string
	// Killed: the process ended by SIGKILL, as its exit status says.
	Killed bool
	// Exit is the process's exit status as the runner saw it.
	Exit string
	// Streamed counts each signal id in the tenant's stream after the kill.
	Streamed map[string]int
}
