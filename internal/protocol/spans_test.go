package protocol

import "github.com/courier-agent/courier/internal/frontend"

// parseSpans parses text and also returns how its lines divide into prose
// and blocks, for the tests that check every line is accounted for.
func parseSpans(text string) (frontend.Parsed, []span) {
	p := newParser(text, true)
	p.run()
	return p.reply, p.spans
}
