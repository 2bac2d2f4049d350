package agentspaces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
)

// MaxOperations is the most operations one message may hold, so that tiny
// operations cannot make courier build millions of commands and events.
const MaxOperations = 10_000

// MaxMessageBytes is the largest operations message courier reads: room
// for the largest allowed content with JSON escapes.
const MaxMessageBytes = 64 << 20

// MessageError is an operations message that cannot be run at all: the
// one error event of a run with status "error".
type MessageError struct {
	Line   int // 1-based, or 0
	Reason string
}

func (e *MessageError) Error() string { return e.Reason }

// Decode reads an operations message sent by a program (`courier ops`):
// one strict JSON object, maybe after a byte order mark. A message that
// cannot run as a whole gives a *MessageError; otherwise each operation
// becomes a command, a malformed one a command.ParseError saying what is
// wrong, so the batch runs on without it.
func Decode(data []byte) ([]command.Command, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(data) > MaxMessageBytes {
		return nil, &MessageError{Reason: fmt.Sprintf("the operations message is larger than the %d MiB limit", MaxMessageBytes>>20)}
	}
	lines := newLineIndex(string(data))
	m, err := readMessage(data, 0, lines, true)
	if err != nil {
		return nil, err
	}
	if !m.hasOps {
		return nil, &MessageError{Line: 1, Reason: `the message has no "operations" array; send {"protocolVersion": "1.0", "operations": [...]}`}
	}
	if err := m.checkVersion(true); err != nil {
		return nil, err
	}
	return addOps(nil, m.ops, lines), nil
}

// rawOp is one element of an operations array: an object's members, or
// notObject naming what it is instead, and where it starts.
type rawOp struct {
	fields    fields
	notObject string
	offset    int // byte offset in the whole input
}

// message is an operations message read but not yet validated.
type message struct {
	line     int // where the object starts
	hasOps   bool
	ops      []rawOp
	version  json.RawMessage // nil when absent
	session  string          // routing fields a chat reply copies from the request
	sequence int
}

// readMessage reads one JSON object, data, at byte base of the input, and
// collects its operations unvalidated. strict refuses anything after it.
func readMessage(data []byte, base int, lines *lineIndex, strict bool) (message, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	m := message{line: lines.line(base)}
	syntax := func(err error) error { return syntaxError(err, data, base, lines) }
	tok, err := dec.Token()
	if err != nil {
		return m, syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return m, &MessageError{Line: m.line, Reason: fmt.Sprintf("the operations message must be a JSON object, not %s", tokenKind(tok))}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m, syntax(err)
		}
		key, _ := tok.(string)
		if key == "operations" {
			if m.hasOps {
				return m, &MessageError{Line: lines.line(base + int(dec.InputOffset())), Reason: `"operations" appears twice in the message; send one array`}
			}
			m.hasOps = true
			if err := m.readOps(dec, data, base, lines); err != nil {
				if _, ok := err.(*MessageError); ok {
					return m, err
				}
				return m, syntax(err)
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return m, syntax(err)
		}
		switch key {
		case "protocolVersion":
			m.version = raw
		case "session":
			var s string
			if json.Unmarshal(raw, &s) == nil && len(s) <= 64 {
				m.session = strings.ToLower(strings.TrimSpace(s))
			}
		case "sequence":
			m.sequence = positiveInt(raw)
		}
	}
	if _, err := dec.Token(); err != nil {
		return m, syntax(err)
	}
	if rest := data[dec.InputOffset():]; strict && len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		off := base + len(data) - len(bytes.TrimLeft(rest, " \t\r\n"))
		return m, &MessageError{Line: lines.line(off), Reason: fmt.Sprintf("unexpected data after the operations message at %s; send exactly one JSON object", lines.where(off))}
	}
	return m, nil
}

// readOps reads the "operations" array one element at a time, each with
// its position for error messages.
func (m *message) readOps(dec *json.Decoder, data []byte, base int, lines *lineIndex) error {
	at := base + int(dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return &MessageError{Line: lines.line(at), Reason: fmt.Sprintf(`"operations" must be an array of operations, not %s`, tokenKind(tok))}
	}
	for dec.More() {
		if len(m.ops) == MaxOperations {
			return &MessageError{Line: lines.line(at), Reason: fmt.Sprintf("the message has more than %d operations; send at most %d at a time", MaxOperations, MaxOperations)}
		}
		// The element starts after the separator the decoder stopped at.
		start := int(dec.InputOffset())
		start += len(data[start:]) - len(bytes.TrimLeft(data[start:], " \t\r\n,"))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		op := rawOp{offset: base + start, notObject: valueKind(raw)}
		if op.notObject == "an object" {
			op.notObject = ""
			_ = json.Unmarshal(raw, &op.fields)
		}
		m.ops = append(m.ops, op)
	}
	_, err = dec.Token()
	return err
}

// checkVersion checks protocolVersion is "1.0"; a chat reply (not strict)
// may leave it out.
func (m *message) checkVersion(strict bool) error {
	if m.version == nil {
		if strict {
			return &MessageError{Line: m.line, Reason: `the message has no "protocolVersion"; courier speaks protocol version "1.0"`}
		}
		return nil
	}
	var v string
	if json.Unmarshal(m.version, &v) != nil || v != ProtocolVersion {
		return &MessageError{Line: m.line, Reason: fmt.Sprintf(`"protocolVersion" is %s; courier speaks protocol version "1.0" only`, human.Cut(string(m.version), 40))}
	}
	return nil
}

// syntaxError turns a JSON decoding error of data, at byte base of the
// input, into a MessageError saying where it stops being JSON: checked
// afresh, as the decoder's offsets skip whitespace.
func syntaxError(err error, data []byte, base int, lines *lineIndex) error {
	off := base + len(data)
	msg := "the JSON ends before the message is complete (was it cut off?)"
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(data, &struct{}{}), &se) && se.Error() != "unexpected end of JSON input" {
		off = base + max(int(se.Offset)-1, 0) // Offset counts the wrong byte
		msg = se.Error()
	} else if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		msg = err.Error()
	}
	reason := "not valid JSON at " + lines.where(off) + ": " + msg
	if strings.Contains(msg, "in string literal") {
		reason += `; inside a string, write a line break as \n, a tab as \t and a quote as \"`
	}
	return &MessageError{Line: lines.line(off), Reason: reason}
}

func tokenKind(tok json.Token) string {
	if d, ok := tok.(json.Delim); ok {
		return valueKind([]byte{byte(d)})
	}
	b, _ := json.Marshal(tok)
	return valueKind(b)
}

// positiveInt reads a JSON number or numeric string as a positive int, or 0.
func positiveInt(raw json.RawMessage) int {
	i, err := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
	if err != nil || i <= 0 || i > 1<<31 {
		return 0
	}
	return int(i)
}

// lineIndex turns byte offsets into lines and columns, counting on from
// the last offset asked, as they mostly increase.
type lineIndex struct {
	text    string
	pos, ln int // the last offset asked and its 1-based line
}

func newLineIndex(text string) *lineIndex { return &lineIndex{text: text, ln: 1} }

func (x *lineIndex) line(off int) int {
	off = min(max(off, 0), len(x.text))
	if off < x.pos {
		x.pos, x.ln = 0, 1
	}
	x.ln += strings.Count(x.text[x.pos:off], "\n")
	x.pos = off
	return x.ln
}

// where is "line L, column C", C counted in characters.
func (x *lineIndex) where(off int) string {
	ln := x.line(off)
	start := strings.LastIndexByte(x.text[:x.pos], '\n') + 1
	return fmt.Sprintf("line %d, column %d", ln, utf8.RuneCountInString(x.text[start:x.pos])+1)
}

// Decision answers an approvalRequired event.
type Decision string

const (
	Approved Decision = "approved"
	Denied   Decision = "denied"
)

// Approval is the answer to a paused run.
type Approval struct {
	OperationID string   `json:"operationId,omitempty"` // "" from a userMessage: whatever is waiting
	Decision    Decision `json:"decision"`
	Reason      string   `json:"reason,omitempty"`
}

// DecodeApproval reads the answer to a paused run in either of the
// protocol's forms, comments and trailing commas allowed (its own example
// has one):
//
//	{"approval": {"operationId": "shell-1", "decision": "approved", "reason": "..."}}
//	{"type": "userMessage", "content": "approved"}
//
// the latter maybe in an events list, its content "approved" or "denied"
// in any case.
func DecodeApproval(data []byte) (Approval, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !json.Valid(data) {
		if strict, ok := relaxed(data); ok {
			data = strict
		}
	}
	var msg struct {
		Approval *struct {
			OperationID string  `json:"operationId"`
			Decision    *string `json:"decision"`
			Reason      string  `json:"reason"`
		} `json:"approval"`
		Type    string  `json:"type"`
		Content *string `json:"content"`
		Events  []struct {
			Type    string  `json:"type"`
			Content *string `json:"content"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return Approval{}, fmt.Errorf("the approval is not a JSON object: %w", err)
	}
	if a := msg.Approval; a != nil {
		if a.OperationID == "" {
			return Approval{}, fmt.Errorf(`the approval has no "operationId"`)
		}
		if a.Decision == nil {
			return Approval{}, fmt.Errorf(`the approval has no "decision"; it must be "approved" or "denied"`)
		}
		d, err := decision(*a.Decision, true)
		return Approval{OperationID: a.OperationID, Decision: d, Reason: a.Reason}, err
	}
	typ, content := msg.Type, msg.Content
	if len(msg.Events) == 1 {
		typ, content = msg.Events[0].Type, msg.Events[0].Content
	}
	if typ != string(EventUserMessage) || content == nil {
		return Approval{}, fmt.Errorf(`expected {"approval": {"operationId": ..., "decision": "approved" | "denied"}} or a userMessage saying "approved" or "denied"`)
	}
	d, err := decision(*content, false)
	if err != nil {
		return Approval{}, err
	}
	return Approval{Decision: d}, nil
}

// decision reads a decision; exact is the structured form.
func decision(s string, exact bool) (Decision, error) {
	if !exact {
		s = strings.ToLower(strings.TrimSpace(s))
	}
	switch d := Decision(s); d {
	case Approved, Denied:
		return d, nil
	}
	return "", fmt.Errorf(`the decision must be "approved" or "denied", not %q`, human.Cut(s, 40))
}
