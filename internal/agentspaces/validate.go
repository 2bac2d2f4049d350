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
	f := op.fields
	if f == nil {
		return "", c, fmt.Errorf("an operation must be a JSON object, not %s", op.notObject)
	}
	var err error
	if c.ID, _, err = f.str("id", false); err != nil {
		return "", c, err
	}
	s, _, err := f.str("type", true)
	if err != nil {
		return "", c, err
	}
	typ := OpType(s)
	i := slices.Index(opTypes(), typ)
	if i < 0 {
		return "", c, fmt.Errorf(`"type" must be one of %s; got %q`, typeList(), human.Cut(s, 40))
	}
	c.Type = commandTypes()[i]
	switch typ {
	case OpMessage:
		err = f.message(&c)
	case OpCreateFile:
		err = f.createFile(&c)
	case OpReadFile:
		c.Inline = true
		if c.Path, err = f.path("path", true); err == nil {
			err = f.encoding(&c)
		}
	case OpEditFile:
		c.Literal = true
		err = f.editFile(&c)
	case OpDeleteFile:
		c.Path, err = f.path("path", true)
	case OpShell:
		c.SplitOutput = true
		err = f.shell(&c)
	}
	return typ, c, err
}

func (f fields) message(c *command.Command) error {
	s, _, err := f.str("content", true)
	if err != nil {
		return err
	}
	if n := chars(s); n > MaxMessageChars {
		return fmt.Errorf(`"content" is %d characters long; a message may have at most %d`, n, MaxMessageChars)
	}
	c.Text = s
	return nil
}

func (f fields) createFile(c *command.Command) error {
	var err error
	if c.Path, err = f.path("path", true); err != nil {
		return err
	}
	if err = f.encoding(c); err != nil {
		return err
	}
	if c.Content, _, err = f.str("content", true); err != nil {
		return err
	}
	if c.Encoding == command.Base64 {
		canon, n, err := canonicalBase64(c.Content)
		if err != nil {
			return fmt.Errorf(`"content" is not valid base64: %v`, err)
		}
		if n > MaxContentBytes {
			return fmt.Errorf(`"content" decodes to %d bytes; a file may have at most %d (10 MB)`, n, MaxContentBytes)
		}
		c.Content = canon
	} else if len(c.Content) > MaxContentBytes {
		return fmt.Errorf(`"content" is %d bytes; a file may have at most %d (10 MB)`, len(c.Content), MaxContentBytes)
	}
	overwrite, err := f.boolean("overwrite")
	c.NoOverwrite = !overwrite
	return err
}

func (f fields) editFile(c *command.Command) error {
	var err error
	if c.Path, err = f.path("path", true); err != nil {
		return err
	}
	raw, ok := f["edits"]
	if !ok || isNull(raw) {
		return fmt.Errorf(`"edits" is required: a list of {"oldContent": ..., "newContent": ...}`)
	}
	var items []json.RawMessage
	if valueKind(raw) != "an array" || json.Unmarshal(raw, &items) != nil {
		return fmt.Errorf(`"edits" must be an array, not %s`, valueKind(raw))
	}
	if len(items) == 0 {
		return fmt.Errorf(`"edits" is empty; send at least one {"oldContent": ..., "newContent": ...}`)
	}
	c.Edits = make([]command.Edit, len(items))
	for i, item := range items {
		var e fields
		if json.Unmarshal(item, &e) != nil || e == nil {
			return fmt.Errorf("edits[%d] must be an object, not %s", i, valueKind(item))
		}
		old, _, err := e.str("oldContent", true)
		if err != nil {
			return fmt.Errorf("edits[%d]: %w", i, err)
		}
		repl, _, err := e.str("newContent", true)
		if err != nil {
			return fmt.Errorf("edits[%d]: %w", i, err)
		}
		if old == "" {
			return fmt.Errorf(`edits[%d]: "oldContent" is empty; copy the exact text to replace from the file`, i)
		}
		if len(old) > MaxContentBytes || len(repl) > MaxContentBytes {
			return fmt.Errorf("edits[%d] is larger than %d bytes (10 MB)", i, MaxContentBytes)
		}
		c.Edits[i] = command.Edit{Search: old, Replace: repl}
	}
	return nil
}

func (f fields) shell(c *command.Command) error {
	s, _, err := f.str("command", true)
	if err != nil {
		return err
	}
	switch n := chars(s); {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf(`"command" is empty`)
	case n > MaxCommandChars:
		return fmt.Errorf(`"command" is %d characters long; the limit is %d`, n, MaxCommandChars)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf(`"command" contains a NUL character`)
	}
	c.Command = s
	if c.Dir, err = f.path("cwd", false); err != nil {
		return err
	}
	if c.Timeout, err = f.timeout(); err != nil {
		return err
	}
	c.Env, err = f.env()
	return err
}

// str reads a string member; an absent or null optional one is "".
func (f fields) str(key string, required bool) (string, bool, error) {
	raw, ok := f[key]
	if !ok || (!required && isNull(raw)) {
		if required {
			return "", false, fmt.Errorf("%q is required", key)
		}
		return "", false, nil
	}
	if valueKind(raw) != "a string" {
		return "", false, fmt.Errorf("%q must be a string, not %s", key, valueKind(raw))
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s, true, nil
}

func (f fields) boolean(key string) (bool, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, fmt.Errorf("%q must be true or false, not %s", key, valueKind(raw))
	}
	return b, nil
}

func (f fields) encoding(c *command.Command) error {
	s, ok, err := f.str("encoding", false)
	if err != nil || !ok {
		return err
	}
	switch Encoding(s) {
	case Base64:
		c.Encoding = command.Base64
	case UTF8:
	default:
		return fmt.Errorf(`"encoding" must be "utf-8" or "base64"; got %q`, human.Cut(s, 40))
	}
	return nil
}

// path reads and checks a path member; an optional one (cwd) may be
// absent or "".
func (f fields) path(key string, required bool) (string, error) {
	p, ok, err := f.str(key, required)
	if err != nil || (!required && (!ok || p == "")) {
		return p, err
	}
	if err := checkPath(p); err != nil {
		return p, fmt.Errorf("%s %q %v", key, human.Cut(p, 60), err)
	}
	return p, nil
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

func (f fields) timeout() (command.Duration, error) {
	raw, ok := f["timeout"]
	if !ok || isNull(raw) {
		return 0, nil
	}
	bad := fmt.Errorf(`"timeout" must be an integer number of milliseconds from %d to %d; got %s`, MinTimeoutMS, MaxTimeoutMS, human.Cut(string(raw), 40))
	if valueKind(raw) != "a number" {
		return 0, bad
	}
	v, err := json.Number(raw).Float64()
	if err != nil || v != math.Trunc(v) || v < MinTimeoutMS || v > MaxTimeoutMS {
		return 0, bad
	}
	return command.Duration(time.Duration(v) * time.Millisecond), nil
}

func (f fields) env() (map[string]string, error) {
	raw, ok := f["env"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var m fields
	if valueKind(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf(`"env" must be an object of strings, not %s`, valueKind(raw))
	}
	env := make(map[string]string, len(m))
	for k := range m {
		v, _, err := m.str(k, true)
		if err != nil {
			return nil, fmt.Errorf(`"env": %w`, err)
		}
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			return nil, fmt.Errorf(`"env" has the invalid variable name %q`, human.Cut(k, 40))
		case strings.HasPrefix(strings.ToUpper(k), reservedEnvPrefix):
			return nil, fmt.Errorf(`"env" may not set %s: names starting with %s are courier's own`, human.Cut(k, 40), reservedEnvPrefix)
		case strings.IndexByte(v, 0) >= 0:
			return nil, fmt.Errorf(`"env" value of %s contains a NUL character`, human.Cut(k, 40))
		}
		env[k] = v
	}
	return env, nil
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
