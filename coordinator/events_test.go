package coordinator

import (
	"encoding/json"
	"strings"
	"testing"
)

// The stream's last line is the result's own object, "event": "result"
// first; anything but an object is refused.
func TestResultEvent(t *testing.T) {
	ev, err := ResultEvent(&Result{RunID: "r1", Status: StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(ev, &got); err != nil || !strings.HasPrefix(string(ev), `{"event":"result",`) || got["run_id"] != "r1" || got["status"] != StatusOK {
		t.Errorf("event %s (%v)", ev, err)
	}
	if _, err := ResultEvent([]int{1}); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("an array: %v", err)
	}
}
