package agentspaces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
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
	m := message{line: lines.line(base)}
	err := m.read(data, base, lines, strict)
	if _, ok := err.(*MessageError); err != nil && !ok {
		err = syntaxError(err, data, base, lines)
	}
	return m, err
}

func (m *message) read(data []byte, base int, lines *lineIndex, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &MessageError{Line: m.line, Reason: fmt.Sprintf("the operations message must be a JSON object, not %s", tokenKind(tok))}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if key == "operations" {
			if m.hasOps {
				return &MessageError{Line: lines.line(base + int(dec.InputOffset())), Reason: `"operations" appears twice in the message; send one array`}
			}
			m.hasOps = true
			if err := m.readOps(dec, data, base, lines); err != nil {
				return err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
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
		return err
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); strict && len(rest) > 0 {
		off := base + len(data) - len(rest)
		return &MessageError{Line: lines.line(off), Reason: fmt.Sprintf("unexpected data after the operations message at %s; send exactly one JSON object", lines.where(off))}
	}
	return nil
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
		userMessage
		Events []userMessage `json:"events"`
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
	u := msg.userMessage
	if len(msg.Events) == 1 {
		u = msg.Events[0]
	}
	if u.Type != string(EventUserMessage) || u.Content == nil {
		return Approval{}, fmt.Errorf(`expected {"approval": {"operationId": ..., "decision": "approved" | "denied"}} or a userMessage saying "approved" or "denied"`)
	}
	d, err := decision(*u.Content, false)
	return Approval{Decision: d}, err
}

type userMessage struct {
	Type    string  `json:"type"`
	Content *string `json:"content"`
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
func ParseReply(text string) frontend.Parsed {
	if len(text) > MaxMessageBytes {
		return frontend.Parsed{Commands: []command.Command{{Type: command.ParseError,
			Error: fmt.Sprintf("your reply is larger than %d MiB, so nothing was done; send smaller steps", MaxMessageBytes>>20)}}}
	}
	s := scan(text)
	lines := newLineIndex(text)
	var r frontend.Parsed
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
		r := &reader{}
		if json.Unmarshal(s.json(p), &r.f) != nil {
			continue
		}
		if t := r.str("type", true); r.err == nil && slices.Contains(opTypes(), OpType(t)) {
			return fmt.Sprintf(`. The %s operation at line %d is not inside an operations message: put operations in the "operations" array`, t, lines.line(p.start))
		}
	}
	return ""
}

// markFinal makes the last message of a reply of messages only a
// command.Done, the protocol's final response.
func markFinal(cmds []command.Command) {
	if len(cmds) > 0 && !slices.ContainsFunc(cmds, func(c command.Command) bool { return c.Type != command.Message }) {
		cmds[len(cmds)-1].Type = command.Done
	}
}

// maxDepth is how deeply JSON may nest, the limit of Go's decoder.
const maxDepth = 10000

// piece is a balanced JSON object the scanner found, or an operations
// message that never closed.
type piece struct {
	start, end int  // byte offsets; end exclusive
	broken     bool // an object holding "operations" that ends unbalanced: cut off, or brackets that do not match
	hasOps     bool // a string "operations" among its own members: a message
	hasType    bool // the same for "type": a lone operation
}

// frame is one open bracket.
type frame struct {
	open            byte // '{' or '['
	start           int
	kept            int // len(scanner.kept) when the bracket opened
	hasOps, hasType bool
}

// scanner finds JSON objects in chat text in one pass, linear in its size
// whatever it holds: prose is skipped with a byte search, and inside an
// object only strings, comments and brackets matter. Comments and trailing
// commas become spaces in buf, every offset kept, for a JSON decoder.
type scanner struct {
	text   string
	buf    []byte
	pieces []piece
	stack  []frame
	// kept are the closed objects holding "operations" inside the object
	// being scanned, outermost only: what remains if it turns out broken
	// (prose with a stray "{" around a fenced message).
	kept []piece
}

func scan(text string) *scanner {
	s := &scanner{text: text}
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		if !objectStart(text, start+1) {
			i = start + 1
			continue
		}
		i = s.object(start)
	}
	return s
}

// objectStart reports whether the text after a "{" at i-1 can begin a
// JSON object, unlike code's "if x {".
func objectStart(text string, i int) bool {
	rest := strings.TrimLeft(text[i:], " \t\r\n")
	return rest != "" && strings.IndexByte(`"}/`, rest[0]) >= 0
}

// object scans the object opening at start and returns where to go on.
func (s *scanner) object(start int) int {
	text := s.text
	s.stack = s.stack[:0]
	s.kept = s.kept[:0]
	lastSig := -1 // the last byte that is not space or comment
	for i := start; i < len(text); i++ {
		c := text[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			end := stringEnd(text, i+1)
			s.noteString(text[i+1 : min(end, len(text))])
			lastSig = end
			i = end
			continue
		case '/':
			if end, ok := s.comment(i); ok {
				i = end - 1
				continue
			}
		case '{', '[':
			if len(s.stack) == maxDepth {
				return s.broken(i)
			}
			s.stack = append(s.stack, frame{open: c, start: i, kept: len(s.kept)})
		case '}', ']':
			top := len(s.stack) - 1
			if (c == '}') != (s.stack[top].open == '{') {
				return s.broken(i)
			}
			if lastSig >= 0 && text[lastSig] == ',' {
				s.blank(lastSig)
			}
			f := s.stack[top]
			s.stack = s.stack[:top]
			if top == 0 {
				s.pieces = append(s.pieces, piece{start: start, end: i + 1, hasOps: f.hasOps, hasType: f.hasType})
				return i + 1
			}
			if c == '}' {
				// A closed object replaces what it holds.
				s.kept = s.kept[:f.kept]
				if f.hasOps {
					s.kept = append(s.kept, piece{start: f.start, end: i + 1, hasOps: true})
				}
			}
		}
		lastSig = i
	}
	return s.broken(len(text))
}

// stringEnd returns the offset of the quote closing a JSON string whose
// content starts at i, or of a raw line break, so that a missing quote
// spoils only its line.
func stringEnd(text string, i int) int {
	for i < len(text) {
		j := strings.IndexAny(text[i:], "\"\\\n")
		if j < 0 {
			return len(text)
		}
		i += j
		if text[i] != '\\' {
			return i
		}
		i += 2
	}
	return len(text)
}

// noteString marks the innermost open object when a string of it is
// "operations" or "type".
func (s *scanner) noteString(str string) {
	top := len(s.stack) - 1
	if top < 0 || s.stack[top].open != '{' {
		return
	}
	switch str {
	case "operations":
		s.stack[top].hasOps = true
	case "type":
		s.stack[top].hasType = true
	}
}

// comment blanks a // or /* */ comment starting at i and returns its end;
// ok is false when the "/" starts no comment.
func (s *scanner) comment(i int) (int, bool) {
	text := s.text
	if i+1 >= len(text) {
		return 0, false
	}
	var end int
	switch text[i+1] {
	case '/':
		end = len(text)
		if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
			end = i + j
		}
	case '*':
		end = len(text)
		if j := strings.Index(text[i+2:], "*/"); j >= 0 {
			end = i + 2 + j + 2
		}
	default:
		return 0, false
	}
	for j := i; j < end; j++ {
		if text[j] != '\n' {
			s.blank(j)
		}
	}
	return end, true
}

// broken ends an object that went wrong at offset at (a bracket that does
// not match, too deep, the end): the outermost open object holding
// "operations" is a broken message; complete ones before it still count.
func (s *scanner) broken(at int) int {
	cut := len(s.text) + 1
	for _, f := range s.stack {
		if f.open == '{' && f.hasOps {
			cut = f.start
			break
		}
	}
	for _, k := range s.kept {
		if k.start < cut {
			s.pieces = append(s.pieces, k)
		}
	}
	if cut <= len(s.text) {
		s.pieces = append(s.pieces, piece{start: cut, end: min(at+1, len(s.text)), broken: true, hasOps: true})
	}
	return at + 1
}

// blank makes byte j of buf a space, buf copied from the text on the
// first change: most replies need none, and a copy of a large one is not
// made for nothing.
func (s *scanner) blank(j int) {
	if s.buf == nil {
		s.buf = []byte(s.text)
	}
	s.buf[j] = ' '
}

// json returns the piece's text, comments and trailing commas blanked.
func (s *scanner) json(p piece) []byte {
	if s.buf == nil {
		return []byte(s.text[p.start:p.end])
	}
	return s.buf[p.start:p.end:p.end]
}

// relaxed reads data as one JSON object with comments and trailing commas,
// as people write it, and returns it as strict JSON; ok is false when data
// is not one such object.
func relaxed(data []byte) ([]byte, bool) {
	text := string(data)
	first := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
	last := len(strings.TrimRight(text, " \t\r\n"))
	s := scan(text)
	for _, p := range s.pieces {
		if p.start == first && p.end == last && !p.broken {
			return s.json(p), true
		}
	}
	return nil, false
}
