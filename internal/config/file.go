package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/courier-agent/courier/internal/human"
)

// LoadFile applies the settings of a courier.toml file over c. A missing
// file is not an error. Every problem of the file is reported, one a line,
// each starting with the path and line ("courier.toml:7: ..."); when there
// is one, nothing of the file is applied. Sources are the path as given
// and the line.
func (c *Config) LoadFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	if len(data) > maxFileSize {
		return fmt.Errorf("%s is larger than %d MB, the most a settings file may be", path, maxFileSize>>20)
	}
	return c.loadTOML(path, string(data))
}

// fileLoad is one file being applied to a copy of the settings.
type fileLoad struct {
	text *fileText
	raw  map[string]any
	cfg  *Config
}

func (c *Config) loadTOML(name, data string) error {
	if err := checkShape(name, data); err != nil {
		return err
	}
	var raw map[string]any
	md, err := toml.Decode(data, &raw)
	if err != nil {
		return fileSyntaxError(name, err)
	}
	f := &fileLoad{text: &fileText{name: name, data: data}, raw: raw, cfg: c.clone()}
	var errs []error
	var failed []toml.Key
	for _, key := range md.Keys() {
		// Keys inside a wrong one would only repeat its error.
		if slices.ContainsFunc(failed, func(k toml.Key) bool { return isUnder(key, k) }) {
			continue
		}
		if err := f.apply(key); err != nil {
			failed = append(failed, key)
			if len(failed) <= maxFileErrors {
				errs = append(errs, fmt.Errorf("%s: %w", FileSource(name, locate(data, key)), err))
			}
		}
	}
	if more := len(failed) - maxFileErrors; more > 0 {
		errs = append(errs, fmt.Errorf("%s: %s", name, human.Count(more, "more problem", "")))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*c = *f.cfg
	return nil
}

// maxFileErrors caps the problems reported of one file: past a few, the
// file is likely not a courier.toml at all, and each line costs a parse.
const maxFileErrors = 10

// apply sets the setting of one key of the file.
func (f *fileLoad) apply(key toml.Key) error {
	name := key.String()
	val := lookup(f.raw, key)
	if isTable(name) {
		if _, ok := val.(map[string]any); !ok {
			return fmt.Errorf("%s: %w", name, wantError("a table like ["+name+"]", describe(val)))
		}
		return nil
	}
	s, err := find(name)
	if err != nil {
		return err
	}
	if err := s.bind(f.cfg).decode(val); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f.cfg.sources[s.key] = origin{file: f.text, key: key}
	return nil
}

// isUnder reports whether key lies inside parent.
func isUnder(key, parent toml.Key) bool {
	return len(key) > len(parent) && slices.Equal(key[:len(parent)], parent)
}

// lookup returns the decoded value of key.
func lookup(raw map[string]any, key toml.Key) any {
	var v any = raw
	for _, part := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// syntaxError is a file TOML cannot read, with its place.
type syntaxError struct {
	where string
	err   toml.ParseError
}

func (e *syntaxError) Error() string {
	msg := strings.TrimSuffix(e.err.Message, ".")
	if len(msg) > 1 && msg[1] >= 'a' && msg[1] <= 'z' {
		// TOML's messages sometimes start a sentence; courier's are
		// lowercase throughout.
		msg = strings.ToLower(msg[:1]) + msg[1:]
	}
	return e.where + ": " + msg
}

func (e *syntaxError) Unwrap() error { return e.err }

func fileSyntaxError(name string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	where := name
	if p := pe.Position; p.Line > 0 {
		where = fmt.Sprintf("%s:%d", name, p.Line)
		if p.Col > 0 {
			where += fmt.Sprintf(":%d", p.Col)
		}
	}
	return &syntaxError{where: where, err: pe}
}
