// Package campaign turns runs into campaigns: a spec names the agents,
// frame sizes, rates or a throughput search, durations and repetitions;
// the campaign runs one trial (one coordinator run) after another and
// records every trial in a results document.
//
// A [Spec] comes from a YAML file ([Parse]) or from flags ([FromOptions]);
// both validate it the same way and keep the spec as given for the record.
// [Runner.RunCampaign] runs it: a sweep runs each size at each rate, a
// search hands each size to coordinator/search with a trial function that
// performs one run. Every trial reports an [Event] (`--json-stream`), and
// the document it returns is complete also when the campaign ended early.
// The package itself touches no host: it reaches agents only through the
// Runner's Run and Cluster.
package campaign
