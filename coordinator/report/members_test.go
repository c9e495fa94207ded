package report

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator"
)

// `linerate members` prints what the code at 743d6ca printed
// (testdata/members.table.golden) for the members 743d6ca wrote as JSON
// (coordinator/testdata/members-743d6ca.json): the backends as they were
// announced, an unknown speed and health as "-".
func TestMembersTable(t *testing.T) {
	raw, err := os.ReadFile("../testdata/members-743d6ca.json")
	if err != nil {
		t.Fatal(err)
	}
	var ms []coordinator.Member
	if err := json.Unmarshal(raw, &ms); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Members(&got, ms); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/members.table.golden")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("members table\n%s\nwant (743d6ca)\n%s", got.Bytes(), want)
	}
}
