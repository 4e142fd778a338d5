package audit

// MutantAnnounceBeforeAppend is a Redis Stream writer that announces the
// entries it takes from the audit queue (WriterOptions.OnAppended: their
// obligations become durable) before its append puts them in the stream.
// The stream is "the durable boundary for v0.4" (spec 002 §4.1); a
// process killed between the two has acknowledged entries it never wrote,
// so the loss reaches entries its operator was told were durable.
const MutantAnnounceBeforeAppend Mutant = "writer/announce-before-append"
