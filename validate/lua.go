package validate

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// CheckLua runs the Lua rule (A2) over one script's source. name is used only for the
// findings' File. Line numbers are offset by firstLine-1, so a script embedded in a Go
// string can be reported at its position in the Go file (pass 1 for a .lua file).
func CheckLua(name, src string, firstLine int) []Finding {
	return defaultTable.CheckLua(name, src, firstLine)
}

// CheckLua is the Lua rule with t's command table.
func (t *Table) CheckLua(name, src string, firstLine int) []Finding {
	allowed, out := luaAnnotations(name, src, firstLine)
	for _, f := range t.checkLuaCalls(name, src, firstLine) {
		if !allowed[annotKey{f.Line, f.Rule}] && !allowed[annotKey{f.Line - 1, f.Rule}] {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

func (t *Table) checkLuaCalls(name, src string, firstLine int) []Finding {
	toks := lexLua(src)
	bound, argv := keyBindings(toks)
	var out []Finding
	report := func(t luaTok, r Rule, format string, a ...any) {
		out = append(out, Finding{File: name, Line: t.line + firstLine - 1, Col: t.col, Rule: r,
			Message: "undeclared key access (A2): " + fmt.Sprintf(format, a...)})
	}
	for i := 0; i+3 < len(toks); i++ {
		if !isName(toks[i], "redis") || !isPunct(toks[i+1], ".") ||
			!(isName(toks[i+2], "call") || isName(toks[i+2], "pcall")) || !isPunct(toks[i+3], "(") {
			continue
		}
		if i > 0 && (isPunct(toks[i-1], ".") || isPunct(toks[i-1], ":")) {
			continue // x.redis.call is not the scripting API
		}
		fn := "redis." + toks[i+2].text
		args, _ := splitArgs(toks, i+3)
		i = i + 3 // nested calls inside the arguments are visited by the outer loop too
		if len(args) == 0 {
			continue
		}
		if len(args[0]) != 1 || args[0][0].kind != tokString {
			report(toks[i], RuleDynamicCommand, "%s command name %s is not a string literal", fn, render(args[0]))
			continue
		}
		cmd := strings.ToUpper(args[0][0].text)
		spec, keyless, ok := t.spec(cmd)
		if keyless {
			continue
		}
		if !ok {
			report(toks[i], RuleUnknownCommand, "%s(%q): key positions unknown; add %s to the validator's table", fn, cmd, cmd)
			continue
		}
		rest := args[1:]
		for n, arg := range rest {
			if !spec.isKeyPos(n+1, len(rest)) {
				continue
			}
			if isUnpackKeys(arg) {
				break // unpack(KEYS) expands to the declared keys; later positions are unknowable
			}
			if r, why := classifyKey(arg, bound, argv); r != "" {
				at := toks[i]
				if len(arg) > 0 {
					at = arg[0]
				}
				report(at, r, "%s key argument %d is %s, not KEYS[n]", cmd, n+1, why)
			}
		}
	}
	return out
}

// classifyKey returns "" when the key expression is provably a declared key, else the rule
// it breaks and a short description for the message.
func classifyKey(arg []luaTok, bound, argv map[string]bool) (Rule, string) {
	if isKeysIndex(arg) {
		return "", ""
	}
	if len(arg) == 1 && arg[0].kind == tokName && bound[arg[0].text] {
		return "", ""
	}
	for _, t := range arg {
		if isName(t, "ARGV") || (t.kind == tokName && argv[t.text]) {
			return RuleKeyFromARGV, fmt.Sprintf("%q (from ARGV)", render(arg))
		}
	}
	if len(arg) == 1 && arg[0].kind == tokString {
		return RuleKeyLiteral, fmt.Sprintf("the literal %q", arg[0].text)
	}
	if len(arg) == 1 && arg[0].kind == tokName {
		return RuleKeyUnbound, fmt.Sprintf("variable %q (not provably bound to KEYS[n])", arg[0].text)
	}
	return RuleKeyComputed, fmt.Sprintf("the expression %q", render(arg))
}

// keyBindings returns the names every binding of which (anywhere in the script) is a
// declared key: `local k = KEYS[1]`, `k = KEYS[2]`, `local a, b = KEYS[1], KEYS[2]`,
// `for _, k in ipairs({KEYS[1], KEYS[3]})`, `for _, k in ipairs(KEYS)`. Scoping is ignored on
// purpose: one non-key binding of a name anywhere (a parameter, ARGV, a call) makes every use
// of that name unproven. Conservative, never permissive. The second map holds names bound
// from ARGV somewhere (`local k = ARGV[1]`, `for _, k in ipairs(ARGV)`), for the message.
func keyBindings(toks []luaTok) (keys, argv map[string]bool) {
	good := map[string]bool{}
	bad := map[string]bool{}
	argv = map[string]bool{}
	taint := func(name string, ex []luaTok) {
		for _, t := range ex {
			if isName(t, "ARGV") {
				argv[name] = true
			}
		}
	}
	bind := func(name string, isKey bool) {
		if isKey {
			good[name] = true
		} else {
			bad[name] = true
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case isName(t, "for"):
			names, j := nameList(toks, i+1)
			if j < len(toks) && isName(toks[j], "in") && len(names) > 0 {
				exprEnd := j + 1
				for exprEnd < len(toks) && !isName(toks[exprEnd], "do") {
					exprEnd++
				}
				valueIsKey := iterOverKeys(toks[j+1 : exprEnd])
				for n, name := range names {
					bind(name, n == 1 && valueIsKey)
					if n == 1 {
						taint(name, toks[j+1:exprEnd])
					}
				}
			} else {
				for _, name := range names {
					bind(name, false) // numeric for: an index, never a key
				}
			}
		case isName(t, "function"):
			j := i + 1
			for j < len(toks) && !isPunct(toks[j], "(") {
				j++
			}
			params, _ := nameList(toks, j+1)
			for _, p := range params {
				bind(p, false)
			}
		case isPunct(t, "="):
			// Walk back over `name, name, ...` to the start of the target list; [local].
			var names []string
			j := i - 1
			for j >= 0 && toks[j].kind == tokName && !isKeyword(toks[j].text) {
				if j > 0 && (isPunct(toks[j-1], ".") || isPunct(toks[j-1], ":")) {
					names = nil // a field assignment, not a variable
					break
				}
				names = append([]string{toks[j].text}, names...)
				if j > 0 && isPunct(toks[j-1], ",") {
					j -= 2
					continue
				}
				break
			}
			if len(names) == 0 {
				continue
			}
			exprs := rhsExprs(toks, i+1)
			for n, name := range names {
				bind(name, n < len(exprs) && isKeysIndex(exprs[n]))
				if n < len(exprs) {
					taint(name, exprs[n])
				}
			}
		case isName(t, "local"):
			// `local x` with no initialiser binds nil.
			if i+1 < len(toks) && isName(toks[i+1], "function") {
				if i+2 < len(toks) {
					bind(toks[i+2].text, false)
				}
				continue
			}
			names, j := nameList(toks, i+1)
			if j >= len(toks) || !isPunct(toks[j], "=") {
				for _, name := range names {
					bind(name, false)
				}
			}
		}
	}
	keys = map[string]bool{}
	for name := range good {
		if !bad[name] {
			keys[name] = true
		}
	}
	return keys, argv
}

// iterOverKeys reports whether a generic-for explist iterates values that are all declared
// keys: ipairs/pairs over KEYS, or over a table constructor of KEYS[n] entries only.
func iterOverKeys(ex []luaTok) bool {
	if len(ex) < 3 || !(isName(ex[0], "ipairs") || isName(ex[0], "pairs")) || !isPunct(ex[1], "(") || !isPunct(ex[len(ex)-1], ")") {
		return false
	}
	inner := ex[2 : len(ex)-1]
	if len(inner) == 1 && isName(inner[0], "KEYS") {
		return true
	}
	if len(inner) < 2 || !isPunct(inner[0], "{") || !isPunct(inner[len(inner)-1], "}") {
		return false
	}
	elems := splitTop(inner[1:len(inner)-1], ",")
	if len(elems) == 0 {
		return false
	}
	for _, e := range elems {
		if len(e) == 0 { // trailing comma
			continue
		}
		if !isKeysIndex(e) {
			return false
		}
	}
	return true
}

// rhsExprs returns the expressions of an assignment's right side starting at tokens[i]: up to
// a statement keyword or ";" at bracket depth 0, else the end of the line of the last token,
// extended while brackets are open. Our scripts keep
// one statement per line; an unusual layout just yields fewer proven bindings.
func rhsExprs(toks []luaTok, i int) [][]luaTok {
	depth, j := 0, i
	for j < len(toks) {
		if depth == 0 && j > i && (isPunct(toks[j], ";") || (toks[j].kind == tokName && stmtKeyword[toks[j].text])) {
			break
		}
		switch toks[j].text {
		case "(", "{", "[":
			if toks[j].kind == tokPunct {
				depth++
			}
		case ")", "}", "]":
			if toks[j].kind == tokPunct {
				depth--
			}
		}
		j++
		if depth <= 0 && j < len(toks) && toks[j].line != toks[j-1].line {
			break
		}
	}
	return splitTop(toks[i:j], ",")
}

// splitArgs splits the call arguments that start at the "(" at toks[open] into top-level
// comma-separated slices, returning them and the index of the closing ")".
func splitArgs(toks []luaTok, open int) ([][]luaTok, int) {
	depth := 0
	for j := open; j < len(toks); j++ {
		if toks[j].kind != tokPunct {
			continue
		}
		switch toks[j].text {
		case "(", "{", "[":
			depth++
		case ")", "}", "]":
			depth--
			if depth == 0 {
				return splitTop(toks[open+1:j], ","), j
			}
		}
	}
	return splitTop(toks[open+1:], ","), len(toks)
}

// splitTop splits tokens on sep at bracket depth 0.
func splitTop(toks []luaTok, sep string) [][]luaTok {
	if len(toks) == 0 {
		return nil
	}
	var out [][]luaTok
	depth, start := 0, 0
	for j, t := range toks {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "{", "[":
			depth++
		case ")", "}", "]":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, toks[start:j])
				start = j + 1
			}
		}
	}
	return append(out, toks[start:])
}

// nameList reads `name {, name}` from toks[i], returning the names and the next index.
func nameList(toks []luaTok, i int) ([]string, int) {
	var names []string
	for i < len(toks) && toks[i].kind == tokName && !isKeyword(toks[i].text) {
		names = append(names, toks[i].text)
		i++
		if i < len(toks) && isPunct(toks[i], ",") {
			i++
			continue
		}
		break
	}
	return names, i
}

// isKeysIndex reports whether the expression is exactly KEYS[<anything>].
func isKeysIndex(e []luaTok) bool {
	return len(e) >= 4 && isName(e[0], "KEYS") && isPunct(e[1], "[") && isPunct(e[len(e)-1], "]") &&
		closes(e, 1) == len(e)-1
}

// isUnpackKeys reports whether the expression is unpack(KEYS) or table.unpack(KEYS).
func isUnpackKeys(e []luaTok) bool {
	if len(e) >= 3 && isName(e[0], "table") && isPunct(e[1], ".") {
		e = e[2:]
	}
	return len(e) == 4 && isName(e[0], "unpack") && isPunct(e[1], "(") && isName(e[2], "KEYS") && isPunct(e[3], ")")
}

// closes returns the index of the bracket closing the one at e[open], or -1.
func closes(e []luaTok, open int) int {
	depth := 0
	for j := open; j < len(e); j++ {
		if e[j].kind != tokPunct {
			continue
		}
		switch e[j].text {
		case "(", "{", "[":
			depth++
		case ")", "}", "]":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func render(e []luaTok) string {
	var b strings.Builder
	for k, t := range e {
		if k > 0 {
			prev := e[k-1]
			glue := (t.kind == tokPunct && strings.Contains("[]().:,", t.text)) ||
				(prev.kind == tokPunct && strings.Contains("[(.:", prev.text))
			if !glue {
				b.WriteByte(' ')
			}
		}
		if t.kind == tokString {
			b.WriteString("'" + t.text + "'")
		} else {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

func isName(t luaTok, s string) bool  { return t.kind == tokName && t.text == s }
func isPunct(t luaTok, s string) bool { return t.kind == tokPunct && t.text == s }

var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true, "false": true,
	"for": true, "function": true, "if": true, "in": true, "local": true, "nil": true, "not": true,
	"or": true, "repeat": true, "return": true, "then": true, "true": true, "until": true, "while": true,
}

// stmtKeyword holds the keywords that can only start (or end) a statement, never continue an
// expression: reaching one at depth 0 ends an assignment's right side.
var stmtKeyword = map[string]bool{
	"break": true, "do": true, "else": true, "elseif": true, "end": true, "for": true, "if": true,
	"local": true, "repeat": true, "return": true, "then": true, "until": true, "while": true,
}

func isKeyword(s string) bool { return luaKeywords[s] }

// annotKey is a rule waived at one line.
type annotKey struct {
	line int
	rule Rule
}

// luaAnnotation matches `-- slotgate:<directive> <rest>` in a Lua comment.
var luaAnnotation = regexp.MustCompile(`--\s*slotgate:(\S*)\s*(.*)$`)

// luaWaivable are the only Lua rules an annotation may waive: the two where the validator
// cannot see the command, so the author declares what it is. The A2 key rules are an
// enforced prohibition (spec 000 §Axioms A2: undeclared key access is forbidden, not
// observed) and are never waived; naming one is itself a finding.
var luaWaivable = map[Rule]bool{RuleUnknownCommand: true, RuleDynamicCommand: true}

// luaAnnotations reads every `-- slotgate:allow <rule> <why>` in src. The exact form: the
// directive, one rule id from luaWaivable, and a non-empty reason; it waives that rule on
// its own line and on the next. Anything else spelled `-- slotgate:` is reported as
// RuleLuaAnnotation and waives nothing.
func luaAnnotations(name, src string, firstLine int) (map[annotKey]bool, []Finding) {
	allowed := map[annotKey]bool{}
	var bad []Finding
	for i, text := range strings.Split(src, "\n") {
		m := luaAnnotation.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		line := i + firstLine
		directive, rest := text[m[2]:m[3]], strings.TrimSpace(text[m[4]:m[5]])
		rule, why, _ := strings.Cut(rest, " ")
		report := func(format string, a ...any) {
			bad = append(bad, Finding{File: name, Line: line, Col: m[0] + 1, Rule: RuleLuaAnnotation, Message: fmt.Sprintf(format, a...)})
		}
		switch {
		case directive != "allow":
			report("unknown annotation slotgate:%s (the only Lua annotation is `-- slotgate:allow <rule> <why>`)", directive)
		case !luaWaivable[Rule(rule)]:
			report("slotgate:allow %q: only %s and %s can be declared; undeclared key access (A2) is never waived", rule, RuleUnknownCommand, RuleDynamicCommand)
		case strings.TrimSpace(why) == "":
			report("slotgate:allow %s without a reason: say why the command's keys are safe", rule)
		default:
			allowed[annotKey{line, Rule(rule)}] = true
		}
	}
	return allowed, bad
}
