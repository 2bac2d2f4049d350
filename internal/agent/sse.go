package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/courier-agent/courier/internal/human"
	"io"
	"strings"
)

// maxSSELine caps one line of a stream: a chunk of a chat completion is a
// few hundred bytes, and a server sending an endless line must not
// exhaust memory.
const maxSSELine = 4 << 20

// chunk is one JSON object of a chat-completions response: a streamed
// delta, a whole completion, or an error. Both OpenAI's error shape
// ({"error": {"message": ...}}) and vLLM's ({"object": "error",
// "message": ...}) are read; ollama sends {"error": "text"}.
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

// errorText returns the error a chunk carries, or "" when it carries none.
func (c *chunk) errorText() string {
	if c.Object == "error" {
		if c.Message != "" {
			return c.Message
		}
		return "error"
	}
	if len(c.Error) == 0 || string(c.Error) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(c.Error, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(c.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(c.Error)
}

// messageText is a message's content: a string, null, or a list of parts
// of which the text ones count.
type messageText string

func (m *messageText) UnmarshalJSON(raw []byte) error {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*m = messageText(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		*m = messageText(b.String())
	}
	return nil // null, or a shape without text
}

// sseReader reads the data of server-sent events: data lines of an event
// are joined with new lines, comment lines (":") and other fields are
// skipped, a blank line ends the event.
type sseReader struct {
	r    *bufio.Reader
	data []string
	done bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// errEndOfStream is the end of the body.
var errEndOfStream = errors.New("end of stream")

// next returns the data of the next event; io.EOF-like errEndOfStream at
// the end of the body.
func (s *sseReader) next() (string, error) {
	for {
		if s.done {
			return "", errEndOfStream
		}
		line, err := s.readLine()
		if errors.Is(err, io.EOF) {
			s.done = true
			if len(s.data) > 0 {
				return s.flush(), nil
			}
			return "", errEndOfStream
		}
		if err != nil {
			return "", err
		}
		if line == "" {
			if len(s.data) > 0 {
				return s.flush(), nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: servers send them to keep the connection alive
		}
		field, value, _ := strings.Cut(line, ":")
		if field != "data" {
			continue // event, id, retry: nothing courier needs
		}
		s.data = append(s.data, strings.TrimPrefix(value, " "))
	}
}

func (s *sseReader) flush() string {
	d := strings.Join(s.data, "\n")
	s.data = s.data[:0]
	return d
}

// readLine reads one line without its end (\n, \r\n or \r\n), refusing
// lines longer than maxSSELine.
func (s *sseReader) readLine() (string, error) {
	var buf []byte
	for {
		part, err := s.r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > maxSSELine {
			return "", fmt.Errorf("a line of the stream is longer than %s", human.ExactBytes(maxSSELine))
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(buf) > 0 {
			break
		}
		return "", err
	}
	return string(bytes.TrimRight(buf, "\r\n")), nil
}
