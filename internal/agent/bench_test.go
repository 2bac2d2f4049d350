package agent

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkStreamedReply measures the openai backend reading a 64KB reply
// streamed in 16-character chunks (as a model writes it) into a run's
// reply: SSE lines, JSON chunks, redaction, the meter. The stream is read
// from memory, so the figure is courier's own cost, not the network's.
func BenchmarkStreamedReply(b *testing.B) {
	reply := strings.Repeat("fmt.Println(\"hello, world\") // a line of code\n", 64<<10/45)
	var sse strings.Builder
	for i := 0; i < len(reply); i += 16 {
		sse.WriteString("data: " + chunkJSONForBench(reply[i:min(i+16, len(reply))]) + "\n\n")
	}
	sse.WriteString("data: [DONE]\n\n")
	stream := sse.String()
	o := &backend{Spec: Spec{MaxReply: DefaultMaxReply}}
	secrets := []string{"sk-proj-0123456789abcdef", "sk-ant-0123456789abcdef"}
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		red := newRedactor(io.Discard, secrets)
		a := &attempt{o: o, rep: &reporter{}, out: &meter{w: red, limit: o.MaxReply}}
		wd := newWatchdog(time.Hour, time.Hour, func(error) {})
		if err := a.readStream(strings.NewReader(stream), wd); err != nil {
			b.Fatal(err)
		}
		wd.timer.Stop()
		red.Close()
	}
}

// chunkJSONForBench is one streamed chunk as OpenAI writes it.
func chunkJSONForBench(text string) string {
	data, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}, "finish_reason": nil}},
	})
	return string(data)
}

// BenchmarkRedactor measures the cost of keeping keys out of an agent's
// output: 1MB written in 4KB pieces past three keys.
func BenchmarkRedactor(b *testing.B) {
	chunk := []byte(strings.Repeat("some agent output without any key in it, as usual\n", 4096/51))
	secrets := []string{"sk-proj-0123456789abcdef", "sk-ant-0123456789abcdef", "AIzaSy0123456789abcdef"}
	b.SetBytes(int64(len(chunk)) * 256)
	b.ReportAllocs()
	for b.Loop() {
		r := newRedactor(io.Discard, secrets)
		for range 256 {
			r.Write(chunk)
		}
		r.Close()
	}
}
