package session_test

import (
	"encoding/json"
	"testing"

	"github.com/courier-agent/courier/internal/session"
)

func TestReadRequestJSON(t *testing.T) {
	tests := []struct {
		req  session.ReadRequest
		json string
	}{
		{req: session.ReadRequest{Path: "src/main.go"}, json: `"src/main.go"`},
		{req: session.ReadRequest{Path: "a.go", StartLine: 3, EndLine: 9}, json: `{"path":"a.go","startLine":3,"endLine":9}`},
		{req: session.ReadRequest{Path: "a.go", StartLine: 5}, json: `{"path":"a.go","startLine":5}`},
		{req: session.ReadRequest{Path: "a.go", EndLine: 5}, json: `{"path":"a.go","endLine":5}`},
	}
	for _, tc := range tests {
		data, err := json.Marshal(tc.req)
		if err != nil || string(data) != tc.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.req, data, err, tc.json)
		}
		var back session.ReadRequest
		if err := json.Unmarshal([]byte(tc.json), &back); err != nil || back != tc.req {
			t.Errorf("Unmarshal(%s) = %+v, %v", tc.json, back, err)
		}
	}
	// A list mixing both forms, as a state file holds it.
	var list []session.ReadRequest
	if err := json.Unmarshal([]byte(`["a.go", {"path": "b.go", "startLine": 1, "endLine": 2}]`), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0] != (session.ReadRequest{Path: "a.go"}) || list[1] != (session.ReadRequest{Path: "b.go", StartLine: 1, EndLine: 2}) {
		t.Errorf("mixed list = %+v", list)
	}
	for _, bad := range []string{`42`, `["a.go"]`, `{"path": 3}`, `true`} {
		var r session.ReadRequest
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, r)
		}
	}
}

func TestStatus(t *testing.T) {
	st := newState("0000000a", 0, false)
	tests := []struct {
		complete bool
		pending  *session.Pending
		undoing  *session.Undoing
		want     string
	}{
		{want: "waiting for reply"},
		{pending: &session.Pending{Command: "rm x"}, want: "awaiting approval"},
		{complete: true, want: "complete"},
		{complete: true, pending: &session.Pending{}, want: "complete"},
		{undoing: &session.Undoing{Turn: 2}, want: "undo interrupted"},
		{complete: true, undoing: &session.Undoing{Turn: 2}, want: "undo interrupted"},
	}
	for _, tc := range tests {
		st.IsComplete, st.Pending, st.Undoing = tc.complete, tc.pending, tc.undoing
		if got := st.Status(); got != tc.want {
			t.Errorf("Status(complete=%v, pending=%v, undoing=%v) = %q, want %q", tc.complete, tc.pending != nil, tc.undoing != nil, got, tc.want)
		}
	}
}
