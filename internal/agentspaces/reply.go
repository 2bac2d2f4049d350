package agentspaces

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/courier-agent/courier/internal/command"
)

// Reply is a chat reply read for its operations.
type Reply struct {
	// Session and Sequence are what the reply copied from the request's
	// header (lower case; "" and 0 if none), to route it.
	Session  string
	Sequence int
	// Commands are the operations of every message, in order, with
	// command.ParseError entries for what could not be used; a reply of
	// message operations only ends in a command.Done.
	Commands []command.Command
}

// maxProblems caps the entries for broken messages in one reply; one last
// entry counts the rest.
const maxProblems = 100

const noMessage = `your reply holds no operations message, so nothing was done. Reply with one JSON object {"protocolVersion": "1.0", "operations": [...]} in a ` + "```json" + ` fence`

// ParseReply reads the operations a chat LLM wrote in its reply. It never
// fails: what it cannot use becomes a command.ParseError saying where and
// why, the validation error event the LLM reads.
//
// It finds operations messages as chat interfaces produce them: fenced or
// bare, among prose, with comments and trailing commas, one object or
// several, run in order. An object counts when it has an "operations"
// member. A message that is not valid JSON is reported as a whole and none
// of it runs. "protocolVersion" may be left out, but must be "1.0".
func ParseReply(text string) Reply {
	if len(text) > MaxMessageBytes {
		return Reply{Commands: []command.Command{{Type: command.ParseError,
			Error: fmt.Sprintf("your reply is larger than %d MiB, so nothing was done; send smaller steps", MaxMessageBytes>>20)}}}
	}
	s := scan(text)
	lines := newLineIndex(text)
	var r Reply
	var cmds []command.Command
	problems, found := 0, false
	for _, p := range s.pieces {
		if !p.hasOps {
			continue
		}
		// The message's own line first: positions asked in order.
		line := lines.line(p.start)
		m, err := readMessage(s.json(p), p.start, lines, false)
		switch {
		case err == nil && p.broken:
			err = &MessageError{Line: line, Reason: "the JSON ends before the message is complete"}
		case err == nil && !m.hasOps:
			continue // "operations" was only a value: not a message
		case err == nil:
			err = m.checkVersion(false)
			found = found || err == nil
		}
		if err == nil && len(cmds)+len(m.ops) > MaxOperations {
			err = fmt.Errorf("the reply has more than %d operations; send at most %d at a time", MaxOperations, MaxOperations)
		}
		if err != nil {
			problems++
			if problems <= maxProblems {
				cmds = append(cmds, command.Command{Type: command.ParseError, Line: line,
					Error: fmt.Sprintf("the operations message at line %d was not run: %v", line, err)})
			}
			continue
		}
		if r.Session == "" {
			r.Session = m.session
		}
		if r.Sequence == 0 {
			r.Sequence = m.sequence
		}
		cmds = addOps(cmds, m.ops, lines)
	}
	if problems > maxProblems {
		cmds = append(cmds, command.Command{Type: command.ParseError,
			Error: fmt.Sprintf("%d more broken operations messages were not run", problems-maxProblems)})
	}
	if !found && problems == 0 {
		cmds = append(cmds, command.Command{Type: command.ParseError, Error: noMessage + loneOperation(s, lines)})
	}
	r.Commands = cmds
	markFinal(r.Commands)
	return r
}

// loneOperation explains operations written without the message around
// them, not run since a JSON example in prose looks the same.
func loneOperation(s *scanner, lines *lineIndex) string {
	for _, p := range s.pieces {
		if !p.hasType || p.hasOps {
			continue
		}
		var f fields
		if json.Unmarshal(s.json(p), &f) != nil {
			continue
		}
		if t, _, err := f.str("type", true); err == nil && slices.Contains(opTypes(), OpType(t)) {
			return fmt.Sprintf(`. The %s operation at line %d is not inside an operations message: put operations in the "operations" array`, t, lines.line(p.start))
		}
	}
	return ""
}

// markFinal makes the last message of a reply of messages only a
// command.Done, the protocol's final response.
func markFinal(cmds []command.Command) {
	if len(cmds) == 0 {
		return
	}
	for _, c := range cmds {
		if c.Type != command.Message {
			return
		}
	}
	cmds[len(cmds)-1].Type = command.Done
}
