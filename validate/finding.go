// Package validate is slotgate's static locality validator (spec 000 §Conformance,
// "Locality contract"; Axiom A2): pure static analysis over the workspace, no servers.
// Its Lua rule rejects every redis.call / redis.pcall whose key argument is not taken
// from KEYS — keys reached outside KEYS bypass the server's CROSSSLOT check, succeed on
// a single shard and break silently the moment slots split, which A2 forbids.
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
	{RuleMultiKeyCmd, "locality contract: a multi-key client command whose keys are not provably one slot and carry no //slotgate:same-slot or //slotgate:per-key-scatter annotation"},
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
