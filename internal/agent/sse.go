package agent

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/courier-agent/courier/internal/human"
	"io"
	"strings"
)

// maxSSELine caps one line of a stream: an endless line must not exhaust
// memory.
const maxSSELine = 4 << 20

// chunk is one JSON object of a chat-completions response: a streamed
// delta, a whole completion, or an error in OpenAI's shape ({"error":
// {"message": ...}}), vLLM's ({"object": "error", "message": ...}) or
// ollama's ({"error": "text"}).
type chunk struct {
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Delta struct {
			Content messageText `json:"content"`
		} `json:"delta"`
		Message struct {
			Content messageText `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// errorText returns the error a chunk carries, or "".
func (c *chunk) errorText() string {
	var obj struct {
		Message string `json:"message"`
	}
	switch {
	case c.Object == "error":
		return cmp.Or(c.Message, "error")
	case len(c.Error) == 0 || string(c.Error) == "null":
		return ""
	case c.Error[0] == '"':
		var s string
		json.Unmarshal(c.Error, &s)
		return s
	case json.Unmarshal(c.Error, &obj) == nil && obj.Message != "":
		return obj.Message
	}
	return string(c.Error)
}

// messageText is a message's content: a string, null, or a list of parts
// of which the text ones count.
type messageText string

func (m *messageText) UnmarshalJSON(raw []byte) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*m = messageText(s)
		return nil
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts) // else a shape without text
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			*m += messageText(p.Text)
		}
	}
	return nil
}

// sseReader reads the data of server-sent events, skipping comments
// (keep-alives) and other fields.
type sseReader struct{ s *bufio.Scanner }

func newSSEReader(r io.Reader) *sseReader {
	s := bufio.NewScanner(r)
	s.Buffer(nil, maxSSELine)
	return &sseReader{s}
}

// next returns the data of the next event; io.EOF after the last.
func (r *sseReader) next() (string, error) {
	var data []string
	for r.s.Scan() {
		line := r.s.Text()
		if line == "" && len(data) > 0 {
			return strings.Join(data, "\n"), nil
		}
		if field, value, _ := strings.Cut(line, ":"); field == "data" {
			data = append(data, strings.TrimPrefix(value, " "))
		}
	}
	switch err := r.s.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return "", fmt.Errorf("a line of the stream is longer than %s", human.ExactBytes(maxSSELine))
	case err != nil:
		return "", err
	case len(data) > 0:
		return strings.Join(data, "\n"), nil
	}
	return "", io.EOF
}
