package coordinator

import "encoding/json"

// UnmarshalJSON reads a flow, taking the refused frames of a document
// stored before they had that name from "not_sent": the same count (the
// senders' errors, each frame sent again), under a name that said they
// never went.
func (f *Flow) UnmarshalJSON(b []byte) error {
	type plain Flow
	v := struct {
		*plain
		NotSent *uint64 `json:"not_sent"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.NotSent != nil && f.Refused == 0 {
		f.Refused = *v.NotSent
	}
	return nil
}

// UnmarshalJSON reads a direction's totals, with "not_sent" as Flow's.
func (t *DirectionTotal) UnmarshalJSON(b []byte) error {
	type plain DirectionTotal
	v := struct {
		*plain
		NotSent *uint64 `json:"not_sent"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.NotSent != nil && t.Refused == 0 {
		t.Refused = *v.NotSent
	}
	return nil
}
