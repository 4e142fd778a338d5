package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// `slotgate model` passes with the spec's bounds: the correct model holds
// every invariant and each of M1–M9 is killed by the invariant the spec
// predicts.
func TestModelCommandPasses(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := cmdModel(nil, &stdout, &stderr); err != nil {
		t.Fatalf("cmdModel: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"17494 states generated, 5837 distinct states found",
		"TLC: 12636 generated, 3637 distinct",
		"correct: no invariant violated",
		"M1  killed by Inv_SingleAuthority, counterexample 8 steps",
		"M3  killed by Inv_Monotonic, counterexample 9 steps",
		"M9  killed by Inv_SlotRulesSafe, counterexample 1 steps",
		"all 9 mutants killed",
		"Inv_ReadSide holds in all 5837 states",
		"read known-min killed by Inv_ReadSide",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestModelCommandOneMutantWithTrace(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := cmdModel([]string{"--mutant", "m4", "--traces"}, &stdout, &stderr); err != nil {
		t.Fatalf("cmdModel: %v", err)
	}
	if out := stdout.String(); !strings.Contains(out, "M4  killed by Inv_SingleAuthority") || !strings.Contains(out, " 12. Acquire(p1)") {
		t.Errorf("output:\n%s", out)
	}
}

// A bound too small to reach the bug leaves the mutant alive: exit 1, not 0.
func TestModelCommandSurvivorFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := cmdModel([]string{"--mutant", "M8", "--pods", "1"}, &stdout, &stderr)
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(stdout.String(), "M8  SURVIVED Inv_SingleAuthority") {
		t.Fatalf("err %v, output:\n%s", err, stdout.String())
	}
}

func TestModelCommandBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--mutant", "M10"}, {"--pods", "0"}, {"--pods", "9"}, {"--max-gen", "0"}, {"--nope"}, {"extra"},
	} {
		var stdout, stderr bytes.Buffer
		if err := cmdModel(args, &stdout, &stderr); !errors.Is(err, errUsage) {
			t.Errorf("%v: err %v, want errUsage", args, err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := cmdModel([]string{"--help"}, &stdout, &stderr); !errors.Is(err, errHelp) {
		t.Errorf("--help: %v", err)
	}
}
