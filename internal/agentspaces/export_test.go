package agentspaces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/courier-agent/courier/internal/runner"
)

// ConformanceOverHTTP checks the conformance cases of programs' messages
// (mode ops) against the runtime a server runs on runner settings cfg:
// serve returns its address and token. Each turn is POST /v1/runs, a
// pause is answered with POST /v1/runs/{runId}/resume, and the events
// and the workspace are checked as 'courier ops' has them checked.
func ConformanceOverHTTP(t *testing.T, serve func(t *testing.T, cfg runner.Config) (base, token string)) {
	var cases []*conformanceCase
	for _, c := range loadConformance(t) {
		if c.mode() == "ops" {
			cases = append(cases, c)
		}
	}
	runConformance(t, cases, func(t *testing.T, c *conformanceCase, env conformanceEnv) caseResult {
		base, token := serve(t, engineConfig(t, env))
		post := func(path string, body []byte) EventsMessage {
			req, err := http.NewRequest("POST", base+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m EventsMessage
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("POST %s: %s: %v", path, resp.Status, err)
			}
			return m
		}
		var res caseResult
		for i, turn := range c.turns() {
			m := post("/v1/runs?policy="+c.policy(), turn.input)
			res.turns = append(res.turns, m)
			if data, ok := c.sections["approval.json"]; ok && i == 0 {
				resumed := post(fmt.Sprintf("/v1/runs/%s/resume", m.RunID), data)
				res.resumed = &resumed
			}
		}
		return res
	})
}
