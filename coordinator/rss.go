package coordinator

import recv "github.com/linerate/linerate/receiver"

// RSSSpread is how the run's test streams fell on the receive queues of
// receiving host name, on one line (receiver.SpreadText: queue by queue,
// the streams with packets on it and their packets, or why its method
// cannot tell); "" when name received no flow.
func (r *Result) RSSSpread(name string) string {
	var method recv.Method
	for _, h := range r.Hosts {
		if h.Name == name {
			method = recv.Method(h.Method)
		}
	}
	var streams []recv.StreamReport
	found := false
	for _, fl := range r.Flows {
		if fl.Receiver != name {
			continue
		}
		found = true
		for _, s := range fl.StreamDetail {
			streams = append(streams, s.StreamReport)
		}
	}
	if !found || method == "" {
		return ""
	}
	return recv.SpreadText(method, streams)
}
