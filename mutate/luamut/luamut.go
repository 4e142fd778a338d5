// Package luamut generates mutants of Lua scripts: small, deliberate bugs of
// the kinds the fencing protocol's safety rests on (spec 000 §Mechanized
// verification: each mutant must be killed by the invariant it trips). It is
// pure: source in, mutants out.
//
// Scripts are tokenized by gopher-lua's own scanner (the lexer of a real Lua
// 5.1 implementation, so strings, long brackets and comments are never
// mistaken for code), edited at token spans, and every mutant is re-parsed
// by gopher-lua's parser: a mutant that does not compile is dropped, never
// run.
package luamut

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/yuin/gopher-lua/parse"
)

// Operator names a kind of mutation.
type Operator string

const (
	OpRelational  Operator = "relational" // == ~= < <= > >= swapped
	OpPlusOne     Operator = "plus-one"   // + 1 → + 0 / + 2
	OpDropGuard   Operator = "drop-guard" // if … then … return … end removed
	OpSwapKeys    Operator = "swap-keys"  // KEYS[i] → KEYS[j]
	OpKeyFromArgv Operator = "key-argv"   // a declared key replaced by ARGV[1]
	OpKeyConcat   Operator = "key-concat" // KEYS[i] built by concatenation (same value, undeclared)
	OpTTL         Operator = "ttl"        // PX / PEXPIRE TTL ×10, ÷10, or dropped
	OpDropCall    Operator = "drop-call"  // a redis.call removed (statement) or replaced by false
)

// The edits' fixed texts.
const (
	maxDiffContext  = 2         // lines of context in a mutant's diff
	argvKey         = "ARGV[1]" // the undeclared key of OpKeyFromArgv
	concatSuffix    = " .. ''"  // the concatenation of OpKeyConcat
	dropCallValue   = "false"   // a dropped redis.call in an expression
	ttlScaleUp      = " * 10"   // OpTTL longer
	ttlScaleDownFmt = "math.floor(%s / 10)"
)

// Mutant is one mutated script.
type Mutant struct {
	// ID is stable for a given source: file, line, operator and edit.
	ID       string
	File     string
	Line     int
	Operator Operator
	// Desc says what changed ("< → <=").
	Desc string
	// Source is the whole mutated script.
	Source string
	// Diff is a unified diff against the original.
	Diff string
}

type tok struct {
	typ        int
	str        string
	start, end int // byte offsets; end exclusive (for string tokens, start+1)
	line       int
}

// tokens scans src with gopher-lua's scanner and maps positions to offsets.
func tokens(name, src string) ([]tok, error) {
	lineStart := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	sc := parse.NewScanner(strings.NewReader(src), name)
	var out []tok
	for {
		t, err := sc.Scan(&parse.Lexer{})
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", name, err)
		}
		if t.Type < 0 {
			return out, nil
		}
		if t.Pos.Line < 1 || t.Pos.Line > len(lineStart) {
			return nil, fmt.Errorf("scan %s: token %q at line %d outside the source", name, t.Str, t.Pos.Line)
		}
		if t.Str == "" && t.Type > 0 && t.Type < 128 {
			t.Str = string(rune(t.Type)) // the scanner leaves "." unnamed
		}
		start := lineStart[t.Pos.Line-1] + t.Pos.Column - 1
		end := start + len(t.Str)
		if t.Type == parse.TString {
			end = start + 1 // never edited inside; spans end at a later token
		}
		if end > len(src) || (t.Type != parse.TString && src[start:end] != t.Str) {
			return nil, fmt.Errorf("scan %s: token %q at %d:%d does not match the source", name, t.Str, t.Pos.Line, t.Pos.Column)
		}
		out = append(out, tok{typ: t.Type, str: t.Str, start: start, end: end, line: t.Pos.Line})
	}
}

// Compiles says src parses as Lua 5.1 (gopher-lua's parser).
func Compiles(name, src string) error {
	_, err := parse.Parse(strings.NewReader(src), name)
	return err
}

type edit struct {
	start, end int
	repl       string
	op         Operator
	desc       string
	line       int
}

// Generate returns every mutant of one script, in source order then operator
// order. A script that does not parse is an error; mutants that do not
// compile or equal the original or an earlier mutant are dropped.
func Generate(file, src string) ([]Mutant, error) {
	if err := Compiles(file, src); err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	toks, err := tokens(file, src)
	if err != nil {
		return nil, err
	}
	var edits []edit
	edits = append(edits, relational(toks)...)
	edits = append(edits, plusOne(toks)...)
	edits = append(edits, dropGuards(toks)...)
	edits = append(edits, keys(toks)...)
	edits = append(edits, ttl(toks)...)
	edits = append(edits, dropCalls(toks)...)
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })

	seen := map[string]bool{src: true}
	var out []Mutant
	for _, e := range edits {
		m := src[:e.start] + e.repl + src[e.end:]
		if seen[m] || Compiles(file, m) != nil {
			continue
		}
		seen[m] = true
		sum := sha1.Sum([]byte(m))
		out = append(out, Mutant{
			ID:   fmt.Sprintf("%s:%d:%s:%s", file, e.line, e.op, hex.EncodeToString(sum[:])[:6]),
			File: file, Line: e.line, Operator: e.op, Desc: e.desc, Source: m,
			Diff: Diff(file, src, m),
		})
	}
	return out, nil
}

// Diff is a unified diff of a script and its mutant: one hunk around the
// changed lines (a mutant is one edit), with two lines of context.
func Diff(file, a, b string) string {
	al, bl := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	from, ctxEnd := max(0, pre-maxDiffContext), min(suf, maxDiffContext)
	var s strings.Builder
	fmt.Fprintf(&s, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", file, file, from+1, len(al)-suf+ctxEnd-from, from+1, len(bl)-suf+ctxEnd-from)
	line := func(prefix, l string) {
		s.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
	}
	for _, l := range al[from:pre] {
		line(" ", l)
	}
	for _, l := range al[pre : len(al)-suf] {
		line("-", l)
	}
	for _, l := range bl[pre : len(bl)-suf] {
		line("+", l)
	}
	for _, l := range al[len(al)-suf : len(al)-suf+ctxEnd] {
		line(" ", l)
	}
	return s.String()
}

var relSwaps = map[string][]string{
	"==": {"~="}, "~=": {"=="},
	"<": {"<=", ">="}, "<=": {"<", ">"},
	">": {">=", "<="}, ">=": {">", "<"},
}

func relational(toks []tok) []edit {
	var out []edit
	for _, t := range toks {
		for _, r := range relSwaps[t.str] {
			if t.typ == parse.TString {
				continue
			}
			out = append(out, edit{t.start, t.end, r, OpRelational, t.str + " → " + r, t.line})
		}
	}
	return out
}

func plusOne(toks []tok) []edit {
	var out []edit
	for i := 1; i < len(toks); i++ {
		if toks[i].typ == parse.TNumber && toks[i].str == "1" && toks[i-1].str == "+" && toks[i-1].typ != parse.TString {
			for _, r := range []string{"0", "2"} {
				out = append(out, edit{toks[i].start, toks[i].end, r, OpPlusOne, "+ 1 → + " + r, toks[i].line})
			}
		}
	}
	return out
}

// blockEnd returns the index of the token that closes the block opened at
// toks[i] (if, function, do, repeat), or -1.
func blockEnd(toks []tok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].typ {
		case parse.TIf, parse.TFunction, parse.TDo, parse.TRepeat:
			depth++
		case parse.TEnd, parse.TUntil:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// dropGuards removes every `if … then … return … end` with no else branch:
// the guard clauses the fencing scripts' safety rests on.
func dropGuards(toks []tok) []edit {
	var out []edit
	for i, t := range toks {
		if t.typ != parse.TIf {
			continue
		}
		end := blockEnd(toks, i)
		if end < 0 {
			continue
		}
		depth, returns, branches := 0, false, false
		for j := i; j < end; j++ {
			switch toks[j].typ {
			case parse.TIf, parse.TFunction, parse.TDo, parse.TRepeat:
				depth++
			case parse.TEnd, parse.TUntil:
				depth--
			case parse.TElse, parse.TElseIf:
				branches = branches || depth == 1
			case parse.TReturn:
				returns = returns || depth == 1
			}
		}
		if returns && !branches {
			out = append(out, edit{t.start, toks[end].end, "", OpDropGuard, "guard removed: if … return … end", t.line})
		}
	}
	return out
}

// keyRef finds KEYS[n] at toks[i]: it returns n and the index of `]`.
func keyRef(toks []tok, i int) (n string, close int, ok bool) {
	if i+3 < len(toks) && toks[i].typ == parse.TIdent && toks[i].str == "KEYS" && toks[i+1].str == "[" && toks[i+2].typ == parse.TNumber && toks[i+3].str == "]" {
		return toks[i+2].str, i + 3, true
	}
	return "", 0, false
}

// inCall says toks[i] is an argument of a redis.call / redis.pcall.
func inCall(toks []tok, i int) bool {
	depth := 0
	for j := i - 1; j >= 2; j-- {
		switch toks[j].str {
		case ")":
			depth++
		case "(":
			if depth == 0 {
				return toks[j-1].typ == parse.TIdent && (toks[j-1].str == "call" || toks[j-1].str == "pcall") && toks[j-2].str == "."
			}
			depth--
		}
	}
	return false
}

// keys: swapped KEYS indexes (within a pair and across the old/new pairs of
// the dual scripts), and the first redis.call use of each key built by
// concatenation or taken from ARGV (undeclared keys: spec 000 Axiom A2).
func keys(toks []tok) []edit {
	maxKey := 0
	for i := range toks {
		if n, _, ok := keyRef(toks, i); ok {
			var k int
			fmt.Sscan(n, &k)
			maxKey = max(maxKey, k)
		}
	}
	var out []edit
	firstUse := map[string]bool{}
	for i := range toks {
		n, close, ok := keyRef(toks, i)
		if !ok {
			continue
		}
		var k int
		fmt.Sscan(n, &k)
		var partners []int
		if k%2 == 1 && k+1 <= maxKey {
			partners = append(partners, k+1) // lease → generation
		} else if k%2 == 0 {
			partners = append(partners, k-1)
		}
		if maxKey >= 4 { // old pair ↔ new pair
			if k <= 2 {
				partners = append(partners, k+2)
			} else {
				partners = append(partners, k-2)
			}
		}
		num := toks[i+2]
		for _, p := range partners {
			out = append(out, edit{num.start, num.end, fmt.Sprint(p), OpSwapKeys, fmt.Sprintf("KEYS[%d] → KEYS[%d]", k, p), num.line})
		}
		if inCall(toks, i) && !firstUse[n] {
			firstUse[n] = true
			span := toks[i].start
			out = append(out,
				edit{span, toks[close].end, "KEYS[" + n + "]" + concatSuffix, OpKeyConcat, "KEYS[" + n + "] → KEYS[" + n + "]" + concatSuffix + " (same key, built by concatenation)", toks[i].line},
				edit{span, toks[close].end, argvKey, OpKeyFromArgv, "KEYS[" + n + "] → " + argvKey + " (undeclared key)", toks[i].line})
		}
	}
	return out
}

// exprEnd returns the index of the last token of the simple expression
// starting at toks[i]: a name with [index] suffixes, or a literal.
func exprEnd(toks []tok, i int) int {
	j := i
	for j+1 < len(toks) && toks[j+1].str == "[" && toks[j+1].typ != parse.TString {
		depth := 0
		for k := j + 1; k < len(toks); k++ {
			if toks[k].str == "[" {
				depth++
			} else if toks[k].str == "]" {
				depth--
				if depth == 0 {
					j = k
					break
				}
			}
		}
		if toks[j].str != "]" {
			return -1
		}
	}
	return j
}

// ttl: the TTL argument after 'PX' (SET) and of PEXPIRE ×10 and ÷10, and
// SET's PX pair dropped (a lease that never expires).
func ttl(toks []tok) []edit {
	var out []edit
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.typ != parse.TString {
			continue
		}
		var arg int
		switch strings.ToUpper(t.str) {
		case "PX":
			arg = i + 2 // 'PX', X
		case "PEXPIRE":
			// 'PEXPIRE', KEYS[n], X
			k := i + 2
			if k >= len(toks) {
				continue
			}
			e := exprEnd(toks, k)
			if e < 0 || e+2 >= len(toks) || toks[e+1].str != "," {
				continue
			}
			arg = e + 2
		default:
			continue
		}
		if arg >= len(toks) || toks[arg-1].str != "," {
			continue
		}
		e := exprEnd(toks, arg)
		if e < 0 {
			continue
		}
		x := srcOf(toks, arg, e)
		a, b := toks[arg].start, toks[e].end
		out = append(out,
			edit{a, b, x + ttlScaleUp, OpTTL, "TTL " + x + " → " + x + ttlScaleUp, toks[arg].line},
			edit{a, b, fmt.Sprintf(ttlScaleDownFmt, x), OpTTL, "TTL " + x + " → " + fmt.Sprintf(ttlScaleDownFmt, x), toks[arg].line})
		if strings.ToUpper(t.str) == "PX" && i > 0 && toks[i-1].str == "," {
			out = append(out, edit{toks[i-1].start, b, "", OpTTL, "SET without PX " + x + " (a lease that never expires)", t.line})
		}
	}
	return out
}

// srcOf rebuilds the text of toks[a..b] (names, numbers and brackets only).
func srcOf(toks []tok, a, b int) string {
	var s strings.Builder
	for _, t := range toks[a : b+1] {
		s.WriteString(t.str)
	}
	return s.String()
}

// dropCalls removes each redis.call: a call statement is deleted, a call in
// an expression becomes false (a read that found nothing, a write that did
// not happen).
func dropCalls(toks []tok) []edit {
	var out []edit
	for i := 0; i+3 < len(toks); i++ {
		if toks[i].str != "redis" || toks[i].typ != parse.TIdent || toks[i+1].str != "." || (toks[i+2].str != "call" && toks[i+2].str != "pcall") || toks[i+3].str != "(" {
			continue
		}
		depth, close := 0, -1
		for j := i + 3; j < len(toks); j++ {
			if toks[j].typ == parse.TString {
				continue
			}
			if toks[j].str == "(" {
				depth++
			} else if toks[j].str == ")" {
				depth--
				if depth == 0 {
					close = j
					break
				}
			}
		}
		if close < 0 {
			continue
		}
		cmd := "?"
		if toks[i+4].typ == parse.TString {
			cmd = strings.ToUpper(toks[i+4].str)
		}
		repl, desc := dropCallValue, "redis.call('"+cmd+"', …) → "+dropCallValue
		if statementStart(toks, i) {
			repl, desc = "", "redis.call('"+cmd+"', …) removed"
		}
		out = append(out, edit{toks[i].start, toks[close].end, repl, OpDropCall, desc, toks[i].line})
	}
	return out
}

// statementStart says toks[i] begins a statement: the previous token ends a
// statement or opens a block.
func statementStart(toks []tok, i int) bool {
	if i == 0 {
		return true
	}
	p := toks[i-1]
	switch p.typ {
	case parse.TThen, parse.TDo, parse.TElse, parse.TEnd, parse.TNumber, parse.TString, parse.TIdent, parse.TNil, parse.TTrue, parse.TFalse:
		return true
	}
	return p.str == ")" || p.str == "]" || p.str == "}" || p.str == ";"
}

// Sample picks n of ms deterministically by seed, kept in their original
// order; n <= 0 or n >= len(ms) keeps them all.
func Sample[T any](ms []T, n int, seed int64) []T {
	if n <= 0 || n >= len(ms) {
		return ms
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d75746174650a))
	idx := rng.Perm(len(ms))[:n]
	slices.Sort(idx)
	out := make([]T, n)
	for i, j := range idx {
		out[i] = ms[j]
	}
	return out
}
