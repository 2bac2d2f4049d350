package agentspaces

import (
	"slices"
	"sort"
	"strings"
)

// maxDepth is how deeply a JSON value in a reply may nest, the limit of
// Go's JSON decoder; deeper input is broken, not a stack to grow.
const maxDepth = 10000

// piece is a part of a reply that the scanner found: a balanced JSON
// object, or an operations message that never closed.
type piece struct {
	start, end int // byte offsets; end exclusive
	// broken marks an object holding "operations" that ends (unbalanced)
	// at end: the reply was cut off or its brackets do not match.
	broken bool
	// hasOps and hasType say whether the object has a string "operations"
	// or "type" among its own members: a message, or a lone operation.
	hasOps, hasType bool
}

// frame is one open bracket.
type frame struct {
	open            byte // '{' or '['
	start           int
	kept            int // len(scanner.kept) when the bracket opened
	hasOps, hasType bool
}

// scanner finds JSON objects in chat text in one pass: prose is skipped
// with a byte search, and inside an object only strings, comments and
// brackets matter. Comments and trailing commas are recorded as blanks, to
// be replaced by spaces (keeping every offset) before the object is read
// as JSON. Each byte is looked at a bounded number of times, so time and
// memory stay linear in the reply's size whatever it holds.
type scanner struct {
	text   string
	pieces []piece
	// blanks are byte ranges to blank, in order; offsets fit in 32 bits
	// (ParseReply reads at most MaxMessageBytes), which halves the memory
	// of a reply full of comments.
	blanks [][2]int32
	stack  []frame
	// kept are the closed objects holding "operations" inside the object
	// being scanned, outermost only: if that object turns out broken
	// (prose with a stray "{" around a fenced message), they are what
	// remains.
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
// JSON object: after spaces, a key, a closing brace or a comment. This
// keeps braces of prose and code ("if x {") from starting an object.
func objectStart(text string, i int) bool {
	for ; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case '"', '}', '/':
			return true
		}
		return false
	}
	return false
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
				s.blankComma(lastSig)
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
// content starts at i. A raw line break also ends it, so a quote missing
// in one line spoils only that line; the JSON decoder then reports it.
func stringEnd(text string, i int) int {
	for i < len(text) {
		j := strings.IndexAny(text[i:], "\"\\\n")
		if j < 0 {
			return len(text)
		}
		i += j
		switch text[i] {
		case '\\':
			i += 2
			continue
		}
		return i
	}
	return len(text)
}

// blankComma records a trailing comma at i as a blank. Comments after it
// were recorded already; it goes before them, so blanks stay in order.
// Each comment is moved at most once, by the one comma it follows.
func (s *scanner) blankComma(i int) {
	k := len(s.blanks)
	for k > 0 && int(s.blanks[k-1][0]) > i {
		k--
	}
	s.blanks = slices.Insert(s.blanks, k, [2]int32{int32(i), int32(i + 1)})
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

// comment records a // or /* */ comment starting at i as a blank and
// returns its end; ok is false when the "/" starts no comment.
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
	s.blanks = append(s.blanks, [2]int32{int32(i), int32(end)})
	return end, true
}

// broken ends an object that went wrong at offset at (a closing bracket
// that does not match, too deep a nesting, or the end of the reply). The
// outermost open object holding "operations" is a broken message; complete
// messages found before it still count. Scanning goes on after at.
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

// json returns the piece's text with comments and trailing commas turned
// into spaces (line breaks stay), ready for a JSON decoder; offsets in it
// are the reply's offsets minus p.start.
func (s *scanner) json(p piece) []byte {
	data := []byte(s.text[p.start:p.end])
	i := sort.Search(len(s.blanks), func(i int) bool { return int(s.blanks[i][1]) > p.start })
	for ; i < len(s.blanks) && int(s.blanks[i][0]) < p.end; i++ {
		from, to := max(int(s.blanks[i][0]), p.start), min(int(s.blanks[i][1]), p.end)
		for j := from; j < to; j++ {
			if data[j-p.start] != '\n' {
				data[j-p.start] = ' '
			}
		}
	}
	return data
}

// relaxed reads data as one JSON object that may hold // and /* */
// comments and trailing commas, as people and chat interfaces write it,
// and returns it as strict JSON (those blanked, every offset kept); ok is
// false when data is not one such object, prose around it included.
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
