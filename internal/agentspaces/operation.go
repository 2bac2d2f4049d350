package agentspaces

import (
	"bytes"
	"encoding/json"
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

// objectWriter builds a JSON object with its keys in order.
type objectWriter struct {
	data []byte
	err  error
}

func (w *objectWriter) field(key string, v any) {
	if w.err != nil {
		return
	}
	if len(w.data) == 0 {
		w.data = append(w.data, '{')
	} else {
		w.data = append(w.data, ',')
	}
	k, _ := marshal(key)
	w.data = append(w.data, k...)
	w.data = append(w.data, ':')
	val, err := marshal(v)
	if err != nil {
		w.err = err
		return
	}
	w.data = append(w.data, val...)
}

func (w *objectWriter) close() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.data) == 0 {
		return []byte("{}"), nil
	}
	return append(w.data, '}'), nil
}
