package agentspaces

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
)

// ProtocolVersion is the only version courier speaks, in both directions.
const ProtocolVersion = "1.0"

// OpType names one of the six operations.
type OpType string

// The operation types, in the order the protocol presents them.
const (
	OpMessage    OpType = "message"
	OpCreateFile OpType = "createFile"
	OpReadFile   OpType = "readFile"
	OpEditFile   OpType = "editFile"
	OpDeleteFile OpType = "deleteFile"
	OpShell      OpType = "shell"
)

func opTypes() []OpType {
	return []OpType{OpMessage, OpCreateFile, OpReadFile, OpEditFile, OpDeleteFile, OpShell}
}

// commandTypes are the commands the operations map onto, in their order.
func commandTypes() []command.Type {
	return []command.Type{command.Message, command.CreateFile, command.ReadFile, command.EditFile, command.DeleteFile, command.RunCommand}
}

// Encoding is how file content is carried in a JSON string.
type Encoding string

// The two encodings; an absent encoding means UTF8.
const (
	UTF8   Encoding = "utf-8"
	Base64 Encoding = "base64"
)

// marshal encodes v as JSON without escaping <, > and &, for code and
// output to stay readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// objectWriter builds a JSON object with its keys in order; it has at
// least one.
type objectWriter struct {
	data []byte
	err  error
}

func (w *objectWriter) field(key string, v any) {
	k, _ := marshal(key)
	val, err := marshal(v)
	w.err = cmp.Or(w.err, err)
	w.data = append(append(append(append(w.data, ','), k...), ':'), val...)
}

// add writes the field if show.
func (w *objectWriter) add(show bool, key string, v any) {
	if show {
		w.field(key, v)
	}
}

func (w *objectWriter) close() ([]byte, error) {
	w.data[0] = '{'
	return append(w.data, '}'), w.err
}

// The protocol's validation limits: lengths in characters, sizes in bytes.
const (
	MaxPathChars    = 255
	MaxMessageChars = 100_000
	MaxCommandChars = 4096
	MaxContentBytes = 10 << 20 // createFile's (decoded) content, each edit's texts
	MinTimeoutMS    = 1000
	MaxTimeoutMS    = 3_600_000
)

// reservedEnvPrefix starts the variables courier sets for itself (the tag
// that finds a command's processes after a crash).
const reservedEnvPrefix = "COURIER_"

// addOps appends a command for each operation to cmds, an invalid one a
// command.ParseError numbered across every message of a reply.
func addOps(cmds []command.Command, ops []rawOp, lines *lineIndex) []command.Command {
	for _, op := range ops {
		line := lines.line(op.offset)
		typ, c, err := validate(op)
		if err != nil {
			where := fmt.Sprintf("operation %d", len(cmds)+1)
			if typ != "" {
				where += " (" + string(typ) + ")"
			}
			c = command.Command{Type: command.ParseError, ID: c.ID, Path: c.Path, Error: fmt.Sprintf("%s at line %d: %v", where, line, err)}
		}
		c.Line = line
		cmds = append(cmds, c)
	}
	return cmds
}

type fields map[string]json.RawMessage

// validate checks one operation against the protocol's schema and rules
// and maps it onto a command. On error it still returns the type, id and
// path it read, for the error event to name.
func validate(op rawOp) (OpType, command.Command, error) {
	var c command.Command
	if op.fields == nil {
		return "", c, fmt.Errorf("an operation must be a JSON object, not %s", op.notObject)
	}
	r := &reader{f: op.fields}
	c.ID = r.str("id", false)
	s := r.str("type", true)
	if r.err != nil {
		return "", c, r.err
	}
	typ := OpType(s)
	i := slices.Index(opTypes(), typ)
	if i < 0 {
		return "", c, fmt.Errorf(`"type" must be one of %s; got %q`, typeList(), human.Cut(s, 40))
	}
	c.Type = commandTypes()[i]
	if typ != OpMessage && typ != OpShell {
		c.Path = r.path("path", true)
	}
	switch typ {
	case OpMessage:
		c.Text = r.str("content", true)
		if n := chars(c.Text); n > MaxMessageChars {
			r.fail(`"content" is %d characters long; a message may have at most %d`, n, MaxMessageChars)
		}
	case OpCreateFile:
		c.Encoding = r.encoding()
		c.Content = r.str("content", true)
		if c.Encoding == command.Base64 && r.err == nil {
			canon, n, err := canonicalBase64(c.Content)
			if err != nil {
				r.fail(`"content" is not valid base64: %v`, err)
			} else if n > MaxContentBytes {
				r.fail(`"content" decodes to %d bytes; a file may have at most %d (10 MB)`, n, MaxContentBytes)
			}
			c.Content = canon
		} else if len(c.Content) > MaxContentBytes {
			r.fail(`"content" is %d bytes; a file may have at most %d (10 MB)`, len(c.Content), MaxContentBytes)
		}
		c.NoOverwrite = !r.boolean("overwrite")
	case OpReadFile:
		c.Inline, c.Encoding = true, r.encoding()
	case OpEditFile:
		c.Literal, c.Edits = true, r.edits()
	case OpShell:
		c.SplitOutput, c.Command = true, r.str("command", true)
		switch n := chars(c.Command); {
		case strings.TrimSpace(c.Command) == "":
			r.fail(`"command" is empty`)
		case n > MaxCommandChars:
			r.fail(`"command" is %d characters long; the limit is %d`, n, MaxCommandChars)
		case strings.IndexByte(c.Command, 0) >= 0:
			r.fail(`"command" contains a NUL character`)
		}
		c.Dir = r.path("cwd", false)
		c.Timeout = r.timeout()
		c.Env = r.env()
	}
	return typ, c, r.err
}

// reader reads an operation's members, keeping the first error: once it
// has one, what it reads is zero.
type reader struct {
	f   fields
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// str reads a string member; an absent or null optional one is "".
func (r *reader) str(key string, required bool) string {
	raw, ok := r.f[key]
	var s string
	switch {
	case r.err != nil:
	case !ok && required:
		r.fail("%q is required", key)
	case !ok || (!required && isNull(raw)):
	case valueKind(raw) != "a string":
		r.fail("%q must be a string, not %s", key, valueKind(raw))
	default:
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (r *reader) boolean(key string) bool {
	raw, ok := r.f[key]
	var b bool
	if r.err == nil && ok && !isNull(raw) && json.Unmarshal(raw, &b) != nil {
		r.fail("%q must be true or false, not %s", key, valueKind(raw))
	}
	return b
}

func (r *reader) encoding() string {
	switch s := r.str("encoding", false); Encoding(s) {
	case Base64:
		return command.Base64
	case UTF8, "":
	default:
		r.fail(`"encoding" must be "utf-8" or "base64"; got %q`, human.Cut(s, 40))
	}
	return ""
}

// path reads and checks a path member; an optional one (cwd) may be
// absent or "".
func (r *reader) path(key string, required bool) string {
	p := r.str(key, required)
	if err := checkPath(p); err != nil && (required || p != "") {
		r.fail("%s %q %v", key, human.Cut(p, 60), err)
	}
	return p
}

func (r *reader) edits() []command.Edit {
	raw, ok := r.f["edits"]
	var items []json.RawMessage
	switch {
	case r.err != nil:
		return nil
	case !ok || isNull(raw):
		r.fail(`"edits" is required: a list of {"oldContent": ..., "newContent": ...}`)
	case valueKind(raw) != "an array" || json.Unmarshal(raw, &items) != nil:
		r.fail(`"edits" must be an array, not %s`, valueKind(raw))
	case len(items) == 0:
		r.fail(`"edits" is empty; send at least one {"oldContent": ..., "newContent": ...}`)
	}
	edits := make([]command.Edit, len(items))
	for i, item := range items {
		e := &reader{}
		if json.Unmarshal(item, &e.f) != nil || e.f == nil {
			r.fail("edits[%d] must be an object, not %s", i, valueKind(item))
			break
		}
		old, repl := e.str("oldContent", true), e.str("newContent", true)
		switch {
		case e.err != nil:
			r.fail("edits[%d]: %w", i, e.err)
		case old == "":
			r.fail(`edits[%d]: "oldContent" is empty; copy the exact text to replace from the file`, i)
		case len(old) > MaxContentBytes || len(repl) > MaxContentBytes:
			r.fail("edits[%d] is larger than %d bytes (10 MB)", i, MaxContentBytes)
		}
		edits[i] = command.Edit{Search: old, Replace: repl}
	}
	return edits
}

func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("contains a NUL character")
	}
	if n := chars(p); n > MaxPathChars {
		return fmt.Errorf("is %d characters long; the limit is %d", n, MaxPathChars)
	}
	if p[0] == '/' || p[0] == '\\' {
		return fmt.Errorf(`is absolute; use a path relative to the workspace, without a leading "/"`)
	}
	if strings.Contains(p, "..") {
		// The protocol's isValidPath refuses "notes..txt" too.
		return fmt.Errorf(`contains ".."; the protocol allows ".." nowhere in a path (paths must stay inside the workspace)`)
	}
	return nil
}

func (r *reader) timeout() command.Duration {
	raw, ok := r.f["timeout"]
	if r.err != nil || !ok || isNull(raw) {
		return 0
	}
	v, err := json.Number(raw).Float64()
	if valueKind(raw) != "a number" || err != nil || v != math.Trunc(v) || v < MinTimeoutMS || v > MaxTimeoutMS {
		r.fail(`"timeout" must be an integer number of milliseconds from %d to %d; got %s`, MinTimeoutMS, MaxTimeoutMS, human.Cut(string(raw), 40))
	}
	return command.Duration(time.Duration(v) * time.Millisecond)
}

func (r *reader) env() map[string]string {
	raw, ok := r.f["env"]
	m := &reader{}
	if r.err != nil || !ok || isNull(raw) {
		return nil
	}
	if valueKind(raw) != "an object" || json.Unmarshal(raw, &m.f) != nil {
		r.fail(`"env" must be an object of strings, not %s`, valueKind(raw))
	}
	env := make(map[string]string, len(m.f))
	for k := range m.f {
		v := m.str(k, true)
		switch {
		case m.err != nil:
			r.fail(`"env": %w`, m.err)
		case k == "" || strings.ContainsAny(k, "=\x00"):
			r.fail(`"env" has the invalid variable name %q`, human.Cut(k, 40))
		case strings.HasPrefix(strings.ToUpper(k), reservedEnvPrefix):
			r.fail(`"env" may not set %s: names starting with %s are courier's own`, human.Cut(k, 40), reservedEnvPrefix)
		case strings.IndexByte(v, 0) >= 0:
			r.fail(`"env" value of %s contains a NUL character`, human.Cut(k, 40))
		}
		env[k] = v
	}
	return env
}

// canonicalBase64 decodes standard base64, padded or not, line breaks
// allowed, and returns the padded form the engine decodes, and its size.
func canonicalBase64(s string) (string, int, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err == nil {
		if strings.ContainsAny(s, "\r\n") {
			return base64.StdEncoding.EncodeToString(data), len(data), nil
		}
		return s, len(data), nil
	}
	if raw, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
		return base64.StdEncoding.EncodeToString(raw), len(raw), nil
	}
	return "", 0, err
}

func typeList() string {
	var names []string
	for _, t := range opTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

func chars(s string) int { return utf8.RuneCountInString(s) }

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// valueKind names the kind of a JSON value for error messages.
func valueKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
