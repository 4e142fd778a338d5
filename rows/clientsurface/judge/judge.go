// Package judge holds the client-surface row's pure checkers: each takes
// what a scenario recorded (plain data defined here, no client types) and
// returns a Verdict. It imports nothing of slotgate — check, history and
// report reach the client libraries through impl/client — so `go list
// -deps` of this package names neither go-redis nor valkey-go, a stored
// run can be judged again offline, and every checker can be run on an
// edited record to prove it fails.
package judge

// Status is a verdict's outcome; its values are check.Status's.
type Status string

const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Unknown Status = "unknown" // a premise of the checker did not hold: never a silent pass
)

// Verdict is a checker's answer, field for field check.Result's.
type Verdict struct {
	Checker        string
	Status         Status
	Message        string
	Counterexample string
	Observed       []string
}
