package agentspaces

import (
	"encoding/json"
	"fmt"

	"github.com/courier-agent/courier/internal/command"
)

// Reply is a chat reply read for its operations.
type Reply struct {
	// Session and Sequence are the "session" and "sequence" the reply's
	// message copied from the request's header (lower case; "" and 0 if
	// none), for routing it to the right request.
	Session  string
	Sequence int
	// Commands are the operations of every operations message in the
	// reply, in order, with command.ParseError entries for what could not
	// be used. A reply of message operations only ends the session: its
	// last message is a command.Done.
	Commands []command.Command
}

// maxProblems caps the entries for broken messages in one reply; the rest
// are counted in one last entry, so that a hostile reply cannot make
// courier build a million messages nobody reads.
const maxProblems = 100

// noMessage is the validation error of a reply that holds no operations
// message at all.
const noMessage = `your reply holds no operations message, so nothing was done. Reply with one JSON object {"protocolVersion": "1.0", "operations": [...]} in a ` + "```json" + ` fence`

// ParseReply reads the operations a chat LLM wrote in its reply (text as
// reply.Decode returns it). It never fails: what it cannot use becomes
// a command.ParseError whose Error, the validation error event the LLM
// reads, says where and why.
//
// It finds operations messages the way chat interfaces produce them: in a
// ```json fence, a fence with another tag or none, or bare JSON; with
// prose before, between and after; with // and /* */ comments and
// trailing commas; one object or several, whose operations run in the
// order written. An object counts when it has an "operations" member;
// other JSON (examples, configuration shown in prose) is ignored. A
// message that is not valid JSON is reported as a whole and none of its
// operations runs. "protocolVersion" may be left out, but another
// version than "1.0" is refused.
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
	problem := func(line int, reason string) {
		problems++
		if problems <= maxProblems {
			cmds = append(cmds, command.Command{Type: command.ParseError, Line: line, Error: reason})
		}
	}
	for _, p := range s.pieces {
		if !p.hasOps {
			continue
		}
		if (p.broken || len(cmds) >= MaxOperations) && problems >= maxProblems {
			problems++ // nothing of it would be shown or run
			continue
		}
		// Positions are asked in increasing order, which keeps counting
		// lines linear: the message's own line first.
		line := lines.line(p.start)
		if len(cmds) >= MaxOperations {
			problem(line, fmt.Sprintf("the operations message at line %d was not run: the reply has more than %d operations; send at most %d at a time", line, MaxOperations, MaxOperations))
			continue
		}
		m, err := readMessage(s.json(p), p.start, lines, false)
		switch {
		case err == nil && p.broken:
			err = &MessageError{Line: line, Reason: "the JSON ends before the message is complete"}
		case err == nil && !m.hasOps:
			continue // "operations" was only a value: not a message
		case err == nil:
			err = m.checkVersion(false)
		}
		if err != nil {
			problem(line, fmt.Sprintf("the operations message at line %d was not run: %v", line, err))
			continue
		}
		found = true
		if len(cmds)+len(m.ops) > MaxOperations {
			problem(line, fmt.Sprintf("the operations message at line %d was not run: the reply has more than %d operations; send at most %d at a time", line, MaxOperations, MaxOperations))
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

// loneOperation explains a reply whose operations were written without
// the message around them; they are not run, since a JSON example in prose
// looks the same.
func loneOperation(s *scanner, lines *lineIndex) string {
	for _, p := range s.pieces {
		if !p.hasType || p.hasOps {
			continue
		}
		var f fields
		if json.Unmarshal(s.json(p), &f) != nil {
			continue
		}
		if t, _, err := f.str("type", true); err == nil && isOpType(OpType(t)) {
			return fmt.Sprintf(`. The %s operation at line %d is not inside an operations message: put operations in the "operations" array`, t, lines.line(p.start))
		}
	}
	return ""
}

// markFinal makes the last message of a reply holding only message
// operations a command.Done: the protocol's final response, which ends a
// session.
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
