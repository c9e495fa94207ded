package coordinator

import "encoding/json"

// UnmarshalJSON reads a flow, taking the refused frames of a document
// stored before they had that name from "not_sent": the same count (the
// senders' errors, each frame sent again), under a name that said they
// never went.
func (f *Flow) UnmarshalJSON(b []byte) error {
	type plain Flow
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	return readNotSent(b, &f.Refused)
}

// UnmarshalJSON reads a direction's totals, with "not_sent" as Flow's.
func (t *DirectionTotal) UnmarshalJSON(b []byte) error {
	type plain DirectionTotal
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	return readNotSent(b, &t.Refused)
}

// readNotSent sets refused from the object b's "not_sent", when it has
// one and no "refused".
func readNotSent(b []byte, refused *uint64) error {
	if *refused != 0 {
		return nil
	}
	var old struct {
		NotSent *uint64 `json:"not_sent"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	if old.NotSent != nil {
		*refused = *old.NotSent
	}
	return nil
}
