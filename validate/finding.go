// Package validate is slotgate's static locality validator (spec 000 §Conformance,
// "Locality contract"; Axiom A2): static analysis over the workspace. Where each command's
// keys are comes from the server itself (Table, read from COMMAND by the caller — the
// CLI and rows/locality); the hand table is only the fallback when no server is reachable.
// Its Lua rule rejects every redis.call / redis.pcall whose key argument is not taken
// from KEYS — keys reached outside KEYS bypass the server's CROSSSLOT check, succeed on
// a single shard and break silently the moment slots split, which A2 forbids. Its Go rule
// (gocmd.go) requires every multi-key command, script call, pipeline and transaction to
// carry keys provably in one slot, or a declaration at the call site; the annotation forms
// are documented there and in `slotgate validate --help`. Its runtime twin, over the
// client.Pool seam, is package validate/locality.
package validate

import "fmt"

// Rule names one check. Every Lua rule is a flavour of A2's "undeclared key access";
// the split says what the key was taken from, so a fixture can pin the exact cause.
type Rule string

const (
	RuleKeyFromARGV    Rule = "lua/key-from-argv"   // key argument reads ARGV
	RuleKeyLiteral     Rule = "lua/key-literal"     // key argument is a string literal
	RuleKeyUnbound     Rule = "lua/key-unbound"     // key argument is a variable not provably bound to KEYS[n]
	RuleKeyComputed    Rule = "lua/key-computed"    // key argument is any other expression (e.g. KEYS[1]..':x')
	RuleDynamicCommand Rule = "lua/dynamic-command" // command name is not a string literal, so its keys cannot be checked
	RuleUnknownCommand Rule = "lua/unknown-command" // command not in the key-position table (fail closed)
	RuleLuaAnnotation  Rule = "lua/bad-annotation"  // a -- slotgate:allow that may not waive what it names, or has no reason

	RuleMultiKeyCmd  Rule = "go/multi-key-cmd"  // one multi-key command whose keys are not provably one slot
	RuleScriptKeys   Rule = "go/script-keys"    // a script call whose declared KEYS are not provably one slot
	RulePipelineKeys Rule = "go/pipeline-keys"  // a pipeline spanning slots without a per-key-scatter declaration
	RuleTxKeys       Rule = "go/tx-keys"        // a transaction (MULTI/EXEC) whose keys are not provably one slot
	RuleGoAnnotation Rule = "go/bad-annotation" // a //slotgate: annotation that is unknown, unjustified or misplaced
	RuleRuntimeKeys  Rule = "go/runtime-keys"   // keys (or a pipeline's commands) built at run time in a loop, undeclared
)

// Rules lists every rule with a one-line description, in a stable order (SARIF rule metadata).
var Rules = []struct {
	ID   Rule
	Desc string
}{
	{RuleKeyFromARGV, "undeclared key access (A2): a redis.call key argument is taken from ARGV, not KEYS"},
	{RuleKeyLiteral, "undeclared key access (A2): a redis.call key argument is a string literal, not KEYS"},
	{RuleKeyUnbound, "undeclared key access (A2): a redis.call key argument is a variable not provably bound to KEYS[n]"},
	{RuleKeyComputed, "undeclared key access (A2): a redis.call key argument is computed, not a declared KEYS[n]"},
	{RuleDynamicCommand, "undeclared key access (A2): the redis.call command name is not a literal, so its keys cannot be checked"},
	{RuleUnknownCommand, "undeclared key access (A2): the command's key positions are unknown to the validator (add it to the table)"},
	{RuleLuaAnnotation, "a -- slotgate:allow annotation that names an A2 key rule (an enforced prohibition, never waived) or gives no reason"},
	{RuleMultiKeyCmd, "locality contract: a multi-key command whose keys are not provably one slot and carry no //slotgate:same-slot or //slotgate:disabled-mode-only declaration"},
	{RuleScriptKeys, "locality contract (A2): a script call whose declared KEYS are not provably one slot and carry no //slotgate:same-slot or //slotgate:disabled-mode-only declaration"},
	{RulePipelineKeys, "locality contract: a pipeline whose commands span slots and whose call site does not declare //slotgate:per-key-scatter with its partial-failure handling"},
	{RuleTxKeys, "locality contract: a MULTI/EXEC transaction whose keys are not provably one slot (a transaction cannot be a per-key scatter)"},
	{RuleRuntimeKeys, "locality contract: a multi-key command, script call, pipeline or transaction whose keys come from a slice built at run time (appended in a loop, written element by element) — unproven unless the call site declares it"},
	{RuleGoAnnotation, "a //slotgate: annotation that is unknown, has no reason, or is placed where it cannot apply (per-key-scatter on a single command or a transaction)"},
}

// Finding is one violation at a source position.
type Finding struct {
	File    string
	Line    int
	Col     int
	Rule    Rule
	Message string
}

// String renders the finding as file:line: rule: message, the shape editors and CI parse.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Message)
}
