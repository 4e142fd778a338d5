package history

// TelemetrySample is one sample of a scraped metric family.
type TelemetrySample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// TelemetryScrape is one scrape of a pod's metrics endpoint as a Prometheus
// server would read it.
type TelemetryScrape struct {
	// Status is the HTTP status; Err a transport, collection or parse error.
	Status  int
	Err     string
	Samples []TelemetrySample
}
