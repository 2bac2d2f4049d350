package agentspaces

import (
	"bytes"
	"cmp"
	"encoding/json"

	"github.com/courier-agent/courier/internal/command"
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
