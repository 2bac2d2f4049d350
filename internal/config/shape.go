package config

import "fmt"

// Bounds on a settings file, far above what any courier.toml needs: the
// TOML parser's time grows much faster than the file on deeply dotted or
// nested keys (20,000 dotted parts took minutes).
const (
	maxFileSize = 1 << 20 // bytes
	maxKeyParts = 8       // parts of one dotted key or table name
	maxNesting  = 16      // arrays and inline tables inside each other
	maxKeys     = 1000    // keys and table headers
	maxItems    = 10000   // items of all arrays and inline tables together
)

// checkShape refuses a settings file beyond the bounds, naming the line
// and the bound, in one pass over the text.
func checkShape(name, data string) error {
	s := shapeScan{name: name, data: data, line: 1, atKey: true}
	return s.run()
}

// shapeScan knows just enough TOML to tell keys from values: strings,
// comments, table headers, arrays and inline tables.
type shapeScan struct {
	name  string
	data  string
	i     int
	line  int
	stack []byte // open '[' and '{'
	atKey bool   // at the start of a line, or after '{' or ',' in an inline table
	parts int    // dotted parts of the key being read
	keys  int
	items int // commas in arrays and inline tables
}

func (s *shapeScan) run() error {
	lineStart := true
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\n':
			s.line++
			if len(s.stack) == 0 {
				s.atKey, s.parts = true, 0
			}
			lineStart = true
			s.i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
			continue
		case c == '#':
			s.skipComment()
			continue
		case c == '"' || c == '\'':
			s.skipString()
		case lineStart && c == '[' && len(s.stack) == 0:
			if err := s.header(); err != nil {
				return err
			}
		case s.atKey && c == '.':
			s.parts++
			if err := s.checkParts(); err != nil {
				return err
			}
			s.i++
		case s.atKey && c == '=':
			if err := s.endKey(); err != nil {
				return err
			}
			s.i++
		case c == '[' || c == '{':
			s.stack = append(s.stack, c)
			if len(s.stack) > maxNesting {
				return s.errorf("values nested more than %d deep", maxNesting)
			}
			if c == '{' {
				s.atKey, s.parts = true, 0
			}
			s.i++
		case c == ']' || c == '}':
			if len(s.stack) > 0 {
				s.stack = s.stack[:len(s.stack)-1]
			}
			s.i++
		case c == ',' && len(s.stack) > 0:
			s.items++
			if s.items > maxItems {
				return s.errorf("more than %d items in lists", maxItems)
			}
			if s.stack[len(s.stack)-1] == '{' {
				s.atKey, s.parts = true, 0
			}
			s.i++
		default:
			s.i++
		}
		lineStart = false
	}
	return nil
}

func (s *shapeScan) header() error {
	s.parts = 0
	for s.i++; s.i < len(s.data) && s.data[s.i] != '\n'; {
		switch c := s.data[s.i]; c {
		case '"', '\'':
			s.skipString()
		case '.':
			s.parts++
			if err := s.checkParts(); err != nil {
				return err
			}
			s.i++
		case ']':
			s.i++
			if s.i < len(s.data) && s.data[s.i] == ']' {
				s.i++
			}
			s.atKey = false // the rest of the line is a comment or nothing
			return s.endKey()
		default:
			s.i++
		}
	}
	return nil
}

func (s *shapeScan) checkParts() error {
	if s.parts+1 > maxKeyParts {
		return s.errorf("a key of more than %d dotted parts", maxKeyParts)
	}
	return nil
}

func (s *shapeScan) endKey() error {
	s.keys++
	s.atKey, s.parts = false, 0
	if s.keys > maxKeys {
		return s.errorf("more than %d keys", maxKeys)
	}
	return nil
}

func (s *shapeScan) skipComment() {
	for s.i < len(s.data) && s.data[s.i] != '\n' {
		s.i++
	}
}

func (s *shapeScan) skipString() {
	q := s.data[s.i]
	triple := s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q
	if triple {
		s.i += 3
	} else {
		s.i++
	}
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\\' && q == '"':
			s.i += 2
			continue
		case c == '\n':
			if !triple {
				return // an unclosed string; the parser reports it
			}
			s.line++
		case c == q && !triple:
			s.i++
			return
		case c == q && s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q:
			s.i += 3
			// Up to two more quotes belong to the string.
			for n := 0; n < 2 && s.i < len(s.data) && s.data[s.i] == q; n++ {
				s.i++
			}
			return
		}
		s.i++
	}
}

func (s *shapeScan) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s; a settings file may have at most %d dotted parts per key, %d levels of nesting, %d keys and %d items in lists",
		FileSource(s.name, s.line), fmt.Sprintf(format, args...), maxKeyParts, maxNesting, maxKeys, maxItems)
}
