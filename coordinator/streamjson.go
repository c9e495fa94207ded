package coordinator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// MarshalJSON writes a stream as run results and stored documents have
// always had it: the receiver's account (receiver.StreamReport's keys, in
// its order) with the sender's count after the destination port, the
// loss after what arrived, and the first frame, when known, before the
// first arrival. Only those three keys and their places are named here:
// a counter the receiver's account gains is written where its struct
// puts it, with nothing to change in this package. Reading needs nothing
// of this: keys are matched by name.
func (s Stream) MarshalJSON() ([]byte, error) {
	account, err := json.Marshal(s.StreamReport)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(account))
	if _, err := d.Token(); err != nil { // {
		return nil, fmt.Errorf("stream %s → %s:%d: %w", s.Src, s.Dst, s.DstPort, err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(key string, value []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(key))
		b.WriteByte(':')
		b.Write(value)
	}
	number := func(v uint64) []byte { return strconv.AppendUint(nil, v, 10) }
	firstFrame := func() {
		if s.FirstFrameNs != 0 {
			member("first_frame_ns", number(s.FirstFrameNs))
		}
	}
	framed := false
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("stream %s → %s:%d: %w", s.Src, s.Dst, s.DstPort, err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := d.Decode(&value); err != nil {
			return nil, fmt.Errorf("stream %s → %s:%d: %s: %w", s.Src, s.Dst, s.DstPort, key, err)
		}
		if key == "first_arrival_ns" {
			firstFrame()
			framed = true
		}
		member(key, value)
		switch key {
		case "dst_port":
			member("sent", number(s.Sent))
		case "received":
			member("lost", number(s.Lost))
		}
	}
	if !framed {
		firstFrame()
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
