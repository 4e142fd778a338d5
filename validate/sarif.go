package validate

import (
	"encoding/json"
	"io"
	"path/filepath"
)

// WriteSARIF writes findings as a SARIF 2.1.0 log (one run, every rule described), the
// format CI code-scanning dashboards ingest.
func WriteSARIF(w io.Writer, findings []Finding) error {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription msg    `json:"shortDescription"`
	}
	type region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	type artifact struct {
		URI string `json:"uri"`
	}
	type physical struct {
		ArtifactLocation artifact `json:"artifactLocation"`
		Region           region   `json:"region"`
	}
	type location struct {
		PhysicalLocation physical `json:"physicalLocation"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   msg        `json:"message"`
		Locations []location `json:"locations"`
	}
	type driver struct {
		Name           string `json:"name"`
		InformationURI string `json:"informationUri,omitempty"`
		Rules          []rule `json:"rules"`
	}
	type tool struct {
		Driver driver `json:"driver"`
	}
	type run struct {
		Tool    tool     `json:"tool"`
		Results []result `json:"results"`
	}
	type log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}
	d := driver{Name: "slotgate-validate", InformationURI: "https://github.com/slotgate/slotgate"}
	for _, r := range Rules {
		d.Rules = append(d.Rules, rule{ID: string(r.ID), ShortDescription: msg{r.Desc}})
	}
	results := []result{}
	for _, f := range findings {
		results = append(results, result{
			RuleID:  string(f.Rule),
			Level:   "error",
			Message: msg{f.Message},
			Locations: []location{{physical{
				ArtifactLocation: artifact{URI: filepath.ToSlash(f.File)},
				Region:           region{StartLine: f.Line, StartColumn: f.Col},
			}}},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []run{{Tool: tool{Driver: d}, Results: results}},
	})
}
