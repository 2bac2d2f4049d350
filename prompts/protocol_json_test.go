package prompts_test

// An external test package, so that the front end it checks may use this
// package's texts without an import cycle.

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/prompts"
)

// The JSON protocol text teaches every operation, the reply's shape, the
// limits, where results come back and how a session ends, and stays
// shorter than the tag protocol's.
func TestProtocolJSONDocumentsEveryOperation(t *testing.T) {
	for _, want := range []string{
		"- message {", "- createFile {", "- readFile {", "- editFile {", "- deleteFile {", "- shell {",
		`"protocolVersion": "1.0"`, "```json", `"session": "<the session id>"`, `"sequence": <the sequence number>`,
		"255 characters", "10 MB", "100000 characters", "4096", "1000 to 3600000",
		`"category": "validation"`, "policyDenied", "timedOut", "CONTEXT section", "message operations only",
		"first occurrence", `"overwrite": true`, "base64",
	} {
		if !strings.Contains(prompts.ProtocolJSON, want) {
			t.Errorf("the JSON protocol text does not mention %q", want)
		}
	}
	if len(prompts.ProtocolJSON) > len(prompts.Protocol) {
		t.Errorf("the JSON protocol text (%d bytes) is longer than the tag protocol's (%d)", len(prompts.ProtocolJSON), len(prompts.Protocol))
	}
}

// The example reply, filled in as the LLM would, is a valid operations
// message that courier routes and runs; left as it is, with its
// placeholders, it runs nothing, so a reply quoting it is harmless.
func TestProtocolJSONExample(t *testing.T) {
	start := strings.Index(prompts.ProtocolJSON, "```json\n")
	end := strings.Index(prompts.ProtocolJSON[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no ```json example")
	}
	example := prompts.ProtocolJSON[start : start+8+end+3]
	filled := strings.NewReplacer("<the session id>", "a1b2c3d4", "<the sequence number>", "2").Replace(example)
	r := agentspaces.ParseReply(filled)
	var types []string
	for _, c := range r.Commands {
		types = append(types, string(c.Type))
	}
	if got := strings.Join(types, " "); got != "MESSAGE CREATE_FILE RUN_COMMAND" || r.Session != "a1b2c3d4" || r.Sequence != 2 {
		t.Errorf("the filled-in example gives %s, routed to %q %d: %+v", got, r.Session, r.Sequence, r.Commands)
	}
	if cmds := agentspaces.ParseReply(example).Commands; len(cmds) != 1 || cmds[0].Type != command.ParseError {
		t.Errorf("the example with its placeholders gives %+v", cmds)
	}
}
