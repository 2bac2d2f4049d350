package history

import (
	"encoding/json"
	"testing"
)

func TestReadRequestJSON(t *testing.T) {
	tests := []struct {
		req  ReadRequest
		json string
	}{
		{req: ReadRequest{Path: "src/main.go"}, json: `"src/main.go"`},
		{req: ReadRequest{Path: "a.go", StartLine: 3, EndLine: 9}, json: `{"path":"a.go","startLine":3,"endLine":9}`},
		{req: ReadRequest{Path: "a.go", StartLine: 5}, json: `{"path":"a.go","startLine":5}`},
		{req: ReadRequest{Path: "a.go", EndLine: 5}, json: `{"path":"a.go","endLine":5}`},
	}
	for _, tc := range tests {
		data, err := json.Marshal(tc.req)
		if err != nil || string(data) != tc.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.req, data, err, tc.json)
		}
		var back ReadRequest
		if err := json.Unmarshal([]byte(tc.json), &back); err != nil || back != tc.req {
			t.Errorf("Unmarshal(%s) = %+v, %v", tc.json, back, err)
		}
	}
	// A list mixing both forms, as a state file holds it.
	var list []ReadRequest
	if err := json.Unmarshal([]byte(`["a.go", {"path": "b.go", "startLine": 1, "endLine": 2}]`), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0] != (ReadRequest{Path: "a.go"}) || list[1] != (ReadRequest{Path: "b.go", StartLine: 1, EndLine: 2}) {
		t.Errorf("mixed list = %+v", list)
	}
	for _, bad := range []string{`42`, `["a.go"]`, `{"path": 3}`, `true`} {
		var r ReadRequest
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, r)
		}
	}
}
